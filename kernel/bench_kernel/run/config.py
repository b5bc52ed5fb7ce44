"""A run's configuration: what decides its results (identity, hash) and how it runs, each setting with its `bench run` option."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs
import click

from bench_kernel.conversation.loops import LOOP_PLUGINS
from bench_kernel.errors import ConfigError
from bench_kernel.modelhub.api import MAX_IN_FLIGHT, ModelConfig
from bench_kernel.modelhub.prices import Price, parse_price
from bench_kernel.profiles.profile import Profile, bench_profile
from bench_kernel.schema.messages import Mode
from bench_kernel.schema.results import ATTRIBUTION_LABELS
from bench_kernel.serialization import canonical_json, structure, unstructure

RECORDED = ("agent_fingerprint", "fingerprints")
"""What a run records beside its configuration's identity (`recorded_identity`)."""
MAX_CONCURRENCY = MAX_IN_FLIGHT
MAX_WORKERS = 256
"""Worker processes (or a cluster executor's actors) at most: each holds a copy of the run's context."""
MAX_TRIALS = 10_000
"""Trials per task at most: every (task, trial) is planned up front, so an absurd count would exhaust memory."""
MODEL_OPTIONS = {
    "model": "Model name for the {role}.",
    "backend": "Model backend for the {role} (default openai).",
    "base_url": "OpenAI-compatible base URL for the {role}.",
    "api_key_env": "Name of the environment variable holding the {role}'s API key.",
    "sampling": "Sampling arguments for the {role} as JSON, e.g. '{{\"temperature\": 0}}'.",
}
"""The --ROLE-KEY options (and BENCH_ROLE_KEY variables) of each role in `ROLES`: a run file's [models.ROLE] KEY."""
OPTIONS = "bench.options"
IDENTITY = "bench.identity"
"""The field metadata keys `option` sets."""


def parse_key_values(texts: Iterable[str], form: str = "KEY=VALUE") -> dict[str, Any]:
    """Repeated `KEY=VALUE` options as a dict, each value read as JSON when it parses, else kept as text."""
    found: dict[str, Any] = {}
    for text in texts:
        key, sep, raw = text.partition("=")
        if not sep or not key:
            raise ConfigError(f"expected {form}, got {text!r}")
        try:
            found[key] = json.loads(raw)
        except json.JSONDecodeError:
            found[key] = raw
    return found


def price_overrides(texts: tuple[str, ...]) -> dict[str, Price]:
    """Parse repeated --price MODEL=IN,OUT options."""
    try:
        return dict(parse_price(t) for t in texts)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc


@attrs.frozen(kw_only=True)
class RunOption:
    """One `bench run` option and the [run] key it sets, declared on the RunConfig field it belongs to (`option`)."""

    help: str
    flags: tuple[str, ...] = ()  # default: --DEST, with dashes
    key: str = ""
    """The [run] key it sets: its field's name (the default), or a plugin setting's."""
    part: str = ""
    """The one key it sets inside its field's table (as --tick-ms sets duplex's tick_ms), if any."""
    type: Any = None  # click's type for the value; when None, text or (with at_least) an integer range
    at_least: int | None = None
    at_most: int | None = None
    """Bounds of an integer, checked for options and run files alike (`run_config_problems`)."""
    multiple: bool = False
    flag: bool = False
    negated: bool = False  # a flag turning its setting off, as --no-baseline sets baseline = false
    envvar: str | None = None
    parse: Callable[[Any], Any] | None = None
    """What turns the option's texts into the setting's value (KEY=VALUE texts into a table); a ConfigError names the option."""
    plugin: str = ""
    """The first-party plugin owning the setting: setting it loads (or names) the plugin."""
    default: Any = None  # the default --help shows, when not its field's (which RUN_OPTIONS fills in)

    @property
    def dest(self) -> str:
        """The option's parameter name: its part, else its key."""
        return self.part or self.key


def option(
    default: Any = None,
    /,
    *,
    factory: Callable[[], Any] | None = None,
    identity: str = "always",
    parts: tuple[RunOption, ...] = (),
    **declared: Any,
) -> Any:
    """A RunConfig field with its `bench run` option (RunOption's fields) and its `identity`: "always", "when set" or "never"."""
    # "when set": left out while None, so runs from before the field keep their ids; "never": changing it resumes the run.
    metadata = {OPTIONS: ((RunOption(**declared),) if declared else ()) + parts, IDENTITY: identity}
    return attrs.field(default=default if factory is None else attrs.Factory(factory), metadata=metadata)


def duplex_option(part: str, help_text: str, **declared: Any) -> RunOption:
    """An option setting one of bench-duplex's settings (a key of the duplex table)."""
    return RunOption(part=part, help=f"Full duplex (bench-duplex): {help_text}", **declared)


def changebench_option(key: str, help_text: str, **declared: Any) -> RunOption:
    """An option setting one of bench-changebench's settings (a [run] key: a plugin setting)."""
    return RunOption(key=key, plugin="changebench", help=f"bench-changebench: {help_text}", **declared)


EXISTING_FILE = click.Path(dir_okay=False, exists=True)


class WorkersType(click.ParamType):
    """--workers: `auto` (None: the executor chooses) or a number of processes."""

    name = "auto|N"

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return self.name  # click shows a type's name upper-cased, and AUTO is not what one types

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int | None:
        if value is None or str(value).strip().lower() == "auto":
            return None
        return int(click.IntRange(1, MAX_WORKERS).convert(value, param, ctx))


WORKERS = WorkersType()


@attrs.frozen(kw_only=True)
class RunConfig:
    """Everything that decides a run's results (and how it is executed): each field a run file's [run] key and a `bench run` option."""

    plugins: list[str] | None = option(
        flags=("--plugin", "-p"), multiple=True, help="Load only this plugin (repeatable); no:NAME blocks one. Default: all installed."
    )
    domain: str | None = option(flags=("--domain", "-d"), help="Domain name (needed when several are loaded).")
    split: str | None = option(help="Task split (from the split file next to the tasks file).")
    tasks_file: str | None = option(type=EXISTING_FILE, help="Use this task file instead of the domain's.")
    data_dir: str | None = option(type=click.Path(file_okay=False), help="Load the domain's data from this directory.")
    retrieval: str | None = option(
        identity="when set",
        help="Knowledge-retrieval variant for domains whose agent searches documents "
        "(tau2's names: bm25, grep_only, full_kb, terminal_use, ...; docs/knowledge.md).",
    )
    retrieval_options: dict[str, Any] | None = option(
        identity="when set",
        flags=("--retrieval-option",),
        multiple=True,
        parse=parse_key_values,
        help="KEY=VALUE setting of the retrieval variant (repeatable): top_k, grep_top_k, case_sensitive, reranker_min_score.",
    )
    agent: str = option("oracle", help="Agent to evaluate.")
    user: str = option("scripted", help="User simulator (scripted: the domain's own scripted user when it names one).")
    judge: str | None = option(help="Judge for NL assertions.")
    judge_panel: int | None = option(
        identity="when set",
        at_least=1,
        help="Judge NL assertions N times (N odd, each with its own seed) and keep the majority per assertion; "
        "the agreement is stored and reported (docs/judges.md).",
    )
    judge_retries: int = option(
        2, identity="never", at_least=0, help="Ask the judge again after a failed judgment (unreadable, incomplete); never replays the conversation."
    )
    mode: Mode = option(
        Mode.DEFAULT,
        type=click.Choice([m.value for m in Mode]),
        help="default, no-user, oracle-plan (tau2's modes) or full-duplex (both sides stream audio in ticks).",
    )
    duplex: dict[str, Any] | None = option(
        identity="when set",
        parts=(
            duplex_option("tick_ms", "the length of a tick of simulated time in milliseconds (200).", type=int),
            duplex_option(
                "max_seconds", "a conversation's maximum length in simulated seconds (1200, tau2's).", flags=("--max-duration",), type=float
            ),
            duplex_option(
                "speech_complexity",
                "the speech conditions, one of tau2's levels: control (clean audio, the default), regular and six ablations; all but "
                "control need bench-voice (docs/duplex.md).",
            ),
        ),
    )
    """The settings of the loop playing the run's mode, owned by its plugin (bench-duplex's), as `ConversationLoop.configure` completes them."""
    channel: str = option("identity", help="Channel between user and agent (a plugin's, e.g. voice); identity passes text unchanged.")
    paired: bool | None = option(
        identity="when set", flag=True, help="Also play every conversation without the channel (arm 'text', same seed): modality comparisons."
    )
    sweep: dict[str, list[Any]] | None = option(
        identity="when set",
        parts=(
            RunOption(
                part="snr_db",
                flags=("--snr",),
                type=float,
                multiple=True,
                help="Noise level in dB for the voice channel (repeatable: a sweep in one run, one arm per level).",
            ),
        ),
    )
    """Channel option values to sweep, e.g. {"snr_db": [20, 5, -2]}: the first is arm "agent", each other its own arm ("snr_db=5")."""
    channel_options: dict[str, Any] | None = option(
        identity="when set",
        flags=("--channel-option",),
        multiple=True,
        parse=parse_key_values,
        help="KEY=VALUE option for the channel (repeatable), e.g. snr_db=5 for the voice channel.",
        parts=(
            RunOption(
                part="keep_audio",
                type=click.Path(file_okay=False),
                help="Keep the recordings of a speech channel in this directory (the voice channel's keep_audio option).",
            ),
        ),
    )
    exposure: str | None = option(
        identity="when set",
        type=click.Choice(["none", "persona", "context"]),
        help="What LLM agents are told about the customer: nothing, the task's persona, or a profile inferred every 3 user "
        "messages (MM-tau-p²'s conditions).",
    )
    profile: str | None = option(
        type=click.Path(file_okay=False, exists=True),
        envvar="BENCH_PROFILE",
        help="Profile directory: the prompts, tool schemas, sampling and seeds models see (default: bench's own; "
        "`bench tau2 profile` writes tau2's). See docs/profiles.md.",
    )
    plugin_settings: dict[str, Any] = option(
        factory=dict,
        parts=(
            changebench_option("persona", "give every task this persona (e.g. EASY_1, Hard); kept on every conversation."),
            changebench_option(
                "persona_file", "JSON object of persona key -> text adding to its texts (AgentChangeBench's user_personas.json).", type=EXISTING_FILE
            ),
            changebench_option("shifts", "chain each task with this many following tasks (goal shifts).", at_least=1),
            changebench_option("shift_plan", 'JSON list of {"task": id, "then": [ids]}.', type=EXISTING_FILE),
            changebench_option("turns_per_goal", "the scripted user moves on after this many turns on one goal.", at_least=1),
            RunOption(
                key="exclude_flagged",
                plugin="trust",
                multiple=True,
                parse=lambda texts: [name.strip() for text in texts for name in text.split(",") if name.strip()] or None,
                help="bench-trust: leave out tasks `bench audit` flags with FLAG (repeatable or comma separated, e.g. "
                "passed_by_floor,gold_fails; missing audits are run and cached first, docs/audit.md).",
            ),
        ),
    )
    """Task transforms' settings (`[run]` keys no field names, e.g. `shifts`), stored and hashed at the identity's top level."""
    trials: int = option(1, at_least=1, at_most=MAX_TRIALS, help="Conversations per task (pass^k needs k of them).")
    task_ids: list[str] | None = option(flags=("--task-id",), multiple=True, help="Run only these tasks (repeatable).")
    num_tasks: int | None = option(at_least=1, help="Run only the first N tasks.")
    seed: int = option(300, type=int, help="The run's seed: each conversation's derives from it, the task and the trial.")
    max_steps: int = option(200, at_least=1, help="Steps (turns of either side) a conversation may take before it stops.")
    max_errors: int = option(10, at_least=1, help="Tool errors a conversation may meet before it stops.")
    conversation_timeout_s: float | None = option(flags=("--timeout",), type=float, help="Seconds per conversation.")
    run_timeout_s: float | None = option(identity="never", flags=("--run-timeout",), type=float, help="Seconds for the whole run (resumable).")
    concurrency: int = option(32, identity="never", at_least=1, at_most=MAX_CONCURRENCY, help="Conversations in flight.")
    workers: int | None = option(
        None,
        identity="never",
        type=WORKERS,
        default="auto",
        at_least=1,
        at_most=MAX_WORKERS,
        envvar="BENCH_WORKERS",
        help="Processes playing conversations (bench-workers: forked after loading where the platform can; bench-ray: actors); "
        "this process alone writes. auto: as many as the run's conversations in flight and the CPUs call for (the header says why).",
    )
    """None (`auto`): the executor chooses (bench-workers': by the conversations in flight and the CPUs)."""
    executor: str = option(
        "local",
        identity="never",
        envvar="BENCH_EXECUTOR",
        help="Where conversations are played: local (this machine) or a plugin's executor, e.g. ray.",
    )
    executor_options: dict[str, Any] = option(
        factory=dict,
        identity="never",
        flags=("--executor-option",),
        multiple=True,
        parse=parse_key_values,
        help="KEY=VALUE option for the executor (repeatable), e.g. address=ray://head:10001 for ray.",
    )
    max_in_flight: int | None = option(
        identity="never",
        at_least=1,
        at_most=MAX_CONCURRENCY,
        envvar="BENCH_MAX_IN_FLIGHT",
        help="Requests in flight per model endpoint at most (default: --concurrency x the roles sharing the "
        "endpoint; a role's max_concurrency setting wins). The run header prints the limits in force.",
    )
    baseline: bool = option(True, flags=("--no-baseline",), flag=True, negated=True, help="Skip the do-nothing baseline conversations.")
    allow_broken_tasks: bool = option(
        False,
        identity="never",
        flag=True,
        help="Run tasks whose gold replay fails (refused otherwise, as `bench check` reports them); the report "
        "lists them and says their rewards are not meaningful.",
    )
    run_id: str | None = option(identity="never", help="Run id (default: derived from the configuration, so re-running resumes).")
    retry_attributed: list[str] | None = option(
        identity="never",
        multiple=True,
        type=click.Choice([label for label in ATTRIBUTION_LABELS if label != "agent"]),
        help="With the run's own options: play again, as new rows, its conversations whose failure is attributed "
        "to this label (repeatable; judge: judged again, not played); the old rows are kept, marked "
        "superseded. The agent's own failures cannot be retried: that would report best-of-N "
        "(docs/attribution.md).",
    )
    agent_options: dict[str, Any] = option(
        factory=dict,
        flags=("--agent-option",),
        multiple=True,
        parse=parse_key_values,
        help="KEY=VALUE option for the agent (repeatable; VALUE parsed as JSON when it is), e.g. url=http://...",
    )
    user_options: dict[str, Any] = option(
        factory=dict, flags=("--user-option",), multiple=True, parse=parse_key_values, help="KEY=VALUE option for the user simulator (repeatable)."
    )
    models: dict[str, ModelConfig] = option(
        factory=dict,
        flags=("--model-option",),
        multiple=True,
        parse=parse_key_values,
        help="ROLE.KEY=VALUE for any model role (repeatable), e.g. judge-2.model=gpt-4.1 or tts.backend=piper.",
    )
    """Model per role, a run file's [models.ROLE] tables (also --ROLE-KEY options); API keys are named by variable, never stored."""
    cache: bool = option(False, identity="never", flag=True, help="Answer repeated model requests from the SQLite cache (no HTTP call).")
    speech_cache: bool = option(
        True,
        identity="never",
        flags=("--no-speech-cache",),
        flag=True,
        negated=True,
        help="Synthesise and recognise every spoken turn anew (by default each text is spoken once per engine and "
        "voice, and each recording recognised once, for every arm, noise level, trial and resume of the run).",
    )
    max_cost: float | None = option(identity="never", type=click.FloatRange(0), help="Stop the run cleanly once model costs reach this many USD.")
    prices: dict[str, Price] = option(
        factory=dict,
        identity="never",
        flags=("--price",),
        multiple=True,
        parse=price_overrides,
        help="MODEL=PROMPT,COMPLETION in USD per million tokens (repeatable); a run file's [prices] table.",
    )

    @classmethod
    def from_stored(cls, recorded: Mapping[str, Any], *, source: str = "a stored run's configuration") -> RunConfig:
        """The configuration a run stored (its `recorded_identity`), execution settings at their defaults."""
        fields = {f.name for f in attrs.fields(cls)} - set(EXECUTION_ONLY)
        data = {key: value for key, value in recorded.items() if key in fields}
        profile = recorded.get("profile")  # stored by name and content: its directory is what a run is given
        data["profile"] = profile.get("path") if isinstance(profile, Mapping) else None
        return structure({**data, "plugin_settings": stored_plugin_settings(recorded)}, cls, source=source)

    def implied_plugins(self) -> list[str]:
        """Plugins the run loads with those it names: its roles' backends, its mode's loop and its plugin settings' owners."""
        loop = LOOP_PLUGINS.get(self.mode.value)
        owners = [PLUGIN_SETTINGS[key] for key in self.plugin_settings if key in PLUGIN_SETTINGS]
        return [m.backend for m in self.models.values()] + ([loop] if loop else []) + owners

    def identity(self) -> dict[str, Any]:
        """The result-deciding part of the configuration, as stored and hashed."""
        data = unstructure(self)
        data.update({key: value for key, value in data.pop("plugin_settings").items() if value is not None})
        # OPTIONAL_IDENTITY: left out while unset, so runs configured before they existed keep their ids
        data = {key: value for key, value in data.items() if key not in EXECUTION_ONLY and (value is not None or key not in OPTIONAL_IDENTITY)}
        for role in data["models"].values():
            for key in ("timeout_s", "max_concurrency", "max_retries"):
                role.pop(key)
        return data

    def recorded_identity(
        self, profile: Profile, agent_fingerprint: Mapping[str, str] | None = None, fingerprints: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """The identity as a run stores it: with the profile (name, hash, directory, sampling) and any fingerprints."""
        sampling = {role: dict(values) for role, values in profile.sampling.items()}
        recorded = {**self.identity(), "profile": {**profile.identity(), "path": profile.path, "sampling": sampling}}
        return _with_fingerprints(recorded, agent_fingerprint, fingerprints)

    def config_hash(
        self,
        task_sets: dict[str, str] | None = None,
        profile: Profile | None = None,
        agent_fingerprint: Mapping[str, str] | None = None,
        fingerprints: Mapping[str, str] | None = None,
        by_content: Iterable[str] = (),
    ) -> str:
        """sha256 of the identity, with data paths replaced by the content they hold: a resumed run must match it."""
        # The run id derives from it: a data directory spelt relative or absolute names one run. A file a setting in
        # `by_content` names (a persona file) counts by its content, which is in the tasks.
        identity = _with_fingerprints(self.identity(), agent_fingerprint, fingerprints)
        if profile is None and self.profile is not None:  # the reader is a plugin's, which this layer cannot reach
            raise ConfigError(f"config_hash: pass the profile loaded from {self.profile} (bench_kernel.load_profile)")
        identity["profile"] = (profile or bench_profile()).identity()
        if task_sets is not None:
            identity.update(data_dir=None, tasks_file=None, task_sets=task_sets)
            identity.update({key: "content in task_sets" for key in by_content if key in identity})
        return hashlib.sha256(canonical_json(identity).encode()).hexdigest()


def _declared_options() -> tuple[RunOption, ...]:
    """Every field's options with their keys, flags and shown defaults filled in."""
    found = []
    for field in attrs.fields(RunConfig):
        for declared in field.metadata[OPTIONS]:
            opt = attrs.evolve(declared, key=declared.key or field.name)
            shown = getattr(field.default, "value", field.default)  # an enum's value
            if opt.part or opt.key != field.name or isinstance(shown, bool) or not isinstance(shown, str | int):
                shown = None  # flags and settings without a plain default show none
            shown = declared.default if declared.default is not None else shown
            found.append(attrs.evolve(opt, flags=opt.flags or (f"--{opt.dest.replace('_', '-')}",), default=shown))
    return tuple(found)


RUN_OPTIONS = _declared_options()
"""Every `bench run` option that sets the configuration, in RunConfig's order (`bench_kernel.cli` makes them click options)."""
EXECUTION_ONLY = tuple(f.name for f in attrs.fields(RunConfig) if f.metadata[IDENTITY] == "never")
"""The settings outside a run's identity: changing one resumes the same run."""
OPTIONAL_IDENTITY = tuple(f.name for f in attrs.fields(RunConfig) if f.metadata[IDENTITY] == "when set")
"""The settings in a run's identity only when set, so runs configured before they existed keep their ids."""
PLUGIN_SETTINGS = {opt.key: opt.plugin for opt in RUN_OPTIONS if opt.plugin}
"""First-party plugins' settings, which `bench run` has options for: setting one loads its plugin (or names it)."""
DOMAIN_SETTINGS = ("domain", "split", "tasks_file", "data_dir", "retrieval", "retrieval_options")
"""The settings that decide which domain data and tasks a run has (with its plugin settings): `bench tasks` takes them too."""


def stored_plugin_settings(recorded: Mapping[str, Any]) -> dict[str, Any]:
    """The plugin settings in a run's recorded identity: its keys that neither a field nor the run's records name."""
    fields = {f.name for f in attrs.fields(RunConfig)}
    return {key: value for key, value in recorded.items() if key not in fields and key not in RECORDED}


def _with_fingerprints(
    identity: dict[str, Any], agent_fingerprint: Mapping[str, str] | None, fingerprints: Mapping[str, str] | None
) -> dict[str, Any]:
    """The identity with the non-empty fingerprints: left out when empty, so earlier runs keep their ids."""
    extra = {"agent_fingerprint": dict(agent_fingerprint or {}), "fingerprints": dict(sorted((fingerprints or {}).items()))}
    return {**identity, **{key: value for key, value in extra.items() if value}}


def source_fingerprint(file: str | Path) -> str:
    """The sha256 of every `.py` file of the package holding `file` (or of the file alone): `code_fingerprint = source_fingerprint(__file__)`."""
    path = Path(file).resolve()
    root = path.parent if (path.parent / "__init__.py").is_file() else None
    files = sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts) if root is not None else [path]
    digest = hashlib.sha256()
    for source in files:
        digest.update(f"{source.relative_to(root) if root is not None else source.name}\0".encode())
        digest.update(source.read_bytes() + b"\0")
    return digest.hexdigest()
