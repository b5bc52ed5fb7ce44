"""A profile: the texts, tool schemas, sampling, seeds and conversation constants a run's models see (docs/profiles.md)."""

from __future__ import annotations

import functools
import hashlib
import json
import random
import re
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from bench_kernel.errors import ConfigError
from bench_kernel.modelhub.api import ModelConfig
from bench_kernel.serialization import canonical_json, read_json, read_text

PROFILE_FORMAT = 1
BENCH_PROFILE_DIR = Path(__file__).with_name("bench")
"""bench's own profile, the default of every run (`bench profile copy` writes it out)."""
PROFILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
"""What a profile (and a domain file of it) may be named."""
PLACEHOLDER = re.compile(r"\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}")
PLACEHOLDERS: dict[str, frozenset[str]] = {
    key: frozenset(names)
    for key, names in {
        "agent": ("policy", "domain"),
        "agent_solo": ("policy", "domain", "ticket", "done_tool"),
        "agent_plan": ("policy", "domain", "plan"),
        "plan_step_agent": ("n", "name", "arguments", "call"),
        "plan_step_user": ("n", "name", "arguments", "call"),
        "plan_separator": (),
        "user": ("scenario",),
        "user_tools": ("scenario",),
        "text_tools": ("tools",),
        "react_format": ("speak",),
        "act_format": ("speak",),
        "speak_to_user": ("respond",),
        "speak_solo": ("done_tool",),
        "persona": ("persona",),
        "customer_profile": ("profile",),
        "profiler": (),
        "judge_system": (),
        "judge_user": ("transcript", "statements"),
        "judge_line": ("role", "content"),
    }.items()
}
"""The texts every LLM participant of bench knows, and the placeholders each may use; a plugin may add its own keys."""
OPTIONAL_TEXTS = frozenset({"judge_line"})
"""Texts bench's own profile does without: only a profile whose settings ask for them uses them ([judge] transcript)."""


@attrs.frozen(kw_only=True)
class MessageStyle:
    """How chat messages are spelt on the wire: the same conversation can reach a model as different JSON."""

    tool_call_fields: tuple[str, ...] = ("id", "type", "function")
    """A tool call's fields, in order: id, type, function and optionally name (the function's name again)."""
    tool_message_fields: tuple[str, ...] = ("role", "tool_call_id", "content")
    """A tool result's fields, in order."""
    ascii_arguments: bool = False
    """Tool-call arguments as JSON with non-ASCII characters escaped (Python's json.dumps default)."""
    null_content: bool = True
    """An assistant message that only calls tools carries `"content": null`; False leaves the key out."""


@attrs.frozen(kw_only=True)
class JudgeStyle:
    """How the NL-assertion judge's request is shaped and its reply read (docs/judges.md); bench's own by default."""

    transcript: str = "bench"
    """"bench": bench-llm's transcript (speakers, tool calls, tool results); "lines": the `judge_line` text per message."""
    line_separator: str = "\n"
    """Between two `judge_line`s."""
    no_content: str = "None"
    """What `judge_line` shows as the content of a message that has none (one that only calls tools)."""
    statements: str = "numbered"
    """"numbered": `N. text` per line, N the statement's id; "python_list": the texts as Python's repr of a list."""
    verdicts: str = "index"
    """"index": each verdict names its statement's number; "echo": each verdict repeats its statement's text."""
    response_format: bool = True
    """Ask for a JSON object (`response_format`)."""
    seed: bool = True
    """Send the conversation's seed with the first judgment (retries and panel members always carry their own)."""


@attrs.frozen(kw_only=True)
class Profile:
    """One resolved profile: every text and constant a participant asks for has a value."""

    name: str
    description: str = ""
    source: Mapping[str, Any] = attrs.field(factory=dict)
    """Where it came from (free-form provenance; not part of the hash)."""
    path: str | None = None
    """The directory it was read from; None for bench's own."""
    texts: Mapping[str, str]
    tools: Mapping[str, Mapping[str, list[dict[str, Any]] | None]] = attrs.field(factory=dict)
    """Per domain, the schemas to send for the agent's and the user's tools; a domain not here uses its own."""
    discoverable: Mapping[str, Mapping[str, Mapping[str, Any]]] = attrs.field(factory=dict)
    """Per domain and side, the texts of tools the model discovers mid-conversation (docs/profiles.md gives the shape)."""
    done_tool: Mapping[str, Any]
    sampling: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict)
    seed_policy: str = "conversation"
    greeting: str
    user_stop_tokens: tuple[str, ...]
    greeting_in_agent_history: bool = True
    """The agent's own history starts with the greeting (tau2's); False: only the user hears it (AgentChangeBench's)."""
    solo_stop_token: str
    messages: MessageStyle = attrs.field(factory=MessageStyle)
    meaning: Mapping[str, str] = attrs.field(factory=dict)
    judge: JudgeStyle = attrs.field(factory=JudgeStyle)
    """How the NL-assertion judge's request is shaped and its reply read ([judge] in profile.toml)."""
    sha256: str = ""

    def render(self, key: str, **values: str) -> str:
        """The text of `key` with each {{placeholder}} replaced in one pass (a value is never scanned again)."""
        return PLACEHOLDER.sub(lambda m: values[m.group(1)] if m.group(1) in values else m.group(0), self.text(key))

    def text(self, key: str) -> str:
        """The raw template of `key`; ConfigError when neither this profile nor bench's has it."""
        try:
            return self.texts[key]
        except KeyError:
            raise ConfigError(f"profile {self.name!r} has no text {key!r}") from None

    def present_tools(self, domain: str, side: str, schemas: Sequence[dict[str, Any]], *, solo: bool = False) -> list[dict[str, Any]]:
        """The schemas to send for the tools a domain offers: the profile's own, in its order, when it has the domain."""
        # A solo agent is also offered the user's tools, after its own, as tau2's solo mode does.
        if domain not in self.tools:
            return list(schemas)
        sides = self.tools[domain]
        own = sides.get(side) or []
        offered = {s["function"]["name"] for s in schemas}
        known = {s["function"]["name"]: s for s in own}
        for schema in (sides.get(other(side)) or []) if solo else []:
            known.setdefault(schema["function"]["name"], schema)  # a tool on both sides keeps its own side's schema
        missing = sorted(offered - set(known))
        if missing:
            raise ConfigError(
                f"profile {self.name!r} has no schema for the {domain} {side} tool(s) {', '.join(missing)} "
                f"(it was made from another version of the domain; dump it again)"
            )
        return [known[name] for name in known if name in offered]

    def discoverable_tools(self, domain: str, side: str) -> Mapping[str, Mapping[str, Any]] | None:
        """The texts of a domain's discoverable tools on one side, or None when the profile leaves them to the domain."""
        return self.discoverable.get(domain, {}).get(side)

    def discoverable_formats(self, domain: str) -> Mapping[str, str]:
        """The domain's templates for messages about discoverable tools ({} when the domain's own apply)."""
        return self.discoverable.get(domain, {}).get("formats") or {}

    def covers(self, domain: str) -> bool:
        """True when the profile brings its own tool schemas for the domain."""
        return domain in self.tools

    def conversation_seed(self, base_seed: int, task_id: str, trial: int) -> int:
        """The seed of one conversation under this profile's seed policy."""
        if self.seed_policy == "trial":
            return trial_seeds(base_seed, trial + 1)[trial]
        return conversation_seed(base_seed, task_id, trial)

    def with_sampling(self, models: Mapping[str, ModelConfig]) -> dict[str, ModelConfig]:
        """The roles' model configurations with the profile's sampling under each role's own (the role's wins)."""
        return {
            role: attrs.evolve(config, sampling={**self.sampling[role], **config.sampling}) if self.sampling.get(role) else config
            for role, config in models.items()
        }

    def identity(self) -> dict[str, str]:
        """What a run's identity keeps of its profile: name and content hash."""
        return {"name": self.name, "sha256": self.sha256}

    def label(self) -> str:
        """Name, short hash and origin, as the run header shows them."""
        return f"{self.name} (sha256 {self.sha256[:12]}, {self.path or 'built in'})"


def other(side: str) -> str:
    """The other side of a conversation's tools."""
    return "user" if side == "agent" else "agent"


def conversation_seed(base_seed: int, task_id: str, trial: int) -> int:
    """A stable per-conversation seed from sha256 of the run seed, task and trial (bench's own policy)."""
    digest = hashlib.sha256(f"{base_seed}:{task_id}:{trial}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


@functools.lru_cache(maxsize=64)
def trial_seeds(base_seed: int, trials: int) -> tuple[int, ...]:
    """The seeds tau2 gives its trials: successive draws of a Random seeded with the run seed (no global RNG)."""
    rng = random.Random(base_seed)
    return tuple(rng.randint(0, 1_000_000) for _ in range(trials))  # tau2's range


@attrs.frozen(kw_only=True)
class ProfileReader:
    """Reads a profile directory over bench's own: bench-profiles registers the one `--profile DIR` uses."""

    name: str

    def read(self, directory: Path, base: Profile) -> Profile:
        """The profile in `directory`, what it lacks taken from `base`; ConfigError naming the file and JSON path."""
        raise NotImplementedError


def hashed_profile(**fields: Any) -> Profile:
    """A profile of these fields with its content hash (what every reader builds its profile with)."""
    return Profile(**fields, sha256=_content_hash(fields))


@functools.lru_cache(maxsize=1)
def bench_profile() -> Profile:
    """bench's own profile, read from its directory (complete, checked by the kernel's tests)."""
    data = tomllib.loads(read_text(BENCH_PROFILE_DIR / "profile.toml"))
    conversation = data["conversation"]
    messages: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in data.get("messages", {}).items()}
    return hashed_profile(
        name=data["name"],
        description=data.get("description", ""),
        source=data.get("source", {}),
        path=None,
        texts={path.stem: read_text(path) for path in sorted((BENCH_PROFILE_DIR / "texts").glob("*.md"))},
        tools={},
        discoverable={},
        done_tool=read_json(BENCH_PROFILE_DIR / "tools" / "done.json"),
        sampling={role: dict(values) for role, values in data.get("sampling", {}).items()},
        seed_policy=data.get("seed", {}).get("policy", "conversation"),
        greeting=conversation["greeting"],
        greeting_in_agent_history=conversation.get("greeting_in_agent_history", True),
        user_stop_tokens=tuple(conversation["user_stop_tokens"]),
        solo_stop_token=conversation["solo_stop_token"],
        messages=MessageStyle(**messages),
        meaning=dict(data.get("meaning", {})),
        judge=JudgeStyle(**data.get("judge", {})),
    )


def _content_hash(fields: Mapping[str, Any]) -> str:
    # Provenance and location are left out: the same content read from two places is the same profile.
    content = {k: v for k, v in fields.items() if k not in ("source", "path", "description")}
    # Key order inside tool schemas is part of what is sent, so schemas are hashed as the JSON text they are sent as.
    content["tools"] = {d: {s: json.dumps(v) for s, v in sides.items()} for d, sides in fields["tools"].items()}
    if not content.get("discoverable"):
        content.pop("discoverable", None)  # profiles made before discoverable tools existed keep their hashes
    content["done_tool"] = json.dumps(fields["done_tool"])
    content["messages"] = attrs.asdict(fields["messages"])
    if content.get("greeting_in_agent_history", True):
        content.pop("greeting_in_agent_history", None)  # the default: profiles made before the key keep their hashes
    # bench's own judge style is left out, so profiles made before [judge] existed (bench's included) keep their hashes.
    content["judge"] = attrs.asdict(fields["judge"])
    if fields["judge"] == JudgeStyle():
        content.pop("judge")
    return hashlib.sha256(canonical_json(content).encode()).hexdigest()
