"""Finding the JSON a model meant to write, inside whatever else it wrote around it."""

from __future__ import annotations

import json
import re
from typing import Any

FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
DECODER = json.JSONDecoder(strict=False)
"""Raw newlines and tabs inside strings are accepted: models write them in long texts."""


def unfenced(text: str) -> str:
    """The body of the first ``` code fence, or the text itself when there is none."""
    match = FENCE.search(text)
    return match.group(1) if match else text


def first_json(text: str, opening: str = "{[") -> Any:
    """The first JSON value in the text that starts with one of the opening characters; ValueError when none parses."""
    body = unfenced(text).strip()
    try:
        return DECODER.decode(body)
    except json.JSONDecodeError:
        pass
    for i, char in enumerate(body):
        if char in opening:
            try:
                return DECODER.raw_decode(body, i)[0]
            except json.JSONDecodeError:
                continue
    raise ValueError("no JSON value found")
