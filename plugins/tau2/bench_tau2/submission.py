"""tau2-bench leaderboard submissions from our runs: `bench export tau2-submission RUN... -o DIR`.

DIR gets tau2's submission layout (its docs/leaderboard-submission.md, checked by `tau2 submit validate DIR`):
`submission.json` (model, organisations, per-domain pass^1..4 in percent and cost, methodology) and `trajectories/`,
one tau2 results file per domain (`bench export tau2-results` of each run).

What the leaderboard refuses is refused here, every reason named at once: a run that is not complete, a domain the
leaderboard does not rank or given twice, a task filter, fewer (or other) tasks than the domain's `base` split of
tau2's data, a task without exactly the run's trial count of conversations, runs whose agent or user simulator (model,
arguments, implementation) differ, and tasks that are not tau2's (its validator checks every task against its own).

The methodology is "standard" only when every run used tau2's scaffold as bench reproduces it: tau2's profile (dumped by
`bench tau2 profile`, unchanged since the run), tau2-bench 1.0.1's data files (checked by content hash), the LLM agent
and user simulator with nothing else in the conversation (default mode, no channel, persona, goal shift or option),
tau2's step limits, and NL assertions judged once by llm-judge with tau2's judge texts from that profile. Otherwise it is "custom", and every
difference is named in `methodology.notes` and `verification.details`. A framework agent (bench-bridge's `framework`)
is custom, named with the reasons its run header gave (its own loop, and what it sends that the profile does not fix).
"""

from __future__ import annotations

import datetime
import hashlib
import importlib.metadata
import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from bench_kernel import (
    METHODOLOGY_EVENT,
    BenchError,
    ConfigError,
    DomainData,
    JudgeStyle,
    RunRecord,
    Store,
    collect,
    get_plugin_manager,
    is_success,
    load_profile,
    load_run_domain,
)
from bench_tau2.results import export_run

LEADERBOARD_DOMAINS = ("retail", "airline", "telecom", "banking_knowledge")
"""The domains tau2's leaderboard ranks (its submission schema's `results` keys)."""
TAU2_VERSION = "1.0.1"
TAU2_FILES: Mapping[str, Mapping[str, str]] = {
    "airline": {
        "tasks.json": "ccd8ba737b4cc371415af70151187788f728d6108d0916e73bb4317b40542052",
        "split_tasks.json": "b22ced4d9a9850ac9aea31c53bdcb6d6009058140bd9acc7db37c1d36222ba8b",
        "db.json": "1af9fea6e03ca7ca15a22bb3fcaf3e351393e3fc9070b6777947da8996f7531b",
        "policy.md": "10dc0525421521208be39cee235bba84a16e2bcba9899eb93d92cd81d2f62fc4",
    },
    "retail": {
        "tasks.json": "8e03ebce7901bd6218e7a7dc3105faa9324091a68058f7fe61c65262868812e8",
        "split_tasks.json": "ed0580ec52575b63fbf76568af42490da6ee7783ecb4aa81af46961291358f20",
        "db.json": "413a65160adbdb5fde0ffc0015c49b6d70250b10c18128de169b597af7766765",
        "policy.md": "2c9652afbce57d6e087768d37cda64d31c53d50b3e3225cfdb791bac66466467",
    },
    "telecom": {
        "split_tasks.json": "605b488bb9a6acb3c7f4505240a855fdc8681d09aadb16a8f38b2efcfc5c3aec",
        "tasks_small.json": "c8ea6f75adc18a8ad363974292cbd26b6e8b0e348ec87d265a4188e0088a8f24",
        "db.toml": "562d647ef9d7df8df91eafd8ee76036e707c8f9e32aaedc4a7fde06975aea2c0",
        "user_db.toml": "4886107ea0c16f8e16d74bef91cfb557de61822afe9361f5a9b241806aea2e4c",
        "main_policy.md": "95943844a0cf11fdf0e2842b483b81d9f9338aa53235712ed131db075d086ed7",
        "tech_support_manual.md": "015a3ee49ec8c199c5e1a059c922081937b92cf3a5ea74fedbc4357816f389ba",
        "main_policy_solo.md": "781296ae5419169cb64aac0c4fa2aa6129c78f3c1592f64abd80df6fbabb7042",
    },
}
"""sha256 of tau2-bench 1.0.1's data files that bench's domains read (telecom's tasks are generated from tasks_small.json)."""
TASK_FILES = frozenset({"tasks.json", "split_tasks.json", "tasks_small.json"})
"""Files that decide the tasks: one that differs from tau2's makes tasks tau2's validator refuses."""
TAU2_SCAFFOLD = {"agent": "llm-fc", "user": "llm-user", "mode": "default", "channel": "identity", "max_steps": 200, "max_errors": 10}
"""What tau2's default run is in bench's terms (its llm_agent, user_simulator, half-duplex text, limits)."""
NOT_TAU2 = ("persona", "persona_file", "shifts", "shift_plan", "turns_per_goal", "channel_options", "paired", "sweep", "exposure")
"""Run settings that add something tau2's runs do not have."""
FILTERS = ("task_ids", "num_tasks", "tasks_file")
FRAMEWORK_AGENT = "framework"
"""bench-bridge's agent: a framework's own loop, whose departures from the profile the run header lists."""


@attrs.frozen(kw_only=True)
class Submitter:
    """Who submits what: the submission's own fields (tau2's `Submission`) that no run can tell."""

    model_name: str | None = None
    """Default: the runs' agent model."""
    model_organization: str
    submitting_organization: str | None = None
    """Default: the model organization."""
    email: str | None = None
    contact_name: str | None = None
    github: str | None = None
    reasoning_effort: str | None = None
    references: Sequence[tuple[str, str]] = ()
    notes: str | None = None
    is_new: bool = False
    date: datetime.date | None = None
    """The submission date (default today)."""


@attrs.frozen(kw_only=True)
class Exported:
    """What one export wrote."""

    directory: Path
    submission: dict[str, Any]
    files: dict[str, str]
    """Domain -> trajectory file name."""
    changes: list[str]
    """Why the methodology is custom (empty: standard)."""
    notes: list[str]


@attrs.frozen(kw_only=True)
class _Run:
    record: RunRecord
    data: DomainData
    document: dict[str, Any]
    methodology: dict[str, Any] = attrs.field(factory=dict)
    """The run header's verdict under its profile (the run's `run.methodology` event; {} for runs made before it)."""


def export_submission(store: Store, run_ids: Sequence[str], output: Path, submitter: Submitter, *, force: bool = False) -> Exported:
    """Check the runs as the leaderboard would, then write submission.json and the trajectories into `output`."""
    if not run_ids:
        raise ConfigError("name at least one run (one per domain)")
    runs = [_load(store, run_id) for run_id in run_ids]
    refusals = [p for run in runs for p in _refusals(run)] + _across(runs)
    if refusals:
        raise ConfigError("the leaderboard would refuse this submission:\n" + "\n".join(f"  - {r}" for r in refusals))
    changes = [c for run in runs for c in _changes(run)]
    notes = _notes(runs)
    model_name = submitter.model_name or runs[0].document["info"]["agent_info"]["llm"]
    if not model_name:
        raise ConfigError(f"agent {runs[0].record.config.get('agent')!r} has no model: name the submission's model with --model-name")
    files = {run.data.name: _file_name(model_name, run) for run in runs}
    submission = _submission(runs, submitter, model_name, files, changes)
    _write(output, submission, {files[run.data.name]: run.document for run in runs}, force=force)
    return Exported(directory=output, submission=submission, files=files, changes=changes, notes=notes)


# --------------------------------------------------------------------------- the runs


def _load(store: Store, run_id: str) -> _Run:
    record = store.run(run_id)
    assert record is not None
    plugins = get_plugin_manager(record.config.get("plugins"))
    try:
        data = load_run_domain(record, collect(plugins))
    except BenchError as exc:
        raise ConfigError(f"run {run_id!r}: its domain's data no longer loads ({exc})") from exc
    return _Run(
        record=record, data=data, document=export_run(store, run_id, plugins), methodology=store.last_run_event(run_id, (METHODOLOGY_EVENT,)) or {}
    )


def _refusals(run: _Run) -> list[str]:
    """What tau2's leaderboard (and its validator) would refuse in one run."""
    record, data, config = run.record, run.data, run.record.config
    who = f"run {record.id!r} ({data.name})"
    if record.status != "complete":
        return [f"{who} is {record.status}, not complete: run it again to finish it (infrastructure errors are retried)"]
    if data.name not in LEADERBOARD_DOMAINS:
        return [f"{who}: the leaderboard ranks {', '.join(LEADERBOARD_DOMAINS)} only"]
    if record.task_sets.get(data.name) != data.content_hash():
        return [f"{who}: the domain's tasks or policy changed since the run (data directory changed or moved)"]
    problems = [
        f"{who} was run with a task filter ({k} {config[k]!r}): the leaderboard wants every task" for k in FILTERS if config.get(k) not in (None, [])
    ]
    if config.get("split") not in (None, "base"):
        problems.append(f"{who} was run on split {config['split']!r}: the leaderboard uses the base split")
    problems += _data_refusals(who, data)
    if problems:
        return problems
    base = _base_ids(data)
    ran = {s["task_id"] for s in run.document["simulations"]}
    if missing := sorted(base - ran):
        problems.append(f"{who} has {len(ran & base)} of the {len(base)} tasks of tau2's base split (missing: {_some(missing)})")
    if extra := sorted(ran - base):
        problems.append(f"{who} has {len(extra)} task(s) outside tau2's base split: {_some(extra)}")
    counts: dict[str, int] = {}
    for s in run.document["simulations"]:
        counts[s["task_id"]] = counts.get(s["task_id"], 0) + 1
    trials = config.get("trials")
    if wrong := sorted(t for t in base & ran if counts[t] != trials):
        problems.append(f"{who}: {len(wrong)} task(s) without exactly {trials} trial(s): {_some(wrong)}")
    if data.name == "banking_knowledge" and not config.get("retrieval"):
        problems.append(f"{who}: banking_knowledge results need the retrieval configuration the run used (--retrieval)")
    return problems


def _data_refusals(who: str, data: DomainData) -> list[str]:
    """Tasks tau2's validator would not recognise: data without tau2's task files."""
    pinned = TAU2_FILES.get(data.name)
    if pinned is None:
        return []
    differ = [name for name, digest in pinned.items() if name in TASK_FILES and _digest(_source(data) / name) != digest]
    if differ:
        return [
            f"{who}: not tau2-bench {TAU2_VERSION}'s tasks ({', '.join(differ)} differ or are missing in "
            f"{data.source or 'the plugin'}); run with --data-dir on tau2's data: its validator checks every task"
        ]
    return []


def _across(runs: Sequence[_Run]) -> list[str]:
    """What the leaderboard refuses across runs: a domain twice, different agents or user simulators."""
    problems = []
    seen: dict[str, str] = {}
    for run in runs:
        if run.data.name in seen:
            problems.append(f"domain {run.data.name} appears twice (runs {seen[run.data.name]!r} and {run.record.id!r}): one run per domain")
        seen.setdefault(run.data.name, run.record.id)
    first = runs[0]
    for run in runs[1:]:
        a, b = _participants(first), _participants(run)
        if a != b:
            differ = ", ".join(f"{k} {a[k]!r} vs {b[k]!r}" for k in a if a[k] != b[k])
            problems.append(
                f"runs {first.record.id!r} and {run.record.id!r} differ in agent or user simulator ({differ}): "
                "the leaderboard wants the same model and arguments in every domain"
            )
    return problems


def _participants(run: _Run) -> dict[str, Any]:
    info = run.document["info"]
    return {
        "agent": info["agent_info"]["implementation"],
        "agent model": info["agent_info"]["llm"],
        "agent arguments": info["agent_info"]["llm_args"],
        "user": info["user_info"]["implementation"],
        "user model": info["user_info"]["llm"],
        "user arguments": info["user_info"]["llm_args"],
    }


def _base_ids(data: DomainData) -> set[str]:
    """The ids of tau2's base split: from the data's split file, else every task (airline and retail: the same)."""
    split = _source(data) / "split_tasks.json"
    if split.is_file():
        splits = json.loads(split.read_text(encoding="utf-8"))
        if isinstance(splits, dict) and isinstance(splits.get("base"), list):
            return {str(t) for t in splits["base"]}
    return {t.id for t in data.tasks}


# --------------------------------------------------------------------------- standard or custom


def _changes(run: _Run) -> list[str]:
    """How one run differs from tau2's standard evaluation, each in words; empty: standard."""
    config, domain = run.record.config, run.data.name
    who = f"{domain} (run {run.record.id})"
    framework = config.get("agent") == FRAMEWORK_AGENT  # its scaffold and options: what the run header said (below)
    changes = [
        f"{who}: {key} {config.get(key)!r} where tau2's default run has {value!r}"
        for key, value in TAU2_SCAFFOLD.items()
        if config.get(key) != value and not (framework and key == "agent")
    ]
    changes += [f"{who}: {c}" for c in _framework_changes(run)] if framework else []
    changes += [f"{who}: {key} {config[key]!r} (tau2's runs have none)" for key in NOT_TAU2 if config.get(key) not in (None, False, {}, [])]
    changes += [
        f"{who}: {side} options {config[side]!r}"
        for side in ("agent_options", "user_options")
        if config.get(side) and not (framework and side == "agent_options")
    ]
    changes += [f"{who}: {c}" for c in _profile_changes(config.get("profile") or {}, domain)]
    changes += [f"{who}: {c}" for c in _data_changes(run.data)]
    judged = _judged(run)
    if judged:
        changes.append(f"{who}: {judged}")
    return changes


def _framework_changes(run: _Run) -> list[str]:
    """A framework agent (bench-bridge): the agent's reasons from the run header, which probed what it sends."""
    fingerprint = run.record.config.get("agent_fingerprint") or {}
    factory = f"factory {fingerprint.get('factory', '?')}"
    reasons = [r for r in run.methodology.get("reasons", []) if r.startswith(f"agent {FRAMEWORK_AGENT!r}")]
    if not reasons:  # a run made before the header's check: nothing says what its requests held
        framework = f"{fingerprint.get('framework', '?')} {fingerprint.get('framework_version', '')}".strip()
        return [f"agent {FRAMEWORK_AGENT!r} ({framework}, {factory}): its own agent loop and requests, not tau2's agent"]
    return [f"{reasons[0]} ({factory})", *reasons[1:]]


def _profile_changes(recorded: Mapping[str, Any], domain: str) -> list[str]:
    """Whether the run's profile is tau2's, dumped by `bench tau2 profile` and unchanged since the run."""
    path = recorded.get("path")
    if not path:
        return [
            f"bench's own prompts and tool texts (profile {recorded.get('name', 'bench')!r}), not tau2's "
            "(run with --profile from `bench tau2 profile`)"
        ]
    try:
        profile = load_profile(path)
    except BenchError as exc:
        return [f"the run's profile at {path} no longer loads ({exc}): it cannot be confirmed to be tau2's"]
    if profile.sha256 != recorded.get("sha256"):
        return [
            f"the profile at {path} changed since the run (sha256 {profile.sha256[:12]}, the run's "
            f"{str(recorded.get('sha256'))[:12]}): it cannot be confirmed to be what the run used"
        ]
    source = profile.source
    if source.get("tool") != "bench tau2 profile" or source.get("package") != "tau2":
        return [f"profile {profile.name!r} was not dumped from tau2 by `bench tau2 profile` (its source: {dict(source)})"]
    if not profile.covers(domain):
        return [f"profile {profile.name!r} has no tool schemas for {domain}: bench's own tool texts were sent"]
    return []


def _data_changes(data: DomainData) -> list[str]:
    pinned = TAU2_FILES.get(data.name)
    if pinned is None:
        return [f"data of {data.name} not confirmed to be tau2's (no known content hashes for it)"]
    differ = [name for name, digest in pinned.items() if name not in TASK_FILES and _digest(_source(data) / name) != digest]
    return [f"data file(s) {', '.join(differ)} differ from tau2-bench {TAU2_VERSION}'s"] if differ else []


def _judged(run: _Run) -> str | None:
    """How the run's NL assertions were judged otherwise than tau2 judges them (None: as tau2 does, or none to judge).

    tau2's way: one judgment by llm-judge under a profile that carries tau2's judge texts and request shape (`bench
    tau2 profile` dumps them from the user's tau2: docs/judges.md), so the judge model got tau2's own request.
    """
    if not any(t.evaluation_criteria is not None and t.evaluation_criteria.nl_assertions_to_judge() for t in run.data.tasks):
        return None
    config = run.record.config
    judge = (config.get("models") or {}).get("judge", {}).get("model")
    if config.get("judge") != "llm-judge":
        return f"NL assertions judged by {config.get('judge')!r} (model {judge}), not by llm-judge with tau2's judge request"
    if (config.get("judge_panel") or 1) != 1:
        return f"NL assertions judged by a panel of {config['judge_panel']} (majority), where tau2 asks its judge once"
    path = (config.get("profile") or {}).get("path")
    try:
        profile = load_profile(path) if path else None
    except BenchError:
        return "NL assertions judged under a profile that no longer loads"  # _profile_changes says why
    if profile is None or profile.judge == JudgeStyle():
        return (
            f"NL assertions judged by llm-judge (model {judge}) with bench's judge prompt; the profile carries no "
            "judge texts of tau2's (dump it again with `bench tau2 profile`)"
        )
    return None


def _notes(runs: Sequence[_Run]) -> list[str]:
    notes = []
    missing = [d for d in LEADERBOARD_DOMAINS if d not in {r.data.name for r in runs}]
    if missing:
        notes.append(f"no results for {', '.join(missing)}: the leaderboard ranks each domain on its own and recommends all")
    few = [f"{r.data.name} ({r.record.config.get('trials')})" for r in runs if (r.record.config.get("trials") or 0) < 4]
    if few:
        notes.append(f"fewer than 4 trials: {', '.join(few)}; the leaderboard strongly prefers 4 or more (pass^k above the trial count is left out)")
    return notes


# --------------------------------------------------------------------------- tau2's figures


def pass_hat_k(document: Mapping[str, Any]) -> dict[int, float]:
    """pass^k for k = 1..the trial count, as tau2's `compute_metrics` computes it from a results document.

    Infrastructure errors left out; a simulation succeeds with a reward within 1e-6 of 1; per task
    C(successes, k) / C(trials, k); the mean over tasks ordered as tau2 orders them (by task id, then by the number of
    gold actions; a single transfer action counts -1) and summed as numpy sums (pairwise), so the figures equal tau2's.
    """
    sims = [s for s in document["simulations"] if s.get("termination_reason") != "infrastructure_error"]
    if not sims:
        return {}
    outcomes: dict[str, list[bool]] = {}
    for s in sims:
        reward = (s.get("reward_info") or {}).get("reward")
        outcomes.setdefault(s["task_id"], []).append(reward is not None and is_success(reward))
    trials = min(document["info"].get("num_trials") or 0, min(len(v) for v in outcomes.values()))
    actions = {t["id"]: _action_count(t) for t in document["tasks"]}
    order = sorted(sorted(outcomes), key=lambda task_id: actions.get(task_id, 0))
    return {
        k: pairwise_sum([math.comb(sum(outcomes[t]), k) / math.comb(len(outcomes[t]), k) for t in order]) / len(order) for k in range(1, trials + 1)
    }


def average_cost(document: Mapping[str, Any]) -> float | None:
    """The mean agent cost per simulation (unknown costs left out), as tau2 computes it; None when every cost is unknown."""
    costs = [s.get("agent_cost") for s in document["simulations"] if s.get("termination_reason") != "infrastructure_error"]
    known = [c for c in costs if c is not None]
    if not known:
        return None
    return pairwise_sum([0.0 if c is None else float(c) for c in costs]) / len(known)


def pairwise_sum(values: Sequence[float]) -> float:
    """A sum of floats in numpy's order (pairwise, eight accumulators per block of up to 128), so results match bit for bit."""
    n = len(values)
    if n < 8:
        total = 0.0
        for v in values:
            total += v
        return total
    if n <= 128:
        acc = list(values[:8])
        i = 8
        while i < n - n % 8:
            for j in range(8):
                acc[j] += values[i + j]
            i += 8
        total = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
        for v in values[i:]:
            total += v
        return total
    half = n // 2
    half -= half % 8
    return pairwise_sum(values[:half]) + pairwise_sum(values[half:])


def _action_count(task: Mapping[str, Any]) -> int:
    actions = (task.get("evaluation_criteria") or {}).get("actions") or []
    if len(actions) == 1 and "transfer" in str(actions[0].get("name", "")).lower():
        return -1
    return sum(1 for a in actions if a.get("requestor", "assistant") in ("assistant", "user"))


def domain_results(run: _Run) -> dict[str, Any]:
    """A domain's `results` entry: pass^1..4 in percent (None above the trial count), the average cost, the retrieval."""
    passes = pass_hat_k(run.document)
    entry: dict[str, Any] = {f"pass_{k}": passes[k] * 100 if k in passes else None for k in range(1, 5)}
    entry["cost"] = average_cost(run.document)
    if run.data.name == "banking_knowledge":
        entry["retrieval_config"] = run.record.config.get("retrieval")
    return entry


# --------------------------------------------------------------------------- writing


def _submission(runs: Sequence[_Run], submitter: Submitter, model_name: str, files: Mapping[str, str], changes: Sequence[str]) -> dict[str, Any]:
    first = runs[0]
    profile_version = _tau2_version(first.record.config.get("profile") or {})
    made = ", ".join(
        f"{r.data.name}: run {r.record.id} ({r.record.config.get('trials')} trials, profile "
        f"{(r.record.config.get('profile') or {}).get('name', 'bench')})"
        for r in runs
    )
    notes = [f"Evaluated with bench ({_versions()}), exported by `bench export tau2-submission`; {made}."]
    if changes:
        notes.append("Differences from tau2's standard evaluation: " + "; ".join(changes) + ".")
    if submitter.notes:
        notes.append(submitter.notes)
    prompts_changed = any("prompts" in c or "profile" in c for c in changes)
    submission: dict[str, Any] = {
        "model_name": model_name,
        "model_organization": submitter.model_organization,
        "submitting_organization": submitter.submitting_organization or submitter.model_organization,
        "submission_date": (submitter.date or datetime.date.today()).isoformat(),
        "submission_type": "custom" if changes else "standard",
        "modality": "text",
        "contact_info": {"email": submitter.email, "name": submitter.contact_name, "github": submitter.github},
        "results": {run.data.name: domain_results(run) for run in runs},
        "is_new": submitter.is_new,
        "trajectories_available": True,
        "trajectory_files": dict(files),
        "references": [{"title": title, "url": url} for title, url in submitter.references] or None,
        "methodology": {
            "evaluation_date": max(r.record.updated_utc for r in runs)[:10],
            "tau2_bench_version": profile_version or TAU2_VERSION,
            "user_simulator": first.document["info"]["user_info"]["llm"],
            "notes": " ".join(notes),
            "verification": {
                "modified_prompts": prompts_changed,
                "omitted_questions": False,
                "details": "; ".join(changes) if changes else "tau2's profile, data, scaffold and limits, as bench reproduces them",
            },
        },
        "reasoning_effort": submitter.reasoning_effort,
    }
    return _without_none(submission)


def _tau2_version(recorded: Mapping[str, Any]) -> str | None:
    path = recorded.get("path")
    if not path:
        return None
    try:
        source = load_profile(path).source
    except BenchError:
        return None
    return str(source["version"]) if source.get("package") == "tau2" and source.get("version") else None


def _versions() -> str:
    found = []
    for name in ("bench-kernel", "bench-tau2"):
        try:
            found.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            found.append(name)
    return ", ".join(found)


def _file_name(model_name: str, run: _Run) -> str:
    """tau2's naming of a trajectory file: model, domain, user simulator and trials."""
    user = run.document["info"]["user_info"]["llm"] or str(run.record.config.get("user"))
    return f"{_slug(model_name)}_{run.data.name}_{_slug(user)}_{run.record.config.get('trials')}trials.json"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-") or "model"


def _write(output: Path, submission: Mapping[str, Any], trajectories: Mapping[str, Any], *, force: bool) -> None:
    ours = [output / "submission.json", *sorted((output / "trajectories").glob("*.json"))]
    others = [p for p in output.rglob("*") if p.is_file() and p not in ours] if output.is_dir() else []
    if output.exists() and not output.is_dir():
        raise ConfigError(f"{output} is a file, not a directory")
    if others or (any(p.exists() for p in ours) and not force):
        shown = ", ".join(str(p.relative_to(output)) for p in (others or [p for p in ours if p.exists()])[:3])
        raise ConfigError(
            f"{output} is not empty ({shown}): choose an empty directory"
            + ("" if others else ", or --force to replace a submission written there before")
        )
    for path in ours:
        path.unlink(missing_ok=True)
    (output / "trajectories").mkdir(parents=True, exist_ok=True)
    for name, document in trajectories.items():
        (output / "trajectories" / name).write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    (output / "submission.json").write_text(json.dumps(submission, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _without_none(value: Any) -> Any:
    """tau2 writes its submissions without null fields."""
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_none(v) for v in value]
    return value


def _source(data: DomainData) -> Path:
    return Path(data.source) if data.source else Path()


def _digest(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def _some(ids: Sequence[str]) -> str:
    return ", ".join(ids[:5]) + (f", ... ({len(ids)} in all)" if len(ids) > 5 else "")
