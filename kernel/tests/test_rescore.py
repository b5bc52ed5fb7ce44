"""`bench rescore` through the CLI and SQLite, and code fingerprints: an edited generated agent starts a new run.

The toy domain is played by an oracle that counts its sessions (and fails one task's set-up, an infrastructure
error), judged by a judge that counts its verdicts, scored by a metric and a reward component whose settings a test
changes between the run and the rescore: a rescore must start no session and ask no judge, and give the stored
values exactly when nothing changed, the new ones where something did.
"""

from __future__ import annotations

import importlib
import json
import re
import sqlite3
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from click.testing import CliRunner, Result
from plugin_factory import forget_modules
from toy_domain import TASKS, _instructions

from bench_kernel import (
    AgentSession,
    Check,
    ComponentScore,
    ConversationSetup,
    Judge,
    JudgeRequest,
    Metric,
    MetricContext,
    MetricResult,
    OracleAgent,
    RewardComponent,
    RewardContext,
    hookimpl,
    source_fingerprint,
)
from bench_kernel.cli import cli
from bench_kernel.scaffold.new import new_plugin

CALLS = {"sessions": 0, "verdicts": 0}
TASKS_HERE: list[dict[str, Any]] = [
    *TASKS,
    {
        "id": "inc-a-brief",
        "user_scenario": {"instructions": _instructions("Add one to counter a.")},
        "evaluation_criteria": {
            "actions": [{"action_id": "1", "name": "increment", "arguments": {"name": "a", "by": 1}}],
            "reward_basis": ["DB", "BREVITY"],
        },
    },
    {
        "id": "polite",
        "user_scenario": {"instructions": _instructions("Add one to counter a.")},
        "evaluation_criteria": {
            "actions": [{"action_id": "1", "name": "increment", "arguments": {"name": "a", "by": 1}}],
            "nl_assertions": ["The agent was polite."],
            "reward_basis": ["DB", "NL_ASSERTION"],
        },
    },
]
BROKEN = "read-b"
"""The task whose conversations end in an infrastructure error (the agent's set-up fails)."""


@attrs.define(kw_only=True)
class CountingOracle(OracleAgent):
    """The oracle, counting its sessions; it cannot start on one task (an infrastructure error)."""

    name: str = "counting-oracle"

    def start(self, setup: ConversationSetup) -> AgentSession:
        """Count the session; fail the broken task's."""
        CALLS["sessions"] += 1
        if setup.task.id == BROKEN:
            raise RuntimeError("the agent's service is down")
        return super().start(setup)


@attrs.define(kw_only=True)
class CountingJudge(Judge):
    """Every assertion met, every verdict counted."""

    name: str = "counting-judge"

    async def judge(self, request: JudgeRequest) -> list[Check]:
        """Met, with a detail naming the count."""
        CALLS["verdicts"] += 1
        return [Check(subject=a, met=True, detail=f"verdict {CALLS['verdicts']}") for a in request.assertions]


@attrs.define(kw_only=True)
class Length(Metric):
    """Messages per conversation, times a factor; it emits an event too (produced anew by a rescore, never doubled)."""

    name: str = "length"
    factor: float = 1.0

    async def score(self, context: MetricContext) -> MetricResult:
        """The count, and the tool results among the messages."""
        context.emit(LengthSeen(count=len(context.messages)))
        tools = sum(m.role == "tool" for m in context.messages)
        return MetricResult(values={"": len(context.messages) * self.factor, "tools": tools}, details={"": {"factor": self.factor}})


@attrs.frozen(kw_only=True)
class LengthSeen:
    """What the metric saw."""

    kind = "length.seen"
    count: int


@attrs.define(kw_only=True)
class Brevity(RewardComponent):
    """1 when the conversation has at most `limit` messages."""

    name: str = "BREVITY"
    limit: int = 100

    async def score(self, context: RewardContext) -> ComponentScore:
        """Count the messages."""
        met = len(context.messages) <= self.limit
        return ComponentScore(
            component=self.name, score=1.0 if met else 0.0, checks=[Check(subject="brevity", met=met, detail=f"{len(context.messages)} messages")]
        )


@attrs.define
class Parts:
    """A plugin registering the counting oracle, the judge, the metric and the component."""

    metric: Length = attrs.field(factory=Length)
    component: Brevity = attrs.field(factory=Brevity)

    @hookimpl
    def register_agents(self, register: Callable[..., None]) -> None:
        """The oracle."""
        register(CountingOracle())

    @hookimpl
    def register_judges(self, register: Callable[..., None]) -> None:
        """The judge."""
        register(CountingJudge())

    @hookimpl
    def register_metrics(self, register: Callable[..., None]) -> None:
        """The metric."""
        register(self.metric)

    @hookimpl
    def register_reward_components(self, register: Callable[..., None]) -> None:
        """The component."""
        register(self.component)


def invoke(*args: str) -> Result:
    """`bench ARGS` in-process."""
    return CliRunner().invoke(cli, list(args), catch_exceptions=True)


def stored(db: Path, run_id: str) -> dict[str, Any]:
    """What a run stored per conversation (ids without the run's prefix): rows, values, messages and events."""
    con = sqlite3.connect(db)
    cut = len(run_id)
    rows = {
        cid[cut:]: rest
        for cid, *rest in con.execute(
            "select id, arm, termination_reason, reward, reward_info_json, error, attribution, retry, superseded_by is null "
            "from conversations where run_id = ?",
            [run_id],
        )
    }
    values = {
        (cid[cut:], plugin, metric): rest
        for cid, plugin, metric, *rest in con.execute(
            "select conversation_id, plugin, metric, value, details_json, error from metric_values where run_id = ?", [run_id]
        )
    }
    messages = {
        (cid[cut:], idx): text
        for cid, idx, text in con.execute(
            "select m.conversation_id, m.idx, m.message_json from messages m join conversations c on c.id = m.conversation_id where c.run_id = ?",
            [run_id],
        )
    }
    events = {
        (cid[cut:], idx): rest
        for cid, idx, *rest in con.execute(  # ts_utc left out: metrics emit theirs anew
            "select conversation_id, idx, kind, source, data_json, message_index from conversation_events where run_id = ?", [run_id]
        )
    }
    con.close()
    return {"conversations": rows, "values": values, "messages": messages, "events": events}


@pytest.fixture
def played(use_plugins: Callable[..., None], tmp_path: Path) -> tuple[Path, str]:
    """A run of the toy domain with the counting oracle and judge, one task failing as an infrastructure error."""
    CALLS.update(sessions=0, verdicts=0)
    use_plugins(tasks=TASKS_HERE, extra=[("parts", Parts())])
    db = tmp_path / "bench.db"
    result = invoke("run", "--agent", "counting-oracle", "--judge", "counting-judge", "--db", str(db), "--format", "none", "--progress", "none")
    assert "infrastructure error" in result.output, result.output  # the broken task's: stored, the run exits 1
    [run_id] = re.findall(r"run (\S+): \d+ conversations run", result.stderr)
    assert CALLS["sessions"] == len(TASKS_HERE) and CALLS["verdicts"] == 2  # the NL task, agent and baseline arms
    return db, run_id


def rescore(db: Path, run_id: str, *extra: str) -> str:
    """Rescore a run; the new run's id."""
    result = invoke("rescore", run_id, "--db", str(db), "--format", "none", *extra)
    assert result.exit_code == 0, result.output
    [new] = re.findall(r"^run (\S+): ", result.stderr, re.MULTILINE)
    return new


def test_a_rescore_with_nothing_changed_stores_the_same_scores_and_plays_nothing(played: tuple[Path, str]) -> None:
    db, run_id = played
    before = dict(CALLS)

    new = rescore(db, run_id)

    assert new == f"{run_id}-rescore-1"
    assert before == CALLS  # no session started, no verdict asked: the stored ones are reused
    source, copy = stored(db, run_id), stored(db, new)
    assert copy == source  # rewards, reward info, metric values, messages and events, conversation by conversation
    infra = {cid for cid, row in copy["conversations"].items() if row[1] == "infrastructure_error"}
    assert infra == {f"/agent/{BROKEN}/0"}  # carried over as such, unscored
    assert copy["events"] and any(kind == "length.seen" for kind, *_ in copy["events"].values())
    run = sqlite3.connect(db).execute("select config_json, config_hash, status from runs where id = ?", [new]).fetchone()
    config = json.loads(run[0])
    assert config["rescored_from"] == run_id
    assert run[1:] == sqlite3.connect(db).execute("select config_hash, status from runs where id = ?", [run_id]).fetchone()


def test_the_report_of_a_rescore_matches_its_source_and_names_it(played: tuple[Path, str]) -> None:
    db, run_id = played
    new = rescore(db, run_id)

    source, copy = (json.loads(invoke("report", r, "--db", str(db), "--format", "json").stdout) for r in (run_id, new))
    table = invoke("report", new, "--db", str(db)).stdout

    assert copy["header"].pop("rescored_from") == run_id
    assert {k: v for k, v in copy.items() if k not in ("run_id", "config")} == {k: v for k, v in source.items() if k not in ("run_id", "config")}
    assert f"rescored from run {run_id}: its conversations scored again, none played" in table


def test_a_changed_metric_gives_its_new_values_and_the_rewards_stay(played: tuple[Path, str], use_plugins: Callable[..., None]) -> None:
    db, run_id = played
    use_plugins(tasks=TASKS_HERE, extra=[("parts", Parts(metric=Length(factor=2.0)))])

    new = rescore(db, run_id)

    source, copy = stored(db, run_id), stored(db, new)
    lengths = {key: row[0] for key, row in source["values"].items() if key[2] == "length"}
    assert lengths and {key: row[0] for key, row in copy["values"].items() if key[2] == "length"} == {
        key: value * 2 for key, value in lengths.items()
    }
    assert {k: v for k, v in copy["values"].items() if k[2] != "length"} == {k: v for k, v in source["values"].items() if k[2] != "length"}
    assert copy["conversations"] == source["conversations"]
    assert CALLS["sessions"] == len(TASKS_HERE) and CALLS["verdicts"] == 2


def test_a_changed_reward_component_changes_the_rewards_it_decides(played: tuple[Path, str], use_plugins: Callable[..., None]) -> None:
    db, run_id = played
    use_plugins(tasks=TASKS_HERE, extra=[("parts", Parts(component=Brevity(limit=1)))])

    result = invoke("rescore", run_id, "--db", str(db), "--format", "none")

    assert result.exit_code == 0, result.output
    new = f"{run_id}-rescore-1"
    assert "2 rewards or components changed" in result.stderr  # the brief task's agent and baseline conversations
    source, copy = stored(db, run_id), stored(db, new)
    changed = {cid for cid in source["conversations"] if source["conversations"][cid][2] != copy["conversations"][cid][2]}
    assert changed == {"/agent/inc-a-brief/0"}  # the baseline failed it already
    assert copy["conversations"]["/agent/inc-a-brief/0"][2] == 0.0
    assert copy["values"][("/agent/inc-a-brief/0", "bench-kernel", "component.BREVITY")][0] == 0.0


def test_rejudge_asks_the_judge_again(played: tuple[Path, str]) -> None:
    db, run_id = played

    new = rescore(db, run_id, "--rejudge")

    assert CALLS["verdicts"] == 4 and CALLS["sessions"] == len(TASKS_HERE)
    info = json.loads(stored(db, new)["conversations"]["/agent/polite/0"][3])
    [nl] = [c for c in info["components"] if c["component"] == "NL_ASSERTION"]
    assert nl["checks"][0]["detail"] in ("verdict 3", "verdict 4")  # a new verdict, not the stored one


def test_the_new_run_id_is_the_first_free_one_and_a_taken_one_is_refused(played: tuple[Path, str]) -> None:
    db, run_id = played

    first, second = rescore(db, run_id), rescore(db, run_id)
    taken = invoke("rescore", run_id, "--db", str(db), "--run-id", first)

    assert (first, second) == (f"{run_id}-rescore-1", f"{run_id}-rescore-2")
    assert taken.exit_code != 0 and f"run {first!r} already exists" in taken.stderr


def test_a_domain_whose_tasks_changed_since_the_run_is_refused(played: tuple[Path, str], use_plugins: Callable[..., None]) -> None:
    db, run_id = played
    use_plugins(tasks=[{**t, "ticket": "changed"} if t["id"] == "lamp" else t for t in TASKS_HERE], extra=[("parts", Parts())])

    result = invoke("rescore", run_id, "--db", str(db))

    assert result.exit_code != 0
    assert f"the tasks or policy of domain 'toy' changed since run {run_id!r}" in result.stderr
    assert sqlite3.connect(db).execute("select count(*) from runs").fetchone()[0] == 1  # nothing stored


# --------------------------------------------------------------------------- code fingerprints


def test_source_fingerprint_covers_the_whole_package(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "agent.py").write_text("A = 1\n")
    (package / "helpers.py").write_text("B = 1\n")
    first = source_fingerprint(package / "agent.py")

    (package / "helpers.py").write_text("B = 2\n")

    assert len(first) == 64 and source_fingerprint(package / "agent.py") != first


def test_editing_a_generated_agent_starts_a_new_run_and_says_why(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    name = f"fp_{uuid.uuid4().hex[:8]}"
    target = new_plugin("agent", name, tmp_path / name)
    module = f"bench_{name}"
    sys.path.insert(0, str(target))
    db = tmp_path / "bench.db"
    args = ("run", "--agent", name, "--db", str(db), "--format", "none", "--progress", "none", "--task-id", "inc-a")

    def run_once() -> Result:
        forget_modules(module, f"{module}.agent")
        use_plugins(extra=[(name, importlib.import_module(module))])
        return invoke(*args)

    try:
        first, again = run_once(), run_once()
        with (target / module / "agent.py").open("a") as source:
            source.write("\n# fixed\n")
        edited = run_once()
    finally:
        sys.path.remove(str(target))
        forget_modules(module, f"{module}.agent")

    ids = [re.findall(r"run (\S+): \d+ conversations run", r.stderr)[0] for r in (first, again, edited)]
    assert ids[0] == ids[1] and "already stored" in again.stderr  # unchanged code: the run resumes
    assert ids[2] != ids[0]
    assert f"the code of agent {name} changed since run {ids[0]}: this is a new run" in edited.stderr
    config = json.loads(sqlite3.connect(db).execute("select config_json from runs where id = ?", [ids[2]]).fetchone()[0])
    assert set(config["fingerprints"]) == {f"agent {name}"}
