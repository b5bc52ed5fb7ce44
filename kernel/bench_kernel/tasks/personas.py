"""Personas: who the simulated user is, registered by plugins, applied to any task of any domain.

A task names a persona by key (AgentChangeBench's "EASY_1") or carries its text. Plugins register
texts per key, for one domain or for all; a persona file (a JSON object of key -> text, the shape of
AgentChangeBench's user_personas.json) overrides them for a run; `--persona KEY` gives every task of
the run that persona. The key is kept as the conversation's `persona` attribute.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import attrs

from bench_kernel.errors import ConfigError, TaskFileError
from bench_kernel.schema.tasks import Task
from bench_kernel.serialization import read_json


@attrs.define(kw_only=True)
class Persona:
    """A persona's text under a key, for one domain (or every domain when `domain` is None)."""

    key: str
    text: str | None
    """None: no persona at all (MM-tau-p²'s expertise level "None")."""
    domain: str | None = None
    description: str = ""

    @property
    def name(self) -> str:
        """The registry name: the key, qualified by the domain when there is one."""
        return f"{self.key}@{self.domain}" if self.domain else self.key


def read_persona_file(path: Path) -> dict[str, str]:
    """A persona file: a JSON object mapping keys to texts."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise TaskFileError(str(path), ["expected an object of persona key -> text @ $"])
    bad = [f"expected a string @ $.{key}" for key, text in data.items() if not isinstance(text, str)]
    if bad:
        raise TaskFileError(str(path), bad)
    return dict(data)


def persona_texts(registered: Iterable[Persona], domain: str, overrides: Mapping[str, str] | None = None) -> dict[str, str | None]:
    """Key -> text for a domain: generic personas, then the domain's own, then a persona file's."""
    personas = list(registered)
    texts: dict[str, str | None] = {p.key: p.text for p in personas if p.domain is None}
    texts.update({p.key: p.text for p in personas if p.domain == domain})
    texts.update(overrides or {})
    return texts


def apply_personas(tasks: Sequence[Task], texts: Mapping[str, str | None], *, forced: str | None = None) -> list[Task]:
    """Tasks with persona keys replaced by their texts (every task gets `forced` when given), the key kept as attribute."""
    if forced is not None and forced not in texts:
        raise ConfigError(f"unknown persona {forced!r}; known here: {', '.join(sorted(texts)) or 'none'}")
    out = []
    for task in tasks:
        key = forced if forced is not None else task.user_scenario.persona
        if key is None or key not in texts:
            out.append(task)
            continue
        scenario = attrs.evolve(task.user_scenario, persona=texts[key])
        out.append(attrs.evolve(task, user_scenario=scenario, attributes={**task.attributes, "persona": key}))
    return out
