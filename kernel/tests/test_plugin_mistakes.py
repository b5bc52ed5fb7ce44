"""A third party's mistakes, as the real `bench` meets them: each refused with plugin, object and fix named.

Throwaway distributions are installed into a temporary target directory (plugin_factory: pip if it can build them
offline, otherwise a hand-written dist-info) and the `bench` console script runs them with a real SQLite store:
pharma (a domain and participants, some written wrong on purpose), typo (a misspelt hook name), unmarked (a hook
without the @hookimpl marker), orphan (a distribution that declares no `bench` entry point), raising and picky (a
metric that raises on every conversation, and one that raises on one).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from plugin_factory import PluginPackage, bench_env, install, run_bench

import bench_kernel
from bench_kernel import Metric
from bench_kernel.errors import UnknownComponentError

PHARMA = PluginPackage(
    dist="bench-pharma",
    module="bench_pharma",
    entry="pharma",
    source='''\
    """Pharma: a domain with two tasks, and participants of which some are written wrong on purpose."""

    from collections.abc import Callable, Sequence

    import attrs

    import bench_kernel
    from bench_kernel import (
        Agent, AgentSession, AssistantMessage, ConversationSetup, Domain, DomainData, DomainOptions, Message,
        ParticipantError, State, ToolKind, Toolkit, UserMessage, UserSession, UserSimulator, tool,
    )


    def _task(number: int) -> dict:
        return {"id": f"refill-{number}",
                "user_scenario": {"instructions": f"Ask for a refill of p{number}.", "script": [f"Please refill p{number}."]},
                "evaluation_criteria": {"actions": [{"action_id": "1", "name": "refill",
                                                     "arguments": {"prescription_id": f"p{number}"}}],
                                        "reward_basis": ["DB"]}}


    class PharmacyTools(Toolkit):
        """Prescriptions and their refills."""

        @tool(ToolKind.WRITE)
        def refill(self, prescription_id: str) -> dict:
            """Refill a prescription.

            Args:
                prescription_id: The prescription to refill.
            """
            record = self.state.prescriptions.edit(prescription_id)
            record["refills"] += 1
            return record


    @attrs.define(kw_only=True)
    class PharmaDomain(Domain):
        name: str = "pharma"

        def load(self, options: DomainOptions) -> DomainData:
            tasks = (bench_kernel.load_tasks(options.tasks_file, options.vocabulary) if options.tasks_file
                     else bench_kernel.structure_tasks([_task(1), _task(2)], options.vocabulary, source="bench_pharma"))
            return DomainData(name=self.name, tasks=tasks, policy="Refill prescriptions when asked.",
                              agent_toolkit=PharmacyTools, source="bench_pharma",
                              agent_state=State.from_records({"prescriptions": {"p1": {"refills": 0}, "p2": {"refills": 0}}}))


    class SyncSession(AgentSession):
        def respond(self, incoming: Sequence[Message]) -> AssistantMessage:  # the mistake: a plain def
            return AssistantMessage(content="Done.")


    @attrs.define(kw_only=True)
    class SyncAgent(Agent):
        name: str = "sync-agent"

        def start(self, setup: ConversationSetup) -> AgentSession:  # the base class: nothing to check at registration
            return SyncSession()


    class FailingSession(AgentSession):
        def __init__(self, setup: ConversationSetup, fails_on: str | None) -> None:
            self.setup, self.fails_on = setup, fails_on

        async def respond(self, incoming: Sequence[Message]) -> AssistantMessage:
            if self.fails_on in (None, self.setup.task.id):
                raise ParticipantError("the framework behind this agent has no API key")
            return AssistantMessage(content="Your refill is on its way.")


    @attrs.define(kw_only=True)
    class FailingAgent(Agent):
        name: str
        fails_on: str | None = None

        def start(self, setup: ConversationSetup) -> AgentSession:
            return FailingSession(setup, self.fails_on)


    class MuteSession(UserSession):
        async def respond(self, incoming: Sequence[Message]) -> UserMessage:
            raise ParticipantError("the simulator's model is not configured")


    @attrs.define(kw_only=True)
    class MuteUser(UserSimulator):
        name: str = "mute"

        def start(self, setup: ConversationSetup) -> UserSession:
            return MuteSession()


    @bench_kernel.hookimpl
    def register_domains(register: Callable[[Domain], None]) -> None:
        register(PharmaDomain())


    @bench_kernel.hookimpl
    def register_agents(register: Callable[[Agent], None]) -> None:
        register(SyncAgent())
        register(FailingAgent(name="crashing"))
        register(FailingAgent(name="picky", fails_on="refill-2"))


    @bench_kernel.hookimpl
    def register_user_simulators(register: Callable[[UserSimulator], None]) -> None:
        register(MuteUser())
    ''',
)

TYPO = PluginPackage(
    dist="bench-typo",
    module="bench_typo",
    entry="typo",
    source="""\
    import bench_kernel


    @bench_kernel.hookimpl
    def regster_agents(register):
        register(bench_kernel.DoNothingAgent(name="idle"))
    """,
)

UNMARKED = PluginPackage(
    dist="bench-unmarked",
    module="bench_unmarked",
    entry="unmarked",
    source="""\
    import bench_kernel


    def register_agents(register):
        register(bench_kernel.DoNothingAgent(name="idle"))
    """,
)

RAISING = PluginPackage(
    dist="bench-raising",
    module="bench_raising",
    entry="raising",
    source="""\
    import attrs

    import bench_kernel


    @attrs.define(kw_only=True)
    class Turns(bench_kernel.Metric):
        name: str = "turns"

        def score(self, context):
            return {"": len(context.transcript)}  # the mistake: the context has `messages`, no `transcript`


    @bench_kernel.hookimpl
    def register_metrics(register):
        register(Turns())
    """,
)

PICKY = PluginPackage(
    dist="bench-picky",
    module="bench_picky",
    entry="picky",
    source="""\
    import attrs

    import bench_kernel


    @attrs.define(kw_only=True)
    class Refills(bench_kernel.Metric):
        name: str = "refills"

        def score(self, context):
            if context.task.id == "refill-2":
                raise ValueError("no refill count for refill-2")
            return {"": 1.0}


    @bench_kernel.hookimpl
    def register_metrics(register):
        register(Refills())
    """,
)

ORPHAN = PluginPackage(
    dist="bench-orphan",
    module="bench_orphan",
    entry=None,
    source="""\
    import bench_kernel


    @bench_kernel.hookimpl
    def register_domains(register):
        register(bench_kernel.Domain(name="orphan"))
    """,
)


@attrs.frozen
class Site:
    """The installed distributions and how to run `bench` with them."""

    env: dict[str, str]
    cwd: Path

    def bench(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run `bench ARGS` with the distributions on the path."""
        return run_bench(args, self.env, self.cwd)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    root = tmp_path_factory.mktemp("mistakes")
    path, _ = install([PHARMA, TYPO, UNMARKED, ORPHAN, RAISING, PICKY], root)
    work = root / "work"
    work.mkdir()
    return Site(env=bench_env([path]), cwd=work)


def error_line(done: subprocess.CompletedProcess[str]) -> str:
    """The one `Error:` line of a failed command (no traceback)."""
    assert done.returncode != 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    [line] = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    return line


def stored(db: Path) -> list[tuple[str, str]]:
    """(arm, termination reason) of every stored conversation, in order."""
    with sqlite3.connect(db) as conn:
        return conn.execute("select arm, termination_reason from conversations order by arm, task_id").fetchall()


# --------------------------------------------------------------------------- sessions and failing runs


def test_a_sync_respond_behind_a_base_annotation_stops_the_run_storing_no_conversation(site: Site) -> None:
    db = site.cwd / "sync.db"
    # Four in flight: the baseline's conversations start beside the agent's.
    done = site.bench("run", "--plugin", "pharma", "--agent", "sync-agent", "--concurrency", "4", "--db", str(db))

    line = error_line(done)
    assert line.startswith(
        "Error: plugin 'pharma': agent 'sync-agent': bench_pharma.SyncSession.respond is a plain def, "
        "but the kernel awaits it: write `async def respond`"
    ), line
    assert stored(db) == []


def test_a_run_whose_every_conversation_failed_on_the_agent_exits_non_zero(site: Site) -> None:
    db = site.cwd / "crashing.db"
    done = site.bench("run", "--plugin", "pharma", "--agent", "crashing", "--db", str(db), "--format", "json")

    line = error_line(done)
    assert "every one of the 2 conversations of run" in line and "agent 'crashing' (agent_error)" in line
    assert "the framework behind this agent has no API key" in line
    assert json.loads(done.stdout)["conversations"] == 2  # the report is printed first
    assert stored(db) == [("agent", "agent_error"), ("agent", "agent_error"), ("baseline", "user_stop"), ("baseline", "user_stop")]


def test_a_run_with_some_agent_errors_exits_zero(site: Site) -> None:
    db = site.cwd / "picky.db"
    done = site.bench("run", "--plugin", "pharma", "--agent", "picky", "--no-baseline", "--db", str(db), "--format", "none")

    assert done.returncode == 0, done.stderr
    assert stored(db) == [("agent", "user_stop"), ("agent", "agent_error")]


def test_a_run_whose_every_conversation_failed_on_the_user_simulator_exits_non_zero(site: Site) -> None:
    db = site.cwd / "mute.db"
    done = site.bench("run", "--plugin", "pharma", "--user", "mute", "--no-baseline", "--db", str(db), "--format", "none")

    line = error_line(done)
    assert "every one of the 2 conversations" in line and "user simulator 'mute' (user_error)" in line
    assert stored(db) == [("agent", "user_error"), ("agent", "user_error")]


def test_a_metric_that_raises_on_every_conversation_fails_the_run_naming_plugin_method_and_fix(site: Site) -> None:
    db = site.cwd / "raising.db"
    done = site.bench("run", "--plugin", "pharma", "--plugin", "raising", "--db", str(db), "--format", "none")

    line = error_line(done)
    [(run_id,)] = sqlite3.connect(db).execute("select id from runs").fetchall()
    assert line.startswith(
        f"Error: plugin 'raising': metric 'turns' (bench_raising.Turns.score) raised on every one of the 4 conversations "
        f"of run {run_id}, so it measured nothing: AttributeError: "
    ), line
    assert "Fix the metric" in line and line.endswith(f"`bench rescore {run_id}` scores the stored conversations again without playing them")
    assert len(stored(db)) == 4  # sound conversations, kept for the rescore


def test_a_metric_that_raises_on_some_conversations_leaves_the_run_green(site: Site) -> None:
    db = site.cwd / "picky-metric.db"
    done = site.bench("run", "--plugin", "pharma", "--plugin", "picky", "--no-baseline", "--db", str(db), "--format", "none")

    assert done.returncode == 0, done.stderr
    with sqlite3.connect(db) as conn:
        values = conn.execute("select value, error from metric_values where plugin = 'picky' order by error").fetchall()
    assert values == [(1.0, None), (None, "ValueError: no refill count for refill-2")]


def test_a_task_whose_gold_fails_is_refused_naming_plugin_task_and_fix(site: Site) -> None:
    action = {"action_id": "1", "name": "refill", "arguments": {"prescription_id": "p9"}}
    tasks = site.cwd / "gold.json"
    task = {"id": "refill-9", "user_scenario": {"instructions": "Ask for a refill of p9."}, "evaluation_criteria": {"actions": [action]}}
    tasks.write_text(json.dumps([task]))
    db = site.cwd / "gold.db"

    line = error_line(site.bench("run", "--plugin", "pharma", "--tasks-file", str(tasks), "--db", str(db)))

    assert line.startswith("Error: plugin 'pharma': 1 of 1 selected tasks of domain 'pharma' cannot be scored, their gold replay fails"), line
    assert "refill-9 (gold action 1 refill: Error: " in line and "Fix the tasks, leave them out" in line
    assert not db.exists()


# --------------------------------------------------------------------------- did you mean


def test_a_misspelt_task_field_names_file_path_and_the_field_meant(site: Site) -> None:
    tasks = site.cwd / "tasks.json"
    tasks.write_text(
        json.dumps(
            [{"id": "t1", "user_scenario": {"instructions": "Ask for a refill.", "scirpt": ["Hi."]}, "evalution_criteria": {"reward_basis": ["DB"]}}]
        )
    )
    db = site.cwd / "misspelt-task.db"
    done = site.bench("run", "--plugin", "pharma", "--tasks-file", str(tasks), "--db", str(db))

    line = error_line(done)
    assert f"Error: plugin 'pharma': domain 'pharma': {tasks}: " in line
    assert "extra fields found (scirpt) @ $[0].user_scenario (did you mean 'script'?)" in line
    assert "extra fields found (evalution_criteria) @ $[0] (did you mean 'evaluation_criteria'?)" in line
    assert not db.exists()


def problems_of(items: list[dict[str, Any]], **options: Any) -> list[str]:
    with pytest.raises(bench_kernel.TaskFileError) as caught:
        bench_kernel.structure_tasks(items, **{"source": "tasks.json", **options})
    return caught.value.problems


def test_task_field_suggestions_follow_the_schema_at_each_json_path() -> None:
    instructions = {"domain": "d", "reason_for_call": "r", "task_instructions": "t", "known_infos": "k"}
    criteria = {"actions": [{"action_id": "1", "name": "refill", "argumnets": {}}], "actoins": [], "bogus": 1}
    problems = problems_of([{"id": "t1", "user_scenario": {"instructions": instructions}, "evaluation_criteria": criteria}])

    assert "extra fields found (known_infos) @ $[0].user_scenario.instructions (did you mean 'known_info'?)" in problems
    assert "extra fields found (argumnets) @ $[0].evaluation_criteria.actions[0] (did you mean 'arguments'?)" in problems
    assert "extra fields found (actoins, bogus) @ $[0].evaluation_criteria (did you mean 'actions' for 'actoins'?)" in problems


def test_task_field_suggestions_know_the_loaded_extensions_and_files_of_one_task() -> None:
    shifts = bench_kernel.TaskExtension(name="shifts", field="goal_shifts", parent="user_scenario")
    vocabulary = bench_kernel.TaskVocabulary(extensions=[shifts])
    item = {"id": "t1", "user_scenario": {"instructions": "Hi.", "goal_shfits": []}}

    [problem] = problems_of([item], vocabulary=vocabulary, sources=["tasks/task_t1.json"])
    assert problem == "extra fields found (goal_shfits) @ $.user_scenario (did you mean 'goal_shifts'?)"


def test_a_first_party_field_whose_distribution_is_missing_names_the_distribution() -> None:
    nobody = bench_kernel.TaskVocabulary(owners=dict)  # no installed plugin owns `goals`: bench-atod is not installed
    item = {"id": "t1", "user_scenario": {"instructions": "Hi.", "goal_shifts": []}, "goals": []}

    assert problems_of([item], vocabulary=nobody) == [
        "extra fields found (goal_shifts) @ $[0].user_scenario (owned by the distribution bench-changebench: "
        "pip install bench-changebench, then add --plugin changebench)",
        "extra fields found (goals) @ $[0] (owned by the distribution bench-atod: pip install bench-atod, then add --plugin atod)",
    ]


def test_a_misspelt_reward_component_names_the_registered_one(site: Site) -> None:
    tasks = site.cwd / "basis.json"
    tasks.write_text(
        json.dumps([{"id": "t1", "user_scenario": {"instructions": "Ask for a refill."}, "evaluation_criteria": {"reward_basis": ["DBB"]}}])
    )
    line = error_line(site.bench("run", "--plugin", "pharma", "--tasks-file", str(tasks), "--db", str(site.cwd / "basis.db")))

    assert f"Error: plugin 'pharma': domain 'pharma': {tasks}: unknown reward component 'DBB' @ " in line
    assert "'DBB' @ $[0].evaluation_criteria.reward_basis[0] (did you mean 'DB'?)" in line


def test_a_misspelt_metric_name_suggests_the_registered_one() -> None:
    @bench_kernel.hookimpl(specname="register_metrics")
    def register_metrics(register: Callable[[Metric], None]) -> None:
        register(Metric(name="recovery"))

    holder = types.SimpleNamespace(register_metrics=register_metrics)
    registry = bench_kernel.collect(bench_kernel.get_plugin_manager([], [("acme", holder)]))
    with pytest.raises(UnknownComponentError, match=r"no metric named 'acme:recovry' \(did you mean 'acme:recovery'\?\)"):
        registry.get("metric", "acme:recovry")


def test_a_misspelt_hook_names_plugin_function_and_the_hook_meant(site: Site) -> None:
    line = error_line(site.bench("run", "--plugin", "typo", "--db", str(site.cwd / "typo.db")))

    assert line.startswith(
        "Error: plugin 'typo' failed: module bench_typo marks functions with @bench_kernel.hookimpl that name "
        "no hook of bench: regster_agents (did you mean 'register_agents'?) (rename each to its hook's name; the hooks: "
    )
    assert "register_agents, " in line and line.endswith(")")
    assert not (site.cwd / "typo.db").exists()


def test_a_hook_without_its_marker_names_plugin_function_and_the_marker(site: Site) -> None:
    line = error_line(site.bench("run", "--plugin", "unmarked", "--db", str(site.cwd / "unmarked.db")))

    assert line == (
        "Error: plugin 'unmarked' failed: module bench_unmarked has functions named like hooks but not marked "
        "with @bench_kernel.hookimpl, so none of them is registered: register_agents (add the decorator above each)"
    )


def test_a_misspelt_plugin_name_suggests_the_installed_one(site: Site) -> None:
    line = error_line(site.bench("run", "--plugin", "pharm", "--db", str(site.cwd / "pharm.db")))

    assert line.startswith("Error: plugin 'pharm' is not installed (did you mean 'pharma'?) (installed: ")


def test_a_distribution_without_its_entry_point_is_named_as_such(site: Site) -> None:
    line = error_line(site.bench("run", "--plugin", "orphan", "--db", str(site.cwd / "orphan.db")))

    assert line == (
        "Error: bench-orphan is installed but declares no [project.entry-points.bench], so bench cannot load "
        "it as a plugin. A library that registers no hooks (as bench-knowledge and bench-compose are) is used by the "
        "plugins that depend on it and needs no --plugin; a plugin needs `[project.entry-points.bench]` with "
        '`orphan = "bench_orphan"` in its pyproject.toml, then a new install'
    )


def test_a_domain_whose_distribution_lacks_its_entry_point_says_so(site: Site) -> None:
    line = error_line(site.bench("run", "--plugin", "pharma", "--domain", "orphan", "--db", str(site.cwd / "o.db")))

    assert line.startswith("Error: no domain named 'orphan' (registered: ")
    assert line.endswith(
        "; bench-orphan is installed but declares no [project.entry-points.bench], so bench cannot load "
        "it as a plugin. A library that registers no hooks (as bench-knowledge and bench-compose are) is used by the "
        "plugins that depend on it and needs no --plugin; a plugin needs `[project.entry-points.bench]` with "
        '`orphan = "bench_orphan"` in its pyproject.toml, then a new install'
    )


@pytest.mark.parametrize(
    ("option", "value", "meant"),
    [
        ("--agent", "crashng", "no agent named 'crashng' (did you mean 'crashing'?)"),
        ("--user", "mutte", "no user simulator named 'mutte' (did you mean 'mute'?)"),
        ("--executor", "lcoal", "no executor named 'lcoal' (did you mean 'local'?)"),
        ("--channel", "identty", "no channel named 'identty' (did you mean 'identity'?)"),
    ],
)
def test_a_misspelt_component_suggests_the_registered_one(site: Site, option: str, value: str, meant: str) -> None:
    db = site.cwd / f"component-{value}.db"
    line = error_line(site.bench("run", "--plugin", "pharma", option, value, "--db", str(db)))

    assert line.startswith(f"Error: {meant} (registered: "), line
    assert not db.exists()
