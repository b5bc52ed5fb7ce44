"""bench-knowledge's own texts (what its tools say besides documents): the run's profile overrides each by key.

They ship with this package, not in bench's profile; a profile directory that has a text under the same key
(`knowledge_no_results`, ...; docs/knowledge.md) replaces it, so a profile can give tau2's exact strings.
"""

from __future__ import annotations

import functools
from importlib import resources

from bench_kernel import PLACEHOLDER, Profile

PLACEHOLDERS: dict[str, frozenset[str]] = {
    "knowledge_no_results": frozenset(),
    "knowledge_no_matches": frozenset({"pattern"}),
    "knowledge_rerank": frozenset({"query", "document"}),
    "knowledge_shell_blocked": frozenset({"reason"}),
    "knowledge_shell_timeout": frozenset({"seconds"}),
    "knowledge_shell_no_matches": frozenset(),
    "knowledge_shell_failed": frozenset({"code"}),
}
"""Our texts and the placeholders each may use (a profile's text under one of these keys is checked against them)."""


@functools.cache
def packaged(key: str) -> str:
    """The text bench-knowledge ships under `key`."""
    return (resources.files("bench_knowledge") / "texts" / f"{key}.md").read_text(encoding="utf-8")


def own_text(profile: Profile | None, key: str) -> str:
    """The profile's text for `key`, else bench-knowledge's (also outside a conversation, where there is no profile)."""
    return profile.texts[key] if profile is not None and key in profile.texts else packaged(key)


def own_render(profile: Profile | None, key: str, **values: str) -> str:
    """`own_text` with each {{placeholder}} replaced in one pass (a value is never scanned again)."""
    return PLACEHOLDER.sub(lambda m: values[m.group(1)] if m.group(1) in values else m.group(0), own_text(profile, key))


def profile_problems(profile: Profile | None) -> list[str]:
    """The profile's replacements of our texts that use a placeholder their key does not take, one line each."""
    if profile is None:
        return []
    problems = []
    for key, allowed in PLACEHOLDERS.items():
        unknown = sorted({m.group(1) for m in PLACEHOLDER.finditer(profile.texts.get(key, ""))} - allowed)
        if unknown:
            takes = ", ".join(sorted(allowed)) or "none"
            problems.append(f"profile {profile.name!r}: text {key!r} uses {{{{{unknown[0]}}}}}, which it does not take (it takes: {takes})")
    return problems
