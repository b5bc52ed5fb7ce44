"""Finding the JSON a model meant to write, inside whatever else it wrote around it."""

from __future__ import annotations

import json
import re
from typing import Any

FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


def unfenced(text: str) -> str:
    """The body of the first ``` code fence, or the text itself when there is none."""
    match = FENCE.search(text)
    return match.group(1) if match else text


def first_json(text: str, opening: str = "{[") -> Any:
    """The first JSON value in the text that starts with one of the opening characters; ValueError when none parses."""
    body = unfenced(text).strip()
    try:
        return json.loads(body)
    except json.JSONDecodeError:
        pass
    decoder = json.JSONDecoder()
    for i, char in enumerate(body):
        if char in opening:
            try:
                return decoder.raw_decode(body, i)[0]
            except json.JSONDecodeError:
                continue
    raise ValueError("no JSON value found")
