"""`bench tau2 profile`: run tau2_dump.py inside the user's tau2 Python and write its output as a profile directory."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from bench_kernel import PLACEHOLDER, PLACEHOLDERS, PROFILE_FORMAT, PROFILE_NAME, ConfigError

DUMP_SCRIPT = Path(__file__).with_name("tau2_dump.py")
DUMP_FORMAT = 1
DUMP_TIMEOUT_S = 900
TAU2_TEXTS = frozenset(
    {
        "agent",
        "agent_solo",
        "agent_plan",
        "plan_step_agent",
        "plan_step_user",
        "plan_separator",
        "user",
        "user_tools",
        "judge_system",
        "judge_user",
        "judge_line",
    }
)
"""The texts a tau2 dump provides (the kernel's PLACEHOLDERS say which placeholders each may use)."""
ROLES = ("agent", "user", "judge")
STDERR_TAIL = 2000


@attrs.frozen(kw_only=True)
class Tau2Dump:
    """What tau2_dump.py printed, checked."""

    source: dict[str, Any]
    texts: dict[str, str]
    tools: dict[str, dict[str, Any]]
    """Per domain: "agent" and "user" schemas, and "discoverable" texts for domains with hidden tools."""
    failed_domains: dict[str, str]
    done_tool: dict[str, Any]
    sampling: dict[str, dict[str, Any]]
    seed: dict[str, Any]
    conversation: dict[str, Any]
    messages: dict[str, Any]
    """How tau2's requests spell messages on the wire, from a request its own `generate` sent to a loopback probe."""
    judge: dict[str, Any] = attrs.field(factory=dict)
    """The [judge] style of tau2's NL-assertion judge ({}: this tau2 has none, bench's judge is kept)."""


@attrs.frozen(kw_only=True)
class WrittenProfile:
    """What `bench tau2 profile` wrote, for its summary."""

    name: str
    directory: Path
    version: str
    tools: dict[str, tuple[int, int | None]]
    """Per domain written, the number of agent tools and of user tools (None: the domain gives the user none)."""
    skipped: dict[str, str]
    """Domains of tau2's registry whose environment did not build, with the error."""
    data_dir: str = ""
    """The data directory the dump's tau2 read (TAU2_DATA_DIR, or the one it found)."""


def make_tau2_profile(
    python: str,
    output: Path,
    *,
    data_dir: str | None = None,
    domains: Sequence[str] = (),
    name: str | None = None,
    force: bool = False,
    user_simulator: str | None = None,
) -> WrittenProfile:
    """Dump tau2's profile with `python` and write it into `output` (docs/profiles.md)."""
    profile_name = name or "tau2"
    if not PROFILE_NAME.match(profile_name):
        raise ConfigError(f"--name: a profile name is letters, digits, '.', '_' and '-', not {profile_name!r}")
    check_output_dir(output, force)
    if data_dir is not None and not (Path(data_dir) / "tau2").is_dir():
        raise ConfigError(
            f"--data-dir {data_dir}: no tau2/ folder in it (name tau2's data directory, the data/ folder of a "
            "tau2-bench checkout, with tau2/domains and tau2/user_simulator)"
        )
    document = run_dump(python, data_dir=data_dir, domains=domains, user_simulator=user_simulator)
    dump = check_dump(python, document)
    explicit_failures = {d: dump.failed_domains[d] for d in domains if d in dump.failed_domains}
    if explicit_failures:
        raise ConfigError(f"{python}: domain(s) did not build: " + "; ".join(f"{d}: {error}" for d, error in explicit_failures.items()))
    if not dump.tools:
        raise ConfigError(f"{python}: no domain of tau2's registry built (" + "; ".join(f"{d}: {e}" for d, e in dump.failed_domains.items()) + ")")
    write_profile(output, with_voice_texts(dump), name=profile_name, python=python)
    return WrittenProfile(
        name=profile_name,
        directory=output,
        version=str(dump.source.get("version", "unknown")),
        data_dir=str(dump.source.get("data_dir") or ""),
        tools={d: (len(s["agent"] or []), None if s["user"] is None else len(s["user"])) for d, s in dump.tools.items()},
        skipped=dump.failed_domains,
    )


VOICE_GUIDELINES = {
    "voice_user": ("user", "simulation_guidelines.md", "simulation_guidelines_voice.md"),
    "voice_user_tools": ("user_tools", "simulation_guidelines_tools.md", "simulation_guidelines_voice_tools.md"),
}
"""bench-llm's voice user texts: (the text prompt they follow, tau2's text guidelines file, its voice guidelines file)."""
PERSONA_SLOT = "<PERSONA_GUIDELINES>"


def with_voice_texts(dump: Tau2Dump) -> Tau2Dump:
    """The dump plus tau2's voice user prompts, when its data dir has the voice guideline files.

    tau2 builds the voice prompt as the text one with the voice guidelines in place of the text guidelines; the
    persona slot becomes {{persona}}. A prompt that does not hold the text guidelines file verbatim gets none.
    """
    data_dir = str(dump.source.get("data_dir") or "")
    if not data_dir:
        return dump
    folder = Path(data_dir) / "tau2" / "user_simulator"
    found = {}
    for key, (prompt_key, text_file, voice_file) in VOICE_GUIDELINES.items():
        try:
            text, voice = (folder / text_file).read_text(encoding="utf-8"), (folder / voice_file).read_text(encoding="utf-8")
        except OSError:
            continue
        prompt = dump.texts.get(prompt_key, "")
        if text and prompt.count(text) == 1:
            found[key] = prompt.replace(text, voice.replace(PERSONA_SLOT, "{{persona}}"))
    return attrs.evolve(dump, texts={**dump.texts, **found}) if found else dump


def check_output_dir(output: Path, force: bool) -> None:
    """Refuse a file, or a non-empty directory unless forced."""
    if output.exists() and not output.is_dir():
        raise ConfigError(f"{output}: exists and is not a directory")
    if output.is_dir() and any(output.iterdir()) and not force:
        raise ConfigError(f"{output}: directory is not empty (--force overwrites the profile in it)")


def run_dump(python: str, *, data_dir: str | None, domains: Sequence[str], user_simulator: str | None) -> Any:
    """Run the dump script in `python` and parse the JSON document it prints; ConfigError naming `python` otherwise."""
    env = dict(os.environ)
    # Offline: litellm would fetch its price map at import; the probe request goes to loopback, never via a proxy.
    env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    env["NO_PROXY"] = ",".join(filter(None, [env.get("NO_PROXY"), "127.0.0.1"]))
    if data_dir is not None:
        env["TAU2_DATA_DIR"] = str(Path(data_dir).resolve())
    args = [python, str(DUMP_SCRIPT), *(a for d in domains for a in ("--domain", d))]
    if user_simulator:
        args += ["--user-simulator", user_simulator]
    try:
        done = subprocess.run(args, capture_output=True, text=True, encoding="utf-8", errors="replace", env=env, timeout=DUMP_TIMEOUT_S, check=False)
    except FileNotFoundError:
        raise ConfigError(f"{python}: no such Python (--tau2-python must name a Python where `import tau2` works)") from None
    except PermissionError:
        raise ConfigError(f"{python}: not executable (--tau2-python must name a Python where `import tau2` works)") from None
    except subprocess.TimeoutExpired:
        raise ConfigError(f"{python}: the tau2 dump did not finish in {DUMP_TIMEOUT_S} s") from None
    if done.returncode != 0:
        raise ConfigError(f"{python}: the tau2 dump failed (exit {done.returncode}): {stderr_cause(done.stderr)}")
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{python}: the tau2 dump printed no JSON document ({exc}); stderr: {stderr_cause(done.stderr)}") from None


def stderr_cause(stderr: str) -> str:
    """The line of a failed dump's stderr that says why: its own `error:` line, else the last line (a traceback's)."""
    lines = [line.strip() for line in stderr[-STDERR_TAIL:].splitlines() if line.strip()]
    if not lines:
        return "(nothing on stderr)"
    last = lines[-1]
    return last.removeprefix("error: ")


def check_dump(python: str, document: Any) -> Tau2Dump:
    """The dump document as a Tau2Dump; ConfigError naming the JSON path of the first problem."""
    where = f"{python}: the tau2 dump"
    doc = _mapping(document, where, "$")
    if doc.get("dump_format") != DUMP_FORMAT:
        raise ConfigError(f"{where} has format {doc.get('dump_format')!r}, this bench reads {DUMP_FORMAT} @ $.dump_format")
    texts = {key: _string(value, where, f"$.texts.{key}") for key, value in _mapping(doc.get("texts"), where, "$.texts").items()}
    for key, text in texts.items():
        _check_placeholders(key, text, where)
    tools = {domain: _domain_tools(sides, where, f"$.tools.{domain}") for domain, sides in _mapping(doc.get("tools"), where, "$.tools").items()}
    for domain in tools:
        if domain == "done" or not PROFILE_NAME.match(domain):
            raise ConfigError(f"{where}: domain name {domain!r} cannot name a file tools/{domain}.json @ $.tools")
    return Tau2Dump(
        source=dict(_mapping(doc.get("source"), where, "$.source")),
        texts=texts,
        tools=tools,
        failed_domains={d: str(e) for d, e in _mapping(doc.get("failed_domains", {}), where, "$.failed_domains").items()},
        done_tool=_schema(doc.get("done_tool"), where, "$.done_tool"),
        sampling={
            role: dict(_mapping(values, where, f"$.sampling.{role}"))
            for role, values in _mapping(doc.get("sampling"), where, "$.sampling").items()
            if role in ROLES
        },
        seed=dict(_mapping(doc.get("seed"), where, "$.seed")),
        conversation=dict(_mapping(doc.get("conversation"), where, "$.conversation")),
        messages=dict(_mapping(doc.get("messages"), where, "$.messages")),
        judge=dict(_mapping(doc.get("judge", {}), where, "$.judge")),
    )


def _check_placeholders(key: str, text: str, where: str) -> None:
    allowed = PLACEHOLDERS.get(key) if key in TAU2_TEXTS else None
    if allowed is None:
        raise ConfigError(f"{where} has a text bench does not know @ $.texts.{key}")
    unknown = sorted({m.group(1) for m in PLACEHOLDER.finditer(text)} - allowed)
    if unknown:
        raise ConfigError(f"{where}: text {key!r} uses {{{{{unknown[0]}}}}}, which it does not take @ $.texts.{key}")


def _domain_tools(sides: Any, where: str, path: str) -> dict[str, Any]:
    found = _mapping(sides, where, path)
    agent = found.get("agent")
    user = found.get("user")
    tools: dict[str, Any] = {
        "agent": _schemas(agent, where, f"{path}.agent"),
        "user": None if user is None else _schemas(user, where, f"{path}.user"),
    }
    if "discoverable" in found:
        tools["discoverable"] = dict(_mapping(found["discoverable"], where, f"{path}.discoverable"))
    return tools


def _schemas(value: Any, where: str, path: str) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise ConfigError(f"{where}: expected a list of tool schemas @ {path}")
    schemas = [_schema(item, where, f"{path}[{i}]") for i, item in enumerate(value)]
    names = [s["function"]["name"] for s in schemas]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(f"{where}: tool {twice[0]!r} appears twice @ {path}")
    return schemas


def _schema(value: Any, where: str, path: str) -> dict[str, Any]:
    function = value.get("function") if isinstance(value, dict) else None
    if not (isinstance(function, dict) and isinstance(function.get("name"), str) and function["name"]):
        raise ConfigError(f'{where}: expected {{"type": "function", "function": {{"name": ...}}}} @ {path}')
    return value


def _mapping(value: Any, where: str, path: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected an object @ {path}")
    return value


def _string(value: Any, where: str, path: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{where}: expected a string @ {path}")
    return value


def write_profile(output: Path, dump: Tau2Dump, *, name: str, python: str) -> None:
    """Write profile.toml, texts/<key>.md, tools/<domain>.json and tools/done.json into `output`."""
    clear_profile(output)
    (output / "texts").mkdir(parents=True, exist_ok=True)
    (output / "tools").mkdir(exist_ok=True)
    (output / "profile.toml").write_text(profile_toml(dump, name=name, python=python), encoding="utf-8")
    for key, text in dump.texts.items():
        with open(output / "texts" / f"{key}.md", "w", encoding="utf-8", newline="") as handle:
            handle.write(text)  # byte for byte: no newline added, none translated
    for domain, sides in dump.tools.items():
        write_json(output / "tools" / f"{domain}.json", sides)
    write_json(output / "tools" / "done.json", dump.done_tool)


def clear_profile(output: Path) -> None:
    """Remove a previous profile's files (profile.toml, texts/*.md, tools/*.json) and nothing else."""
    for path in [output / "profile.toml", *output.glob("texts/*.md"), *output.glob("tools/*.json")]:
        if path.is_file():
            path.unlink()


def write_json(path: Path, value: Any) -> None:
    """JSON with the dump's key order kept."""
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def profile_toml(dump: Tau2Dump, *, name: str, python: str) -> str:
    """profile.toml for a tau2 dump."""
    source = dump.source
    version = str(source.get("version", "unknown"))
    tables: dict[str, Mapping[str, Any]] = {
        "source": {
            "tool": "bench tau2 profile",
            "python": python,
            **source,
            "domains": sorted(dump.tools),
            "skipped_domains": sorted(dump.failed_domains),
        },
        **{f"sampling.{role}": values for role, values in dump.sampling.items()},
        "seed": dump.seed,
        "conversation": dump.conversation,
        "messages": dump.messages,
        **({"judge": dump.judge} if dump.judge else {}),
    }
    description = f"{source.get('package', 'tau2')} {version}: its prompts, tool schemas and defaults"
    lines = [f"format = {PROFILE_FORMAT}", f"name = {toml_value(name)}", f"description = {toml_value(description)}"]
    for table, values in tables.items():
        lines += ["", f"[{table}]", *(f"{toml_key(k)} = {toml_value(v)}" for k, v in values.items() if v is not None)]
    return "\n".join(lines) + "\n"


def toml_key(key: str) -> str:
    """A bare key when TOML allows one, else a quoted one."""
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else toml_value(key)


def toml_value(value: Any) -> str:
    """A TOML value for plain JSON-like data (None entries of tables are left out)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
        return repr(value)
    if isinstance(value, str):
        # JSON's escapes are TOML's, except that TOML also wants DEL escaped
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items() if v is not None) + "}"
    raise ConfigError(f"cannot write {value!r} in profile.toml")
