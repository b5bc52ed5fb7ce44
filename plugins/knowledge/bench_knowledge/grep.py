"""Regular-expression search over document bodies, ranked by match count (tau2's grep retriever)."""

from __future__ import annotations

import re
from collections.abc import Sequence


def compile_pattern(pattern: str, *, case_sensitive: bool = False) -> re.Pattern[str]:
    """Python's `re` pattern, or the pattern as literal text when it is not a valid expression."""
    flags = 0 if case_sensitive else re.IGNORECASE
    try:
        return re.compile(pattern, flags)
    except re.error:
        return re.compile(re.escape(pattern), flags)


def grep(texts: Sequence[str], pattern: str, k: int, *, case_sensitive: bool = False) -> list[tuple[int, float]]:
    """The k texts with the most matches as (index, match count), most first, ties in text order.

    Only texts with at least one match are returned; a blank pattern finds nothing.
    """
    if not pattern.strip():
        return []
    compiled = compile_pattern(pattern, case_sensitive=case_sensitive)
    found = []
    for index, text in enumerate(texts):
        count = len(compiled.findall(text))
        if count:
            found.append((index, float(count)))
    found.sort(key=lambda hit: hit[1], reverse=True)
    return found[:k]
