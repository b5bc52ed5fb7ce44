"""Reading a profile directory over bench's own: profile.toml, texts, tool schemas, each checked (docs/profiles.md)."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from bench_kernel import (
    PLACEHOLDER,
    PLACEHOLDERS,
    PROFILE_FORMAT,
    PROFILE_NAME,
    ConfigError,
    JudgeStyle,
    MessageStyle,
    Profile,
    ProfileReader,
    check_plain_data,
    hashed_profile,
    read_json,
    read_text,
    structure,
)

SEED_POLICIES = ("conversation", "trial")
SIDES = ("agent", "user")
TOOL_CALL_FIELDS = frozenset({"id", "type", "function", "name"})
TOOL_MESSAGE_FIELDS = frozenset({"role", "content", "tool_call_id"})
JUDGE_TRANSCRIPTS = ("bench", "lines")
JUDGE_STATEMENTS = ("numbered", "python_list")
JUDGE_VERDICTS = ("index", "echo")


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
class DirectoryReader(ProfileReader):
    """The reader `--profile DIR` uses: a partial directory takes what it lacks from bench's own profile."""

    name: str = "profiles"

    def read(self, directory: Path, base: Profile) -> Profile:
        """The profile in `directory` over `base`; ConfigError naming the file and JSON path of the first problem."""
        return read_profile(directory, base)


def read_profile(directory: Path, base: Profile) -> Profile:
    """The profile in `directory`, every key it leaves out taken from `base`."""
    if not directory.is_dir():
        raise ConfigError(f"{directory}: no profile directory there (see docs/profiles.md)")
    settings = _settings(directory / "profile.toml")
    texts = {**base.texts, **_texts(directory / "texts")}
    tools, discoverable = _tools(directory / "tools")
    conversation = settings.conversation
    fields: dict[str, Any] = {
        "name": settings.name,
        "description": settings.description,
        "source": settings.source,
        "path": str(directory.resolve()),
        "texts": texts,
        "tools": tools,
        "discoverable": discoverable,
        "done_tool": _done_tool(directory / "tools" / "done.json") or base.done_tool,
        "sampling": _merged_sampling(base.sampling, settings.sampling),
        "seed_policy": settings.seed.policy or base.seed_policy,
        "greeting": _own_or(conversation.greeting, base.greeting),
        "greeting_in_agent_history": _own_or(conversation.greeting_in_agent_history, base.greeting_in_agent_history),
        "user_stop_tokens": tuple(_own_or(conversation.user_stop_tokens, base.user_stop_tokens)),
        "solo_stop_token": _own_or(conversation.solo_stop_token, base.solo_stop_token),
        "messages": _message_style(directory / "profile.toml", settings.messages, base.messages),
        "meaning": {**base.meaning, **settings.meaning},
        "judge": _judge_style(directory / "profile.toml", settings.judge, base.judge),
    }
    return hashed_profile(**fields)


def _own_or(own: Any, inherited: Any) -> Any:
    return inherited if own is None else own


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
