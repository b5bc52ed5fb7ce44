"""Personas: who the simulated user is, applied to any task of any domain (a task transform).

A task names a persona by key (AgentChangeBench's "EASY_1") or carries its text. This plugin holds
texts per key, for one domain or for all: AgentChangeBench's five keys for banking, airline and retail
and MM-tau-p²'s expertise levels for any domain, in our own words. A persona file (a JSON object of
key -> text, the shape of AgentChangeBench's user_personas.json) adds to them or overrides them for a run;
`--persona KEY` gives every task of the run that persona. The key is kept as the conversation's
`persona` attribute.

The AgentChangeBench archetypes follow its persona table (research notes §1.3): in banking they are the
methodical helper-seeker, the friendly scatterbrain, the efficient multitasker, the enthusiastic explorer
and the compliance warrior; in airline and retail the patient novice, the warm family planner, the direct
professional, the cost-aware researcher and the anxious novice. Each says how the user changes goals,
since goal shifts are what the benchmark measures.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import attrs

from bench_kernel import ConfigError, DomainData, Registry, Task, TaskFileError, TaskTransform, read_json

from .settings import run_setting

KEY_LENGTH = 40
"""A persona without whitespace and at most this long is a key (kept as an attribute), not a text."""


@attrs.frozen(kw_only=True)
class Persona:
    """A persona's text under a key, for one domain (or every domain when `domain` is None)."""

    key: str
    text: str | None
    """None: no persona at all (MM-tau-p²'s expertise level "None")."""
    domain: str | None = None
    description: str = ""


@attrs.frozen(kw_only=True)
class PersonaChange:
    """A typed event: the persona in effect changed (or was set at the start)."""

    kind: ClassVar[str] = "persona.change"
    persona: str
    text: str | None = None


BANKING = {
    "EASY_1": (
        "You are polite and careful. You go one step at a time, confirm what you heard ('Is that right?'), and thank "
        "the agent. You only raise a new request once the current one is mostly settled: 'While we're on it, I also "
        "wanted to ask about...'."
    ),
    "EASY_2": (
        "You are friendly but easily distracted, and banking terms are not your thing. You jump to a new topic "
        "suddenly ('Oh wait, I almost forgot!') and sometimes lose track of what you already said."
    ),
    "MEDIUM_1": (
        "You are busy and curt. You stack several requests in one message, dislike repeating details you already "
        "gave, and push to skip steps you think are unnecessary. You switch goals tactically, mid-task."
    ),
    "MEDIUM_2": (
        "You are curious and chatty, and you keep adding 'one more thing'. You mix up terms like APR and APY, answer "
        "verification questions only partly, and pivot to a new question right after a partial answer."
    ),
    "HARD_1": (
        "You are suspicious and combative. You cite consumer-protection rules, demand case numbers and a supervisor, "
        "refuse to repeat information, and abandon the current request abruptly for another one when it suits you."
    ),
}
TRAVEL_AND_SHOPPING = {
    "EASY_1": "You are patient and friendly, new to doing this online, and you follow the agent's lead. {where}",
    "EASY_2": "You are warm and talk about the family members this is for; you move between requests naturally. {where}",
    "MEDIUM_1": "You are direct and efficient, know exactly what you want, and stack requests to save time. {where}",
    "MEDIUM_2": ("You compare options and costs carefully and often bring up the next request with 'Speaking of saving money...'. {where}"),
    "HARD_1": (
        "You are nervous and easily alarmed; you suddenly remember new problems ('Oh no, I just realized...') and "
        "need reassurance before each step. {where}"
    ),
}
WHERE = {"airline": "You are dealing with your flight reservations.", "retail": "You are dealing with your online orders."}


EXPERTISE = {
    "Easy": (
        "You are comfortable with everyday technology. You follow instructions one step at a time, say what you see, "
        "and ask when a word is new to you. You stay friendly and patient."
    ),
    "Hard": (
        "Technology makes you uneasy and technical words confuse you. You need reassurance, worry that a step might "
        "break something, ask before doing it, and give details only when asked."
    ),
}


def changebench_personas() -> list[Persona]:
    """AgentChangeBench's five keys for banking, airline and retail, and MM-tau-p²'s levels (None, Easy, Hard) for all."""
    found = [Persona(key=key, domain="banking", text=text, description="AgentChangeBench archetype (our wording)") for key, text in BANKING.items()]
    for domain, where in WHERE.items():
        found += [
            Persona(key=key, domain=domain, text=text.format(where=where), description="AgentChangeBench archetype (our wording)")
            for key, text in TRAVEL_AND_SHOPPING.items()
        ]
    found.append(Persona(key="None", text=None, description="No persona."))
    return found + [Persona(key=key, text=text, description=f"Expertise level {key} (our wording).") for key, text in EXPERTISE.items()]


def read_persona_file(path: Path) -> dict[str, str]:
    """A persona file: a JSON object mapping keys to texts."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise TaskFileError(str(path), ["expected an object of persona key -> text @ $"])
    bad = [f"expected a string @ $.{key}" for key, text in data.items() if not isinstance(text, str)]
    if bad:
        raise TaskFileError(str(path), bad)
    return dict(data)


def persona_texts(personas: Iterable[Persona], domain: str, overrides: Mapping[str, str] | None = None) -> dict[str, str | None]:
    """Key -> text for a domain: generic personas, then the domain's own, then a persona file's."""
    known = list(personas)
    texts: dict[str, str | None] = {p.key: p.text for p in known if p.domain is None}
    texts.update({p.key: p.text for p in known if p.domain == domain})
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


def with_key_attribute(task: Task) -> Task:
    """A task whose persona is a key no text is known for, with that key as its `persona` attribute all the same."""
    persona = task.user_scenario.persona
    if "persona" in task.attributes or not persona or len(persona) > KEY_LENGTH or any(c.isspace() for c in persona):
        return task
    return attrs.evolve(task, attributes={**task.attributes, "persona": persona})


@attrs.define(kw_only=True)
class PersonaTransform(TaskTransform):
    """`persona` and `persona_file`: persona keys replaced by texts when the run loads its tasks, the key kept."""

    name: str = "personas"
    settings: tuple[str, ...] = ("persona", "persona_file")
    by_content: tuple[str, ...] = ("persona_file",)
    description: str = "Persona texts per key for any domain (--persona KEY for every task, --persona-file for other texts)."

    def domain(self, data: DomainData, settings: Mapping[str, Any], registry: Registry) -> DomainData:
        """The domain's tasks with their persona keys (or the run's `persona`) replaced by texts."""
        path = run_setting(settings, "persona_file", str)
        texts = persona_texts(changebench_personas(), data.name, read_persona_file(Path(path)) if path else None)
        tasks = apply_personas(data.tasks, texts, forced=run_setting(settings, "persona", str))
        return data if tasks == data.tasks else attrs.evolve(data, tasks=tasks)

    def tasks(self, data: DomainData, tasks: list[Task], settings: Mapping[str, Any], registry: Registry) -> list[Task]:
        """The tasks, those whose persona is an unknown key with it as their attribute (reports break figures down by it)."""
        return [with_key_attribute(task) for task in tasks]
