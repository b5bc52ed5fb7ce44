"""A profile: the texts, tool schemas, sampling, seeds and conversation constants a run's models see (docs/profiles.md)."""

from __future__ import annotations

import functools
import hashlib
import json
import random
import re
import shutil
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from bench_kernel.errors import ConfigError
from bench_kernel.modelhub.api import ModelConfig
from bench_kernel.serialization import canonical_json, check_plain_data, read_json, read_text, structure

PROFILE_FORMAT = 1
BUILTIN_DIR = Path(__file__).with_name("bench")
SEED_POLICIES = ("conversation", "trial")
TRIAL_SEED_RANGE = (0, 1_000_000)
"""tau2 draws each trial's seed with random.randint over this range."""
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
SIDES = ("agent", "user")
TOOL_CALL_FIELDS = frozenset({"id", "type", "function", "name"})
TOOL_MESSAGE_FIELDS = frozenset({"role", "content", "tool_call_id"})


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


JUDGE_TRANSCRIPTS = ("bench", "lines")
JUDGE_STATEMENTS = ("numbered", "python_list")
JUDGE_VERDICTS = ("index", "echo")


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
class _Judge:
    transcript: str | None = None
    line_separator: str | None = None
    no_content: str | None = None
    statements: str | None = None
    verdicts: str | None = None
    response_format: bool | None = None
    seed: bool | None = None


@attrs.frozen(kw_only=True)
class _Seed:
    policy: str | None = None


@attrs.frozen(kw_only=True)
class _Conversation:
    greeting: str | None = None
    greeting_in_agent_history: bool | None = None
    user_stop_tokens: list[str] | None = None
    solo_stop_token: str | None = None


@attrs.frozen(kw_only=True)
class _Messages:
    tool_call_fields: list[str] | None = None
    tool_message_fields: list[str] | None = None
    ascii_arguments: bool | None = None
    null_content: bool | None = None


@attrs.frozen(kw_only=True)
class _ProfileFile:
    """profile.toml as written; everything but format and name may be left to bench's own profile."""

    format: int
    name: str
    description: str = ""
    source: dict[str, Any] = attrs.field(factory=dict)
    sampling: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    seed: _Seed = attrs.field(factory=_Seed)
    conversation: _Conversation = attrs.field(factory=_Conversation)
    messages: _Messages = attrs.field(factory=_Messages)
    meaning: dict[str, str] = attrs.field(factory=dict)
    judge: _Judge = attrs.field(factory=_Judge)


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
    """Per domain and side, the texts of tools the model discovers mid-conversation (not in its tool list):
    {name: {"description", "params": [{"name", "type", "optional", "description"}], "returns"}}; under "formats", the
    domain's templates for the messages that show them (their keys are the domain's)."""
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
        template = self.text(key)
        return PLACEHOLDER.sub(lambda m: values[m.group(1)] if m.group(1) in values else m.group(0), template)

    def text(self, key: str) -> str:
        """The raw template of `key`; ConfigError when neither this profile nor bench's has it."""
        try:
            return self.texts[key]
        except KeyError:
            raise ConfigError(f"profile {self.name!r} has no text {key!r}") from None

    def present_tools(self, domain: str, side: str, schemas: Sequence[dict[str, Any]], *, solo: bool = False) -> list[dict[str, Any]]:
        """The schemas to send for the tools a domain offers: the profile's own, in its order, when it has the domain.

        A solo agent is also offered the user's tools, after its own, as tau2's solo mode does (`solo=True`).
        """
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
        merged: dict[str, ModelConfig] = {}
        for role, config in models.items():
            defaults = self.sampling.get(role) or {}
            merged[role] = attrs.evolve(config, sampling={**defaults, **config.sampling}) if defaults else config
        return merged

    def identity(self) -> dict[str, str]:
        """What a run's identity keeps of its profile: name and content hash."""
        return {"name": self.name, "sha256": self.sha256}

    def summary(self) -> dict[str, Any]:
        """What `bench profile show` prints: identity, provenance, constants, texts and tool coverage."""
        return {
            "name": self.name,
            "sha256": self.sha256,
            "path": self.path or "built in",
            "description": self.description,
            "source": dict(self.source),
            "seed_policy": self.seed_policy,
            "sampling": {r: dict(v) for r, v in self.sampling.items()},
            "greeting": self.greeting,
            "greeting_in_agent_history": self.greeting_in_agent_history,
            "user_stop_tokens": list(self.user_stop_tokens),
            "solo_stop_token": self.solo_stop_token,
            "messages": attrs.asdict(self.messages),
            "judge": attrs.asdict(self.judge),
            "texts": {key: f"{len(text)} characters" for key, text in sorted(self.texts.items())},
            "tools": {
                domain: {side: len(schemas) if schemas is not None else None for side, schemas in sides.items()}
                for domain, sides in sorted(self.tools.items())
            }
            or "the domains' own schemas",
        }

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
    return tuple(rng.randint(*TRIAL_SEED_RANGE) for _ in range(trials))


def copy_builtin(directory: Path) -> None:
    """Write bench's own profile's files into a new or empty directory."""
    if directory.exists() and any(directory.iterdir()):
        raise ConfigError(f"{directory}: not empty; choose a new directory")
    shutil.copytree(BUILTIN_DIR, directory, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))


def load_profile(directory: str | Path | None) -> Profile:
    """The profile in `directory` over bench's own, or bench's own for None."""
    builtin = _builtin()
    if directory is None:
        return builtin
    return _read(Path(directory), base=builtin)


@functools.lru_cache(maxsize=1)
def _builtin() -> Profile:
    return _read(BUILTIN_DIR, base=None)


def _read(directory: Path, base: Profile | None) -> Profile:
    if not directory.is_dir():
        raise ConfigError(f"{directory}: no profile directory there (see docs/profiles.md)")
    settings = _settings(directory / "profile.toml")
    texts = {**(base.texts if base else {}), **_texts(directory / "texts")}
    tools, discoverable = _tools(directory / "tools")
    done = _done_tool(directory / "tools" / "done.json") or (base.done_tool if base else None)
    conversation = settings.conversation
    fields: dict[str, Any] = {
        "name": settings.name,
        "description": settings.description,
        "source": settings.source,
        "path": None if base is None else str(directory.resolve()),
        "texts": texts,
        "tools": tools,
        "discoverable": discoverable,
        "done_tool": done,
        "sampling": _merged_sampling(base.sampling if base else {}, settings.sampling),
        "seed_policy": settings.seed.policy or (base.seed_policy if base else "conversation"),
        "greeting": _pick(conversation.greeting, base and base.greeting, "greeting"),
        "greeting_in_agent_history": _pick(
            conversation.greeting_in_agent_history, base.greeting_in_agent_history if base else True, "greeting_in_agent_history"
        ),
        "user_stop_tokens": tuple(_pick(conversation.user_stop_tokens, base and list(base.user_stop_tokens), "user_stop_tokens")),
        "solo_stop_token": _pick(conversation.solo_stop_token, base and base.solo_stop_token, "solo_stop_token"),
        "messages": _message_style(directory / "profile.toml", settings.messages, base.messages if base else MessageStyle()),
        "meaning": {**(base.meaning if base else {}), **settings.meaning},
        "judge": _judge_style(directory / "profile.toml", settings.judge, base.judge if base else JudgeStyle()),
    }
    if fields["done_tool"] is None:
        raise ConfigError(f"{directory}: no tools/done.json")
    return Profile(**fields, sha256=_content_hash(fields))


def _merged_sampling(base: Mapping[str, Mapping[str, Any]], own: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each role's sampling key by key: a profile that sets top_p keeps bench's stated temperature."""
    return {role: {**base.get(role, {}), **own.get(role, {})} for role in [*base, *(r for r in own if r not in base)]}


def _settings(path: Path) -> _ProfileFile:
    try:
        data = tomllib.loads(read_text(path))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    problems = check_plain_data(data)
    if problems:
        raise ConfigError(f"{path}: {problems[0]}")
    settings = structure(data, _ProfileFile, source=str(path))
    if settings.format != PROFILE_FORMAT:
        raise ConfigError(f"{path}: profile format {settings.format} is not known to this bench (it reads format {PROFILE_FORMAT}) @ $.format")
    if not PROFILE_NAME.match(settings.name):
        raise ConfigError(f"{path}: a profile name is letters, digits, '.', '_' and '-', not {settings.name!r} @ $.name")
    if settings.seed.policy is not None and settings.seed.policy not in SEED_POLICIES:
        raise ConfigError(f"{path}: unknown seed policy {settings.seed.policy!r} (known: {', '.join(SEED_POLICIES)}) @ $.seed.policy")
    for role, values in settings.sampling.items():
        if "seed" in values:
            raise ConfigError(f"{path}: the seed is the [seed] policy's, not a sampling value @ $.sampling.{role}.seed")
    return settings


def _message_style(path: Path, own: _Messages, base: MessageStyle) -> MessageStyle:
    fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in attrs.asdict(own).items() if v is not None}
    for key, allowed in (("tool_call_fields", TOOL_CALL_FIELDS), ("tool_message_fields", TOOL_MESSAGE_FIELDS)):
        unknown = sorted(set(fields.get(key, ())) - allowed)
        if unknown:
            raise ConfigError(f"{path}: unknown field {unknown[0]!r} (known: {', '.join(sorted(allowed))}) @ $.messages.{key}")
    return MessageStyle(**{**attrs.asdict(base, recurse=False), **fields})


def _judge_style(path: Path, own: _Judge, base: JudgeStyle) -> JudgeStyle:
    fields = {k: v for k, v in attrs.asdict(own).items() if v is not None}
    for key, allowed in (("transcript", JUDGE_TRANSCRIPTS), ("statements", JUDGE_STATEMENTS), ("verdicts", JUDGE_VERDICTS)):
        if key in fields and fields[key] not in allowed:
            raise ConfigError(f"{path}: unknown judge {key} {fields[key]!r} (known: {', '.join(allowed)}) @ $.judge.{key}")
    return attrs.evolve(base, **fields)


def _texts(directory: Path) -> dict[str, str]:
    if not directory.is_dir():
        return {}
    texts = {}
    for path in sorted(directory.glob("*.md")):
        key, text = path.stem, read_text(path)
        unknown = sorted({m.group(1) for m in PLACEHOLDER.finditer(text)} - PLACEHOLDERS.get(key, frozenset()))
        if key in PLACEHOLDERS and unknown:
            allowed = ", ".join(sorted(PLACEHOLDERS[key])) or "none"
            raise ConfigError(f"{path}: unknown placeholder {{{{{unknown[0]}}}}} (text {key!r} takes: {allowed})")
        texts[key] = text
    return texts


def _tools(directory: Path) -> tuple[dict[str, dict[str, list[dict[str, Any]] | None]], dict[str, dict[str, dict[str, Any]]]]:
    if not directory.is_dir():
        return {}, {}
    found, discoverable = {}, {}
    for path in sorted(directory.glob("*.json")):
        if path.name != "done.json":
            data = read_json(path)
            found[path.stem] = _domain_tools(path, data)
            if isinstance(data, dict) and "discoverable" in data:
                discoverable[path.stem] = _discoverable(path, data["discoverable"])
    return found, discoverable


def _discoverable(path: Path, data: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(data, dict) or set(data) - {*SIDES, "formats"}:
        raise ConfigError(f'{path}: expected {{"agent": {{name: texts}}, "user": {{name: texts}}, "formats": {{key: template}}}} @ $.discoverable')
    formats = data.get("formats", {})
    if not isinstance(formats, dict) or not all(isinstance(v, str) for v in formats.values()):
        raise ConfigError(f"{path}: expected an object of template name -> text @ $.discoverable.formats")
    for side, tools in ((side, data[side]) for side in SIDES if side in data):
        if not isinstance(tools, dict):
            raise ConfigError(f"{path}: expected an object of tool name -> texts @ $.discoverable.{side}")
        for name, texts in tools.items():
            where = f"$.discoverable.{side}.{name}"
            if not isinstance(texts, dict) or not isinstance(texts.get("description"), str):
                raise ConfigError(f'{path}: expected {{"description": str, "params": [...], "returns": str}} @ {where}')
            params = texts.get("params", [])
            if not isinstance(params, list) or not all(isinstance(p, dict) and isinstance(p.get("name"), str) for p in params):
                raise ConfigError(f'{path}: expected a list of {{"name", "type", "optional", "description"}} @ {where}.params')
    return data


def _domain_tools(path: Path, data: Any) -> dict[str, list[dict[str, Any]] | None]:
    if not isinstance(data, dict) or set(data) - {*SIDES, "discoverable"} or "agent" not in data:
        raise ConfigError(f'{path}: expected {{"agent": [schemas], "user": [schemas] or null, "discoverable": ...}} @ $')
    sides: dict[str, list[dict[str, Any]] | None] = {}
    for side in SIDES:
        schemas = data.get(side)
        if schemas is not None:
            _check_schemas(path, side, schemas)
        sides[side] = schemas
    return sides


def _check_schemas(path: Path, side: str, schemas: Any) -> None:
    if not isinstance(schemas, list):
        raise ConfigError(f"{path}: expected a list of tool schemas @ $.{side}")
    seen: set[str] = set()
    for i, schema in enumerate(schemas):
        name = _schema_name(schema)
        if name is None:
            raise ConfigError(f'{path}: expected {{"type": "function", "function": {{"name": ...}}}} @ $.{side}[{i}]')
        if name in seen:
            raise ConfigError(f"{path}: tool {name!r} appears twice @ $.{side}[{i}]")
        seen.add(name)


def _schema_name(schema: Any) -> str | None:
    function = schema.get("function") if isinstance(schema, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    return name if isinstance(name, str) and name else None


def _done_tool(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    schema = read_json(path)
    if _schema_name(schema) is None:
        raise ConfigError(f'{path}: expected {{"type": "function", "function": {{"name": ...}}}} @ $')
    assert isinstance(schema, dict)
    return schema


def _pick(own: Any, inherited: Any, what: str) -> Any:
    if own is not None:
        return own
    if inherited is None:
        raise ConfigError(f"bench's own profile lacks {what}")
    return inherited


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
