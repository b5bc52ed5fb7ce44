"""Telecom tasks, generated: every composition of the faults for the three intents, worded and built.

The wording (why the customer calls, what they know, how they behave, the ticket, the personas) is
data: ours comes from `data/wording.toml`; with tau2's files it is read from tau2's own
`tasks_small.json`, whose 20 single-fault tasks show every intent, persona and location, so that
the generated tasks carry tau2's text without this repository holding a copy of it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from bench_compose import Composer, Composition, composed_id

from bench_kernel import ConfigError, DomainData, EnvAssertion, Environment, Task

from .faults import INTENTS, PERSONAS, Faults, Intent, Subject, user
from .records import read_toml

TEXT_FIELDS = ("purpose", "reason_for_call", "known_info", "task_instructions", "ticket")
SUITE_PER_BIN = 2
"""Our default suite: every single-fault task, plus this many tasks per (intent, number of faults) bin."""


@attrs.frozen(kw_only=True)
class Wording:
    """The text of generated tasks: per intent, per persona, per location; assertion messages."""

    intents: Mapping[str, Mapping[str, str]]
    personas: Mapping[str, str | None]
    locations: Mapping[str, str]
    messages: Mapping[str, str] = attrs.field(factory=dict)

    def scenario(self, intent: Intent, persona: str, env: Environment) -> dict[str, Any]:
        """The description, user scenario and ticket of a task, given its set-up environment."""
        text = self.intents[intent.name]
        surroundings = env.user_tools.surroundings  # type: ignore[union-attr]
        facts = {
            "name": surroundings.name,
            "phone_number": surroundings.phone_number,
            "location": self.locations["abroad" if surroundings.is_abroad else "home"],
        }
        return {
            "description": {"purpose": text["purpose"]},
            "user_scenario": {
                "persona": self.personas[persona],
                "instructions": {
                    "domain": "telecom",
                    "reason_for_call": text["reason_for_call"],
                    "known_info": text["known_info"].format(**facts),
                    "unknown_info": None,
                    "task_instructions": text["task_instructions"],
                },
            },
            "ticket": text["ticket"].format(**facts),
        }

    def with_messages(self, assertions: Iterable[EnvAssertion]) -> list[EnvAssertion]:
        """The assertions with the messages this wording gives them."""
        return [attrs.evolve(a, message=self.messages.get(assertion_key(a))) for a in assertions]


def assertion_key(assertion: EnvAssertion) -> str:
    """What identifies an assertion for its message."""
    return json.dumps([assertion.env_type, assertion.func_name, assertion.arguments, assertion.assert_value], sort_keys=True)


def own_wording(path: Path) -> Wording:
    """Our wording, from wording.toml."""
    data = read_toml(path)
    try:
        intents = {name: {field: str(data["intents"][name][field]) for field in TEXT_FIELDS} for name in (i.name for i in INTENTS)}
        personas = {key: (str(data["personas"][key]) or None) for key in PERSONAS}
        locations = {key: str(data["locations"][key]) for key in ("home", "abroad")}
    except (KeyError, TypeError) as exc:
        raise ConfigError(f"{path}: missing wording {exc}") from None
    return Wording(intents=intents, personas=personas, locations=locations)


def wording_from_examples(tasks: Sequence[Mapping[str, Any]], source: str) -> Wording:
    """The wording that tau2's generated tasks use, read back from a sample of them (tasks_small.json)."""
    intents: dict[str, dict[str, str]] = {}
    personas: dict[str, str | None] = {}
    messages: dict[str, str] = {}
    known: dict[tuple[str, bool], str] = {}
    for raw in tasks:
        intent, persona = _id_parts(str(raw.get("id", "")))
        scenario = raw["user_scenario"]
        instructions = scenario["instructions"]
        who = _set_up_args(raw, "set_user_info")
        abroad = bool(_set_up_args(raw, "set_user_location").get("abroad", False))
        known[(intent, abroad)] = instructions["known_info"]
        personas[persona] = scenario.get("persona")
        intents[intent] = {
            "purpose": raw["description"]["purpose"],
            "reason_for_call": instructions["reason_for_call"],
            "task_instructions": instructions["task_instructions"],
            "known_info": _template(instructions["known_info"], who),
            "ticket": _template(raw["ticket"], who),
        }
        for item in raw["evaluation_criteria"].get("env_assertions") or []:
            if item.get("message") is not None:
                assertion = EnvAssertion(
                    env_type=item["env_type"], func_name=item["func_name"], arguments=item["arguments"], assert_value=item.get("assert_value", True)
                )
                messages[assertion_key(assertion)] = item["message"]
    locations = _locations(known, source)
    for text in intents.values():
        for field in ("known_info", "ticket"):
            for phrase in locations.values():
                text[field] = text[field].replace(phrase, "{location}")
    missing = sorted({i.name for i in INTENTS} - set(intents)) + sorted(set(PERSONAS) - set(personas))
    if missing:
        raise ConfigError(f"{source}: no example task for {', '.join(missing)}; cannot read tau2's wording from it")
    return Wording(intents=intents, personas=personas, locations=locations, messages=messages)


def _id_parts(task_id: str) -> tuple[str, str]:
    match = re.fullmatch(r"\[(\w+)\].*\[PERSONA:(\w+)\]", task_id)
    if match is None:
        raise ConfigError(f"not a composed telecom task id: {task_id!r}")
    return match.group(1), match.group(2)


def _set_up_args(raw: Mapping[str, Any], func: str) -> dict[str, Any]:
    for call in (raw.get("initial_state") or {}).get("initialization_actions") or []:
        if call.get("func_name") == func:
            return dict(call.get("arguments") or {})
    return {}


def _template(text: str, who: Mapping[str, Any]) -> str:
    text = text.replace("{", "{{").replace("}", "}}")
    if who.get("name"):
        text = text.replace(str(who["name"]), "{name}")
    if who.get("phone_number"):
        text = text.replace(str(who["phone_number"]), "{phone_number}")
    return text


def _locations(known: Mapping[tuple[str, bool], str], source: str) -> dict[str, str]:
    """The home and abroad phrases: where two known-info texts of one intent differ."""
    for (intent, abroad), text in known.items():
        other = known.get((intent, not abroad))
        if abroad and other is not None:
            return dict(zip(("abroad", "home"), _difference(text, other), strict=True))
    raise ConfigError(f"{source}: needs one task at home and one abroad of the same intent to read the location wording")


def _difference(a: str, b: str) -> tuple[str, str]:
    ta, tb = re.findall(r"\w+|\W", a), re.findall(r"\w+|\W", b)
    start = 0
    while start < min(len(ta), len(tb)) and ta[start] == tb[start]:
        start += 1
    end = 0
    while end < min(len(ta), len(tb)) - start and ta[-1 - end] == tb[-1 - end]:
        end += 1
    return "".join(ta[start : len(ta) - end]), "".join(tb[start : len(tb) - end])


# --------------------------------------------------------------------------- building tasks


@attrs.frozen(kw_only=True)
class Generator:
    """The telecom task generator for one subject and one wording."""

    subject: Subject
    wording: Wording

    def composers(self) -> list[Composer]:
        """One bench-compose Composer per intent, in tau2's order (mobile data, service, MMS)."""
        faults = Faults(subject=self.subject).all()
        setup = [user("set_user_info", name=self.subject.name, phone_number=self.subject.phone_number)]
        return [
            Composer(
                intent=intent.name,
                selection_sets=[[faults[n] for n in names] for names in intent.sets],
                assertions=functools.partial(self._assertions, intent),
                template=functools.partial(self._scenario, intent),
                setup=setup,
                valid=intent.valid,
                personas=PERSONAS,
            )
            for intent in INTENTS
        ]

    def _assertions(self, intent: Intent, fixable: bool) -> list[EnvAssertion]:
        return self.wording.with_messages(intent.assertions(fixable, self.subject))

    def _scenario(self, intent: Intent, composition: Composition, persona: str, env: Environment) -> dict[str, Any]:
        # Attributes are ours (tau2's tasks have none): reports break figures down by them.
        attributes = {"intent": intent.name, "persona": persona, "faults": str(len(composition.subtasks))}
        return {**self.wording.scenario(intent, persona, env), "attributes": attributes}

    def catalogue(self) -> list[tuple[Composer, Composition, str]]:
        """Every composition of every intent with its persona, in task order (cheap: nothing is built)."""
        return [(composer, composition, persona) for composer in self.composers() for composition, persona in composer.compositions()]

    def by_id(self) -> dict[str, tuple[Composer, Composition, str]]:
        """The catalogue by task id, in task order."""
        return {
            composed_id(composer.intent, composition, persona): (composer, composition, persona)
            for composer, composition, persona in self.catalogue()
        }

    def build(self, data: DomainData, wanted: Iterable[str] | None = None) -> list[Task]:
        """The tasks with these ids (all when None), in catalogue order."""
        chosen = None if wanted is None else set(wanted)
        return [
            composer.build(data, composition, persona)
            for composer, composition, persona in self.catalogue()
            if chosen is None or composed_id(composer.intent, composition, persona) in chosen
        ]

    def ids(self) -> list[str]:
        """Every composed id, in task order."""
        return [composed_id(composer.intent, composition, persona) for composer, composition, persona in self.catalogue()]

    def own_splits(self, ids: list[str] | None = None) -> dict[str, list[str]]:
        """Our splits: `small` (single faults), `default` (small plus a sample per bin), `full` (everything = `ids`)."""
        ids = self.ids() if ids is None else ids
        small = [i for i in ids if _fault_count(i) == 1]
        bins: dict[tuple[str, int], list[str]] = defaultdict(list)
        for task_id in ids:
            if _fault_count(task_id) > 1:
                bins[(task_id.split("]", 1)[0], _fault_count(task_id))].append(task_id)
        sampled = {i for members in bins.values() for i in sorted(members, key=_draw)[:SUITE_PER_BIN]}
        return {"small": small, "default": [i for i in ids if i in sampled or i in small], "full": ids}


def _fault_count(task_id: str) -> int:
    return task_id.count("|") + 1


def _draw(task_id: str) -> str:
    """A stable pseudo-random order (no RNG state): the sha256 of the id."""
    return hashlib.sha256(f"bench-telecom-suite:{task_id}".encode()).hexdigest()
