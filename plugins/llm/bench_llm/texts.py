"""bench-llm's own texts (the voice user's): the run's profile overrides each by key, else the packaged one is used.

They are not in bench's profile, so adding them changed no profile hash and no earlier run's id; a profile directory
(or `bench tau2 profile`'s dump) that has a text under the same key replaces it.
"""

from __future__ import annotations

import functools
from importlib import resources

from bench_kernel import PLACEHOLDER, Profile


@functools.cache
def packaged(key: str) -> str:
    """The text bench-llm ships under `key`."""
    return (resources.files("bench_llm") / "texts" / f"{key}.md").read_text(encoding="utf-8")


def own_text(profile: Profile, key: str) -> str:
    """The profile's text for `key`, else bench-llm's."""
    return profile.texts[key] if key in profile.texts else packaged(key)


def own_render(profile: Profile, key: str, **values: str) -> str:
    """`own_text` with each {{placeholder}} replaced in one pass."""
    return PLACEHOLDER.sub(lambda m: values[m.group(1)] if m.group(1) in values else m.group(0), own_text(profile, key))
