"""A run's configuration: what decides its results (its identity and hash) and how it is executed."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from bench_kernel.conversation.loops import LOOP_PLUGINS
from bench_kernel.modelhub.api import ModelConfig
from bench_kernel.modelhub.prices import Price
from bench_kernel.profiles.profile import Profile, load_profile
from bench_kernel.schema.messages import Mode
from bench_kernel.serialization import canonical_json, structure, unstructure

EXECUTION_ONLY = (
    "run_id",
    "concurrency",
    "max_in_flight",
    "run_timeout_s",
    "cache",
    "max_cost",
    "prices",
    "executor",
    "executor_options",
    "workers",
    "allow_broken_tasks",
    "speech_cache",
    "retry_attributed",
    "judge_retries",
)
RECORDED = ("agent_fingerprint", "fingerprints")
"""What a run records beside its configuration's identity (`recorded_identity`)."""
PLUGIN_SETTINGS = {name: "changebench" for name in ("persona", "persona_file", "shifts", "shift_plan", "turns_per_goal")}
"""First-party plugins' settings, which `bench run` has options for: setting one loads its plugin (or names it)."""
OPTIONAL_IDENTITY = (
    "channel_options",
    "paired",
    "sweep",
    "exposure",
    "retrieval",
    "retrieval_options",
    "duplex",
    "exclude_flagged",
    "judge_panel",
)


@attrs.frozen(kw_only=True)
class RunConfig:
    """Everything that decides a run's results (and, apart from them, how it is executed)."""

    domain: str | None = None
    agent: str = "oracle"
    user: str = "scripted"
    judge: str | None = None
    mode: Mode = Mode.DEFAULT
    channel: str = "identity"
    trials: int = 1
    task_ids: list[str] | None = None
    split: str | None = None
    num_tasks: int | None = None
    seed: int = 300
    max_steps: int = 200
    max_errors: int = 10
    conversation_timeout_s: float | None = None
    baseline: bool = True
    data_dir: str | None = None
    tasks_file: str | None = None
    retrieval: str | None = None
    """The knowledge-retrieval variant (`--retrieval`) of a domain whose agent searches documents (docs/knowledge.md)."""
    retrieval_options: dict[str, Any] | None = None
    """Its settings (`--retrieval-option KEY=VALUE`), e.g. {"top_k": 5}."""
    plugins: list[str] | None = None
    agent_options: dict[str, Any] = attrs.field(factory=dict)
    user_options: dict[str, Any] = attrs.field(factory=dict)
    models: dict[str, ModelConfig] = attrs.field(factory=dict)
    """Model per role (agent, user, judge); keys are named by variable, never stored."""
    plugin_settings: dict[str, Any] = attrs.field(factory=dict)
    """The settings task transforms own (`[run]` keys no field names, e.g. bench-changebench's `shifts`), stored and
    hashed at the identity's top level as if they were fields."""
    channel_options: dict[str, Any] | None = None
    """Options for the channel (`--channel-option KEY=VALUE`), e.g. the voice channel's snr_db."""
    paired: bool | None = None
    """Also play every agent conversation without the channel (arm "text", same seed) to compare the modalities."""
    exposure: str | None = None
    """What the agent is told about the customer: "none", "persona" (the task's persona text) or "context" (a
    profile a profiler infers from the conversation every 3 user messages), MM-tau-p²'s conditions."""
    sweep: dict[str, list[Any]] | None = None
    """Channel option values to sweep in one run, e.g. {"snr_db": [20, 5, -2]}: the first is arm "agent", each other
    value its own arm named "snr_db=5" (same seeds), so a report compares them."""
    duplex: dict[str, Any] | None = None
    """The settings of the loop playing the run's mode, owned by its plugin (bench-duplex's `DuplexSettings` in
    --mode full-duplex: tick, time limit, speech complexity, turn-taking), as `ConversationLoop.configure` completes them."""
    profile: str | None = None
    """A profile directory (docs/profiles.md): prompts, tool schemas, sampling and seeds; None is bench's own."""
    judge_panel: int | None = None
    """Judge NL assertions this many times (odd), each with its own seed, and keep the majority (docs/judges.md)."""
    exclude_flagged: list[str] | None = None
    """Leave out the selected tasks that `bench audit` flags with one of these flags (docs/audit.md)."""
    # Execution only: not part of the configuration hash.
    run_id: str | None = None
    concurrency: int = 32
    max_in_flight: int | None = None
    """Requests in flight per endpoint at most, for endpoints whose roles set no max_concurrency (default: concurrency x roles)."""
    run_timeout_s: float | None = None
    cache: bool = False
    speech_cache: bool = True
    """Synthesise each text once per engine and voice, and recognise each recording once, for the whole run (every arm,
    noise level, trial and resume), keeping both in the results database; --no-speech-cache turns it off."""
    max_cost: float | None = None
    prices: dict[str, Price] = attrs.field(factory=dict)
    executor: str = "local"
    """Where conversations are played (a registered executor: local, or a plugin's such as ray); this process stores."""
    executor_options: dict[str, Any] = attrs.field(factory=dict)
    workers: int | None = None
    """Processes (or a cluster executor's actors) playing conversations; the run's process alone writes. None (`auto`):
    the executor chooses (local: more than one where one process's loop would hold too many conversations)."""
    judge_retries: int = 2
    """Ask the judge again this many times after a failed judgment (an unreadable or incomplete verdict)."""
    allow_broken_tasks: bool = False
    """Run tasks whose gold replay fails (refused otherwise, before anything is stored); the report lists them."""
    retry_attributed: list[str] | None = None
    """Play again, as new rows, the finished conversations whose failure is attributed to one of these labels
    (`--retry-attributed user-simulator`, docs/attribution.md); the rows they replace are kept, marked superseded."""

    @classmethod
    def from_stored(cls, recorded: Mapping[str, Any], *, source: str = "a stored run's configuration") -> RunConfig:
        """The configuration a run stored (its `recorded_identity`), execution settings at their defaults."""
        fields = {f.name for f in attrs.fields(cls)} - set(EXECUTION_ONLY)
        data = {key: value for key, value in recorded.items() if key in fields}
        profile = recorded.get("profile")  # stored by name and content: its directory is what a run is given
        data["profile"] = profile.get("path") if isinstance(profile, Mapping) else None
        return structure({**data, "plugin_settings": stored_plugin_settings(recorded)}, cls, source=source)

    def implied_plugins(self) -> list[str]:
        """Plugins the run loads with those it names: each role's backend's, the one playing its mode (bench-duplex) and
        the owners of its first-party plugin settings (bench-changebench's)."""
        loop = LOOP_PLUGINS.get(self.mode.value)
        owners = [PLUGIN_SETTINGS[key] for key in self.plugin_settings if key in PLUGIN_SETTINGS]
        return [m.backend for m in self.models.values()] + ([loop] if loop else []) + owners

    def identity(self) -> dict[str, Any]:
        """The result-deciding part of the configuration, as stored and hashed."""
        data = unstructure(self)
        data.update({key: value for key, value in data.pop("plugin_settings").items() if value is not None})
        for key in EXECUTION_ONLY:
            data.pop(key)
        for key in OPTIONAL_IDENTITY:  # left out while unset, so runs configured before they existed keep their ids
            if data.get(key) is None:
                data.pop(key, None)
        for role in data["models"].values():
            for key in ("timeout_s", "max_concurrency", "max_retries"):
                role.pop(key)
        return data

    def recorded_identity(
        self, profile: Profile, agent_fingerprint: Mapping[str, str] | None = None, fingerprints: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """The identity as a run stores it: the profile by name, content hash, directory and sampling defaults, and
        the agent's fingerprint and the components' code fingerprints when there are any."""
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
        """sha256 of the identity, with data paths replaced by the content they hold: a resumed run must match it.

        The run id derives from it, so spelling a data directory relative or absolute names one run; the profile
        counts by name and content, so two runs that differ only in profile never share an id; the agent's
        fingerprint (`Agent.fingerprint`) and the components' code fingerprints (`code_fingerprint`, by "KIND NAME")
        count when not empty, so runs whose components declare none keep their ids. A file named by a setting in
        `by_content` (a task transform's, e.g. a persona file) counts by its content, which is in the tasks.
        """
        identity = _with_fingerprints(self.identity(), agent_fingerprint, fingerprints)
        identity["profile"] = (profile or load_profile(self.profile)).identity()
        if task_sets is not None:
            identity.update(data_dir=None, tasks_file=None, task_sets=task_sets)
            identity.update({key: "content in task_sets" for key in by_content if key in identity})
        return hashlib.sha256(canonical_json(identity).encode()).hexdigest()


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
    """The sha256 of a component's source: every `.py` file of the package holding `file` (its directory, with
    subpackages), by path and content; the file alone when it is not in a package. Set `code_fingerprint` with it::

        code_fingerprint: str = source_fingerprint(__file__)
    """
    path = Path(file).resolve()
    root = path.parent if (path.parent / "__init__.py").is_file() else None
    files = sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts) if root is not None else [path]
    digest = hashlib.sha256()
    for source in files:
        digest.update(f"{source.relative_to(root) if root is not None else source.name}\0".encode())
        digest.update(source.read_bytes() + b"\0")
    return digest.hexdigest()
