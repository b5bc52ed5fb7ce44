"""The kernel's seams, each pinned by the example plugin in seam_plugins.py, and the 'runs that never lie' fixes."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest
from plugin_factory import needs_installed, needs_report
from seam_plugins import GOALS, Goals, Registers, SeamPlugin, TurnLedger
from toy_domain import TASKS, ToyDomain, ToyPlugin, _instructions

import bench_kernel
from bench_kernel import (
    AgentSession,
    ChatRequest,
    ChatResponse,
    ConfigError,
    ConversationSetup,
    Message,
    Metric,
    MetricContext,
    Model,
    ModelClient,
    ModelConfig,
    ModelUnavailableError,
    TaskFileError,
    TaskVocabulary,
    load_tasks,
)
from bench_kernel.evaluation.sections import ReportContext
from bench_kernel.modelhub.prices import Price
from bench_kernel.plugins import PluginSet, collect, get_plugin_manager
from bench_kernel.report.report import build_report
from bench_kernel.run.runner import RunConfig, RunSummary, load_domain, run
from bench_kernel.store.store import Store

SHIFT_TASK = {
    "id": "shift",
    "user_scenario": {
        "instructions": _instructions("Add one to a, then ask about b."),
        "script": ["Please add one to counter a.", "Now, what is counter b?"],
        "seam_goals": {"goals": ["increment a", "read b"]},
    },
    "evaluation_criteria": {"actions": [{"action_id": "1", "name": "increment", "arguments": {"name": "a", "by": 1}}], "reward_basis": ["DB"]},
}


def plugins(*extra: tuple[str, object], tasks: Sequence[dict[str, Any]] = (SHIFT_TASK,), seams: bool = True) -> PluginSet:
    objects = [("toy", ToyPlugin(ToyDomain(tasks=list(tasks)))), *([("seams", SeamPlugin())] if seams else []), *extra]
    return get_plugin_manager([], extra=objects)


def go(tmp_path: Path, *extra: tuple[str, object], tasks: Sequence[dict[str, Any]] = (SHIFT_TASK,), seams: bool = True, **config: Any) -> RunSummary:
    config.setdefault("domain", "toy")
    config.setdefault("baseline", False)
    return run(RunConfig(**config), tmp_path / "runs.db", plugins=plugins(*extra, tasks=tasks, seams=seams))


def query(tmp_path: Path, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    store = Store(tmp_path / "runs.db")
    try:
        return list(store.db.query(sql, list(params)))
    finally:
        store.close()


# --------------------------------------------------------------------------- a domain's own scripted user


def test_a_domains_scripted_user_plays_where_a_run_asks_for_the_scripted_user(tmp_path: Path) -> None:
    @attrs.define(kw_only=True)
    class Planned(ToyDomain):
        def load(self, options: bench_kernel.DomainOptions) -> bench_kernel.DomainData:
            return attrs.evolve(super().load(options), scripted_user="shifting")

    objects = [("toy", ToyPlugin(Planned(tasks=[SHIFT_TASK]))), ("seams", SeamPlugin())]
    summary = run(RunConfig(domain="toy"), tmp_path / "runs.db", plugins=get_plugin_manager([], extra=objects))
    users = query(tmp_path, "select arm, user from conversations where run_id = ? order by arm", [summary.run_id])
    assert users == [{"arm": "agent", "user": "shifting"}, {"arm": "baseline", "user": "shifting"}]
    other = run(
        RunConfig(domain="toy", user="shifting", baseline=False, run_id="named"), tmp_path / "runs.db", plugins=get_plugin_manager([], extra=objects)
    )
    assert query(tmp_path, "select user from conversations where run_id = ?", [other.run_id]) == [{"user": "shifting"}]


def test_without_one_the_kernels_scripted_user_plays(tmp_path: Path) -> None:
    summary = go(tmp_path)
    assert query(tmp_path, "select user from conversations where run_id = ?", [summary.run_id]) == [{"user": "scripted"}]


# --------------------------------------------------------------------------- events and message stamps


def test_a_user_emits_a_typed_event_stored_with_its_message_index(tmp_path: Path) -> None:
    summary = go(tmp_path, user="shifting")
    events = query(tmp_path, "select * from conversation_events where run_id = ?", [summary.run_id])
    assert [e["kind"] for e in events] == ["goal.shift"]
    messages = query(tmp_path, "select * from messages order by idx")
    shift_at = events[0]["message_index"]
    # The shift belongs to the message the user was writing: its second line.
    assert messages[shift_at]["role"] == "user" and messages[shift_at]["content"] == "Now, what is counter b?"
    assert json.loads(events[0]["data_json"]) == {"goal_index": 1, "goal": "read b", "previous_goal": "increment a", "reason": "first goal done"}
    assert events[0]["source"] == "shifting-user"


def test_every_message_gets_its_turn_index_timestamp_and_participant_latency(tmp_path: Path) -> None:
    go(tmp_path, user="shifting")
    messages = query(tmp_path, "select idx, role, turn_idx, timestamp_utc, latency_ms, message_json from messages order by idx")
    assert [m["turn_idx"] for m in messages] == [m["idx"] for m in messages]
    assert all(m["timestamp_utc"] for m in messages)
    stamps = [m["timestamp_utc"] for m in messages]
    assert stamps == sorted(stamps)
    _greeting, *rest = messages
    assert all(m["latency_ms"] is not None for m in rest if m["role"] in ("user", "assistant"))
    assert all(m["latency_ms"] is None for m in messages if m["role"] == "tool")
    assert json.loads(rest[0]["message_json"])["turn_idx"] == 1


# --------------------------------------------------------------------------- channels


def test_the_uppercase_channel_changes_what_the_agent_hears_and_both_texts_are_kept(tmp_path: Path) -> None:
    heard: list[str] = []

    @attrs.define
    class Listening(AgentSession):
        inner: AgentSession

        async def respond(self, incoming: Sequence[Message]) -> Any:
            heard.extend(m.content for m in incoming if m.role == "user" and m.content)
            return await self.inner.respond(incoming)

    @attrs.define(kw_only=True)
    class ListeningOracle(bench_kernel.Agent):
        name: str = "listening"

        def start(self, setup: ConversationSetup) -> AgentSession:
            return Listening(bench_kernel.OracleAgent().start(setup))

    summary = go(tmp_path, ("listener", Registers(agents=[ListeningOracle()])), agent="listening", channel="uppercase")
    assert heard[0] == "PLEASE ADD ONE TO COUNTER A."
    stored = query(tmp_path, "select content from messages where role = 'user' order by idx")
    assert stored[0]["content"] == "Please add one to counter a."
    transcripts = query(tmp_path, "select message_index, data_json from conversation_events where kind = 'channel.transcript'")
    first = json.loads(transcripts[0]["data_json"])
    assert first == {"direction": "to_agent", "meant": "Please add one to counter a.", "heard": "PLEASE ADD ONE TO COUNTER A.", "details": {}}
    assert query(tmp_path, "select distinct channel from conversations") == [{"channel": "uppercase"}]
    assert summary.status == "complete"


def test_a_paired_run_plays_each_conversation_again_without_the_channel(tmp_path: Path) -> None:
    go(tmp_path, channel="uppercase", paired=True)
    rows = query(tmp_path, "select arm, channel, seed, id from conversations order by arm")
    assert [(r["arm"], r["channel"]) for r in rows] == [("agent", "uppercase"), ("text", "identity")]
    assert rows[0]["seed"] == rows[1]["seed"]
    text_events = query(tmp_path, "select kind from conversation_events where conversation_id = ?", [rows[1]["id"]])
    assert "channel.transcript" not in {e["kind"] for e in text_events}


def test_a_channel_fills_the_model_roles_it_needs_with_its_defaults() -> None:
    from bench_kernel.run.planning import with_component_defaults

    channel = bench_kernel.Channel(name="c", model_roles=("tts",), default_models={"tts": {"backend": "piper", "model": "joe"}})
    config = with_component_defaults(RunConfig(), channel)
    assert (config.models["tts"].backend, config.models["tts"].model) == ("piper", "joe")
    given = RunConfig(models={"tts": bench_kernel.ModelConfig(backend="openai", model="tts-1")})
    assert with_component_defaults(given, channel).models["tts"].backend == "openai"


def test_an_unknown_channel_is_refused_before_the_run(tmp_path: Path) -> None:
    with pytest.raises(bench_kernel.BenchError, match="no channel named 'voice'"):
        go(tmp_path, channel="voice")
    assert not (tmp_path / "runs.db").exists()


# --------------------------------------------------------------------------- metrics with context


@attrs.define(eq=False)
class YesClient(ModelClient):
    calls: list[ChatRequest]

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.calls.append(request)
        return ChatResponse(content="Yes.", prompt_tokens=100, completion_tokens=10)


@attrs.define(kw_only=True, eq=False)
class YesModel(Model):
    name: str = "yes"
    calls: list[ChatRequest] = attrs.field(factory=list)

    def client(self, config: ModelConfig) -> ModelClient:
        return YesClient(self.calls)


def test_a_context_metric_sees_events_states_gold_and_writes_its_own_table(tmp_path: Path) -> None:
    summary = go(tmp_path, user="shifting")
    values = {v["metric"]: v for v in query(tmp_path, "select * from metric_values where plugin = 'seams'")}
    assert values["turn-ledger.shifts"]["value"] == 1.0
    events = query(tmp_path, "select message_index from conversation_events where kind = 'goal.shift'")
    assert values["turn-ledger.first_shift_at"]["value"] == events[0]["message_index"]
    assert values["turn-ledger.gold_state"]["value"] == 1.0
    assert json.loads(values["turn-ledger.shifts"]["details_json"]) == {"goals": ["read b"]}
    rows = query(tmp_path, "select * from seam_turns order by message_index")
    participant = query(tmp_path, "select idx from messages where role in ('user', 'assistant') order by idx")
    assert [r["message_index"] for r in rows] == [m["idx"] for m in participant]
    assert summary.status == "complete"


def test_a_metric_model_role_goes_through_the_ledger(tmp_path: Path) -> None:
    model = YesModel()
    metric_plugin = ("judging", Registers(metrics=[TurnLedger(name="judged", model_roles=("judge-2",))], models=[model]))
    go(tmp_path, metric_plugin, user="shifting", models={"judge-2": ModelConfig(backend="yes", model="yes-1")})
    assert len(model.calls) == 1
    values = {v["metric"]: v["value"] for v in query(tmp_path, "select * from metric_values where plugin = 'judging'")}
    assert values["judged.model_says_yes"] == 1.0
    ledger = query(tmp_path, "select role, model, kind, arm from llm_calls")
    assert ledger == [{"role": "judge-2", "model": "yes-1", "kind": "chat", "arm": "agent"}]


def test_a_metric_whose_role_is_not_configured_is_refused_before_the_run(tmp_path: Path) -> None:
    metric_plugin = ("judging", Registers(metrics=[TurnLedger(name="judged", model_roles=("judge-2",))]))
    with pytest.raises(ConfigError, match=r"'judged' needs a model for the judge-2 role: give --model-option judge-2.model"):
        go(tmp_path, metric_plugin)


def test_rows_that_do_not_fit_cost_only_their_metric(tmp_path: Path) -> None:
    broken = ("broken", Registers(metrics=[TurnLedger(name="misfiled", table="no_such_table")]))
    summary = go(tmp_path, broken, user="shifting")
    values = {(v["plugin"], v["metric"]): v for v in query(tmp_path, "select * from metric_values")}
    assert values[("broken", "misfiled")]["value"] is None
    assert "no_such_table" in values[("broken", "misfiled")]["error"]
    assert ("broken", "misfiled.shifts") not in values
    assert values[("seams", "turn-ledger.shifts")]["value"] == 1.0
    assert values[("bench-kernel", "reward")]["value"] == 1.0
    assert summary.status == "complete"


@attrs.define(kw_only=True)
class Named(Metric):
    value: float = 1.0

    def score(self, context: MetricContext) -> Mapping[str, float]:
        return {"": self.value}


def test_metrics_named_like_kernel_values_or_each_other_never_abort_a_run(tmp_path: Path) -> None:
    first = ("first", Registers(metrics=[Named(name="reward", value=0.25), Named(name="component.DB", value=0.5)]))
    second = ("second", Registers(metrics=[Named(name="reward", value=0.75)]))
    summary = go(tmp_path, first, second, seams=False, tasks=TASKS[:1])
    rows = {(v["plugin"], v["metric"]): v["value"] for v in query(tmp_path, "select * from metric_values")}
    assert rows[("bench-kernel", "reward")] == 1.0
    assert rows[("first", "reward")] == 0.25 and rows[("second", "reward")] == 0.75
    assert rows[("first", "component.DB")] == 0.5
    assert summary.status == "complete"
    assert query(tmp_path, "select status from runs") == [{"status": "complete"}]


# --------------------------------------------------------------------------- open evaluation and task extensions


def weighted(task_id: str, weights: dict[str, float]) -> dict[str, Any]:
    task = json.loads(json.dumps(TASKS[1]))  # read-b: DB + COMMUNICATE
    task["id"] = task_id
    task["evaluation_criteria"]["reward_rule"] = {"name": "weighted-sum", "params": {"weights": weights}}
    return task


def test_a_task_names_a_plugin_combination_rule_with_parameters(tmp_path: Path) -> None:
    tasks = [weighted("w", {"DB": 1.0, "COMMUNICATE": 3.0})]
    summary = go(tmp_path, tasks=tasks, agent="do-nothing")
    reward = query(tmp_path, "select reward, reward_info_json from conversations")[0]
    # The do-nothing agent leaves the DB as gold (read-only task) but says nothing: 1 * 1 + 3 * 0 over 4.
    assert reward["reward"] == pytest.approx(0.25)
    assert json.loads(reward["reward_info_json"])["rule"] == "weighted-sum"
    assert summary.status == "complete"


def test_a_rule_or_component_no_plugin_registers_is_refused_with_the_json_path(tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([TASKS[0], weighted("w", {"DB": 1.0})]), encoding="utf-8")
    with pytest.raises(TaskFileError) as caught:
        load_tasks(path, TaskVocabulary())
    assert "unknown reward rule 'weighted-sum' @ $[1].evaluation_criteria.reward_rule" in str(caught.value)
    with pytest.raises(ConfigError, match="weights name components not in the basis: ACTION"):
        go(tmp_path, tasks=[weighted("w", {"ACTION": 1.0})])


def test_plugin_owned_task_data_lives_in_extensions(tmp_path: Path) -> None:
    (tmp_path / "tasks.json").write_text(json.dumps([SHIFT_TASK]), encoding="utf-8")
    registry = collect(plugins())
    data = load_domain(registry, RunConfig(domain="toy", tasks_file=str(tmp_path / "tasks.json")))
    assert data.tasks[0].extension("seam-goals") == Goals(goals=["increment a", "read b"])
    assert not hasattr(data.tasks[0].user_scenario, "seam_goals")


def test_a_field_no_loaded_plugin_owns_is_an_error_naming_field_and_owner(tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([SHIFT_TASK]), encoding="utf-8")
    with pytest.raises(TaskFileError) as caught:
        load_tasks(path, TaskVocabulary(owners=lambda: {GOALS.location: "seams"}))
    message = str(caught.value)
    assert "seam_goals" in message and "@ $[0].user_scenario" in message
    assert "owned by plugin 'seams': add --plugin seams" in message
    loaded = load_tasks(path, TaskVocabulary(extensions=[GOALS]))
    assert loaded[0].extension("seam-goals").goals == ["increment a", "read b"]


def test_extension_data_with_the_wrong_shape_names_its_path(tmp_path: Path) -> None:
    broken = json.loads(json.dumps(SHIFT_TASK))
    broken["user_scenario"]["seam_goals"] = {"goals": "not a list", "extra": 1}
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([broken]), encoding="utf-8")
    with pytest.raises(TaskFileError, match=r"@ \$\[0\]\.user_scenario\.seam_goals"):
        load_tasks(path, TaskVocabulary(extensions=[GOALS]))


# --------------------------------------------------------------------------- runs that never lie


def test_a_mode_the_domain_does_not_support_is_refused_before_the_run(tmp_path: Path) -> None:
    @attrs.define(kw_only=True)
    class NoSolo(ToyDomain):
        def load(self, options: bench_kernel.DomainOptions) -> bench_kernel.DomainData:
            return attrs.evolve(super().load(options), solo_policy=None)

    with pytest.raises(ConfigError, match="does not support the no-user mode"):
        run(
            RunConfig(domain="toy", mode=bench_kernel.Mode.NO_USER),
            tmp_path / "runs.db",
            plugins=get_plugin_manager([], extra=[("toy", ToyPlugin(NoSolo()))]),
        )
    assert not (tmp_path / "runs.db").exists()


@attrs.define
class Unreachable(AgentSession):
    async def respond(self, incoming: Sequence[Message]) -> Any:
        raise ModelUnavailableError("connection refused after 5 retries")


@attrs.define(kw_only=True)
class UnreachableAgent(bench_kernel.Agent):
    name: str = "unreachable"

    def start(self, setup: ConversationSetup) -> AgentSession:
        return Unreachable()


def test_a_run_of_infrastructure_errors_is_not_complete(tmp_path: Path) -> None:
    summary = go(tmp_path, ("down", Registers(agents=[UnreachableAgent()])), agent="unreachable", seams=False, tasks=TASKS, baseline=True)
    assert summary.infrastructure_errors == len(TASKS)
    assert summary.status == "incomplete"  # the baseline arm finished
    only = go(tmp_path, ("down", Registers(agents=[UnreachableAgent()])), agent="unreachable", seams=False, tasks=TASKS, run_id="only-down")
    assert only.status == "failed" and only.infrastructure_errors == len(TASKS)


def test_a_plugin_object_that_cannot_be_hashed_registers_like_any_other(tmp_path: Path) -> None:
    @attrs.define
    class AttrsPlugin:
        domain: ToyDomain = attrs.field(factory=ToyDomain)

        @bench_kernel.hookimpl
        def register_domains(self, register: Callable[[Any], None]) -> None:
            register(self.domain)

    with pytest.raises(TypeError):
        hash(AttrsPlugin())
    plugin_set = get_plugin_manager([], extra=[("attrs-plugin", AttrsPlugin()), ("seams", SeamPlugin())])
    assert plugin_set.failures() == []
    registry = collect(plugin_set)
    assert registry.names("domain") == ["toy"] and registry.names("channel") == ["identity", "uppercase"]


def test_the_run_id_does_not_depend_on_how_the_tasks_file_is_spelled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "tasks.json").write_text(json.dumps(TASKS), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    relative = go(tmp_path, tasks_file="tasks.json", seams=False, tasks=TASKS)
    absolute = go(tmp_path, tasks_file=str(tmp_path / "tasks.json"), seams=False, tasks=TASKS)
    assert relative.run_id == absolute.run_id
    assert absolute.resumed and absolute.skipped == len(TASKS)


# --------------------------------------------------------------------------- the ledger and the cost cap


@attrs.define
class Spending(AgentSession):
    setup: ConversationSetup

    async def respond(self, incoming: Sequence[Message]) -> Any:
        await self.setup.models.complete("agent", ChatRequest(messages=[{"role": "user", "content": "go"}]))
        return bench_kernel.AssistantMessage(content="###STOP###")

    def is_stop(self, message: Any) -> bool:
        return message.content == "###STOP###"


@attrs.define(kw_only=True)
class SpendingAgent(bench_kernel.Agent):
    name: str = "spending"
    model_roles: tuple[str, ...] = ("agent",)

    def start(self, setup: ConversationSetup) -> AgentSession:
        return Spending(setup)


def test_the_cost_cap_holds_across_resumes_and_every_call_stays_in_the_ledger(tmp_path: Path) -> None:
    many = [{**TASKS[0], "id": f"t{i}"} for i in range(12)]
    spender = ("spender", Registers(agents=[SpendingAgent()], models=[YesModel()]))
    # 100 prompt + 10 completion tokens at 10 USD per million each: 0.0011 USD a call; the cap allows 3 calls.
    config = {
        "agent": "spending",
        "seams": False,
        "tasks": many,
        "concurrency": 1,
        "max_cost": 0.003,
        "models": {"agent": ModelConfig(backend="yes", model="yes-1")},
        "prices": {"yes-1": Price(10.0, 10.0)},
    }
    first = go(tmp_path, spender, **config)
    assert first.status == "incomplete"
    calls = query(tmp_path, "select count(*) as n, sum(cost) as cost from llm_calls")[0]
    assert calls["n"] == 3 and calls["cost"] == pytest.approx(0.0033)
    again = go(tmp_path, spender, **config)
    # The cap was already reached: a resume spends nothing more instead of starting from zero.
    assert again.finished == 0
    assert query(tmp_path, "select count(*) as n from llm_calls")[0]["n"] == 3
    store = Store(tmp_path / "runs.db")
    costs = store.llm_costs(first.run_id)
    store.close()
    assert sum(c["cost"] for c in costs) == pytest.approx(calls["cost"])


# --------------------------------------------------------------------------- report sections


@needs_report()
def test_a_report_section_and_a_metric_summary_are_in_the_report(tmp_path: Path) -> None:
    summary = go(tmp_path, user="shifting")
    store = Store(tmp_path / "runs.db")
    try:
        report = build_report(store, summary.run_id, collect(plugins()))
        json_format = collect(get_plugin_manager(["report"])).get("report format", "json")
        as_json, alone = (json_format.render(report, ReportContext(section=section)) for section in (None, "shifts"))
    finally:
        store.close()
    body = json.loads(as_json)
    sections = {s["name"]: s for s in body["sections"]}
    assert (sections["shifts"]["title"], sections["shifts"]["plugin"]) == ("Goal shifts per task", "seams")
    assert sections["shifts"]["tables"][0]["rows"] == [["shift", 0, 1, 7]]
    assert sections["seams:turn-ledger"]["tables"][0]["rows"][0] == ["conversations_with_a_shift", 1.0]
    assert json.loads(alone) == sections["shifts"]
    assert "seams:turn-ledger.shifts" in body["metrics"]


@needs_report()
def test_a_section_that_raises_is_an_error_line_and_the_report_still_renders(tmp_path: Path) -> None:
    @attrs.define(kw_only=True)
    class Broken(bench_kernel.ReportSection):
        name: str = "broken"

        def build(self, view: Any) -> Any:
            raise KeyError("no such column")

    class BrokenPlugin:
        @bench_kernel.hookimpl
        def register_report_sections(self, register: Callable[[Any], None]) -> None:
            register(Broken())

    summary = go(tmp_path, ("broken", BrokenPlugin()), seams=False, tasks=TASKS)
    store = Store(tmp_path / "runs.db")
    try:
        report = build_report(store, summary.run_id, collect(plugins(("broken", BrokenPlugin()), seams=False)))
    finally:
        store.close()
    assert report.section("broken")["error"] == "KeyError: 'no such column'" and report.average_reward["value"] is not None


# --------------------------------------------------------------------------- client kinds and judge failures


@attrs.frozen
class Vectors:
    """The answer of a plugin-defined kind: one vector per text, and the tokens it was priced by."""

    vectors: list[list[float]]
    prompt_tokens: int | None = None


class VectorClient(bench_kernel.BaseClient):
    """A plugin-defined client kind (as bench-knowledge's embeddings)."""

    kind = "embeddings"

    async def embed(self, texts: list[str]) -> Vectors:
        if "boom" in texts:
            raise bench_kernel.ModelUnavailableError("the embedder fell over")
        return Vectors(vectors=[[float(len(t))] for t in texts], prompt_tokens=len(texts))


class Ears(bench_kernel.BaseClient):
    kind = "asr"


class ChatAndVectors(bench_kernel.ModelClient, VectorClient):
    """One client of two kinds (as bench-openai's, chat and embeddings)."""


@attrs.define(kw_only=True, eq=False)
class Engines(Model):
    name: str = "engines"

    def client(self, config: ModelConfig) -> Any:
        return {"asr": Ears, "embed": VectorClient, "both": ChatAndVectors}[config.model]()


def test_a_plugin_kind_is_called_through_the_hub_ledgered_priced_capped_and_checked(tmp_path: Path) -> None:
    import asyncio

    from bench_kernel.modelhub.hub import ConversationModels, ModelHub

    configs = {role: ModelConfig(backend="engines", model=role) for role in ("asr", "embed")}
    store = Store(tmp_path / "h.db")
    hub = ModelHub(configs=configs, backends={"engines": Engines()}, store=store, prices={"embed": Price(1.0, 0.0)}, max_cost=4e-6)
    models = ConversationModels(hub, run_id="r", conversation_id="r/agent/t/0")

    async def go() -> list[list[float]]:
        vectors = await models.call("embed", VectorClient, lambda client: client.embed(["a", "bb"]))
        with pytest.raises(bench_kernel.ModelUnavailableError):
            await models.call("embed", VectorClient, lambda client: client.embed(["boom"]), key="k1")
        with pytest.raises(
            ConfigError,
            match=r"the asr role needs an embeddings model, but backend 'engines' gives asr clients only: .* \(--model-option asr.backend=NAME\)",
        ):
            await models.call("asr", VectorClient, lambda client: client.embed(["a"]))
        with pytest.raises(ConfigError, match="the embed role needs a chat model, but backend 'engines' gives embeddings clients only"):
            await models.complete("embed", ChatRequest(messages=[]))
        await models.call("embed", VectorClient, lambda client: client.embed(["a", "b"]))
        with pytest.raises(bench_kernel.BudgetExceededError):  # 2 + 2 tokens at $1/M reach the cap of $4e-6
            await models.call("embed", VectorClient, lambda client: client.embed(["a"]))
        return vectors.vectors

    assert asyncio.run(go()) == [[1.0], [2.0]]
    ledger = list(store.db.query("select role, kind, cost, request_hash, error from llm_calls order by id"))
    store.close()
    assert [(r["role"], r["kind"], r["request_hash"]) for r in ledger] == [
        ("embed", "embeddings", None),
        ("embed", "embeddings", "k1"),
        ("embed", "embeddings", None),
    ]
    assert ledger[0]["cost"] == pytest.approx(2e-6) and ledger[1]["cost"] is None and "fell over" in ledger[1]["error"]
    assert hub.spent == pytest.approx(4e-6)


@pytest.mark.parametrize(
    ("role", "model", "message"),
    [
        ("agent", "embed", "the agent role needs a chat model, but backend 'engines' gives embeddings clients only"),
        ("embeddings", "asr", "the embeddings role needs an embeddings model, but backend 'engines' gives asr clients only"),
    ],
)
def test_a_built_in_role_on_a_backend_of_another_kind_refuses_to_start(role: str, model: str, message: str) -> None:
    import asyncio

    from bench_kernel.modelhub.hub import ModelHub

    hub = ModelHub(configs={role: ModelConfig(backend="engines", model=model)}, backends={"engines": Engines()})
    with pytest.raises(ConfigError, match=message):
        asyncio.run(hub.check())
    for role, model in (("tts", "asr"), ("agent", "both"), ("embeddings", "both"), ("embeddings", "embed")):  # other roles, or a client of both kinds
        asyncio.run(ModelHub(configs={role: ModelConfig(backend="engines", model=model)}, backends={"engines": Engines()}).check())


@attrs.define(kw_only=True)
class BrokenJudge(bench_kernel.Judge):
    name: str = "broken-judge"

    async def judge(self, request: Any) -> Any:
        raise RuntimeError("judge model returned nothing")


class JudgePlugin:
    @bench_kernel.hookimpl
    def register_judges(self, register: Callable[[Any], None]) -> None:
        register(BrokenJudge())


@attrs.define(kw_only=True)
class AskedTwice(bench_kernel.Judge):
    """The run's judge as a component has it asked."""

    inner: bench_kernel.Judge


@attrs.define(kw_only=True)
class Prepared(bench_kernel.RewardComponent):
    """A component that has the run's judge asked its way, refuses a run without one and counts its resumes."""

    name: str = "PREPARED"
    always: bool = True
    resumes: int = 0

    async def score(self, context: bench_kernel.RewardContext) -> bench_kernel.ComponentScore:
        return bench_kernel.all_met(self.name, [])

    def prepare_judge(self, judge: bench_kernel.Judge | None, config: Any, tasks: Sequence[Any]) -> bench_kernel.Judge | None:
        if judge is None:
            raise ConfigError(f"PREPARED needs --judge for {len(tasks)} tasks")
        return AskedTwice(name=judge.name, inner=judge)

    async def resume(self, ctx: Any) -> Mapping[str, Any]:
        self.resumes += 1
        return {"prepared": self.resumes}


class PreparedPlugin:
    def __init__(self, component: Prepared, seen: JudgeSeen) -> None:
        self.component, self.seen = component, seen

    @bench_kernel.hookimpl
    def register_reward_components(self, register: Callable[[Any], None]) -> None:
        register(self.component)

    @bench_kernel.hookimpl
    def register_judges(self, register: Callable[[Any], None]) -> None:
        register(bench_kernel.Judge(name="plain"))

    @bench_kernel.hookimpl
    def register_metrics(self, register: Callable[[Any], None]) -> None:
        register(self.seen)


@attrs.define(kw_only=True)
class JudgeSeen(Metric):
    """Keeps the judge each conversation's metrics are given."""

    seen: list[Any] = attrs.field(factory=list)

    async def score(self, context: MetricContext) -> dict[str, float | None]:
        self.seen.append(context.judge)
        return {}


def test_components_prepare_the_runs_judge_for_everyone_and_take_part_in_resumes(tmp_path: Path) -> None:
    component, seen = Prepared(), JudgeSeen(name="seen")
    plugin = ("prepared", PreparedPlugin(component, seen))
    with pytest.raises(ConfigError, match="PREPARED needs --judge for 1 tasks"):
        go(tmp_path, plugin, tasks=TASKS[:1], seams=False)
    first = go(tmp_path, plugin, tasks=TASKS[:1], seams=False, judge="plain")
    [given] = seen.seen
    assert isinstance(given, AskedTwice) and given.inner.name == "plain" and component.resumes == 0
    again = go(tmp_path, plugin, tasks=TASKS[:1], seams=False, judge="plain")
    assert again.run_id == first.run_id and again.resumed and component.resumes == 1
    [resumed] = query(tmp_path, "select data_json from events where kind = 'run.resumed'")
    assert json.loads(resumed["data_json"])["prepared"] == 1


@needs_installed("judging")
@needs_report()
def test_a_judge_failure_is_a_component_error_in_the_report(tmp_path: Path) -> None:
    judged = json.loads(json.dumps(TASKS[0]))
    judged["evaluation_criteria"].update(nl_assertions=["The agent was polite."], reward_basis=["DB", "NL_ASSERTION"])
    judging = ("judging", importlib.import_module("bench_judging"))
    summary = go(tmp_path, ("judge", JudgePlugin()), judging, tasks=[judged], seams=False, judge="broken-judge")
    store = Store(tmp_path / "runs.db")
    try:
        report = build_report(store, summary.run_id)
    finally:
        store.close()
    assert report.components["NL_ASSERTION"]["errors"] == 1
    assert {k: report.components["NL_ASSERTION"][k] for k in ("value", "low", "high", "n")} == {"value": None, "low": None, "high": None, "n": 0}


# --------------------------------------------------------------------------- breakdown by task attribute


@needs_report()
def test_the_report_breaks_every_figure_down_by_a_task_attribute(tmp_path: Path) -> None:
    easy = {**TASKS[0], "id": "easy-inc", "attributes": {"persona": "EASY_1", "intent": "counter"}}
    hard = {**TASKS[2], "id": "hard-lamp", "attributes": {"persona": "HARD_1", "intent": "device"}}
    summary = go(tmp_path, tasks=[easy, hard], seams=False, agent="do-nothing", trials=2)
    store = Store(tmp_path / "runs.db")
    try:
        report = build_report(store, summary.run_id, by=["persona", "intent"])
        with pytest.raises(ConfigError, match=r"no task attribute 'mood' in this run .attributes: domain, intent, persona"):
            build_report(store, summary.run_id, by=["mood"])
    finally:
        store.close()
    persona = {g["value"]: g for g in report.breakdowns[0]["groups"]}
    assert set(persona) == {"EASY_1", "HARD_1"}
    assert persona["EASY_1"]["conversations"] == 2 and persona["EASY_1"]["tasks"] == 1
    assert persona["HARD_1"]["figures"]["component.ENV_ASSERTION"] == 0.0
    assert persona["EASY_1"]["figures"]["average_reward"] == 0.0
    assert [b["attribute"] for b in report.breakdowns] == ["persona", "intent"]


# --------------------------------------------------------------------------- failures inside the seams


class FailingSession(bench_kernel.ChannelSession):
    async def to_agent(self, message: Any) -> Any:
        raise OSError("speech engine crashed")


@attrs.define(kw_only=True)
class FailingChannel(bench_kernel.Channel):
    name: str = "failing"

    def start(self, setup: ConversationSetup) -> bench_kernel.ChannelSession:
        return FailingSession()


def test_a_channel_that_raises_is_an_infrastructure_error_of_that_conversation(tmp_path: Path) -> None:
    summary = go(tmp_path, ("failing", Registers(channels=[FailingChannel()])), seams=False, tasks=TASKS[:1], channel="failing")
    assert summary.status == "failed" and summary.infrastructure_errors == 1
    (row,) = query(tmp_path, "select termination_reason, error from conversations")
    assert row == {"termination_reason": "infrastructure_error", "error": "OSError: speech engine crashed"}


@needs_report()
def test_a_metric_summary_that_raises_is_an_error_line(tmp_path: Path) -> None:
    @attrs.define(kw_only=True)
    class BadSummary(Metric):
        name: str = "bad-summary"

        def score(self, context: MetricContext) -> Mapping[str, float]:
            return {"": 1.0}

        def summarize(self, view: Any) -> Mapping[str, float]:
            raise ZeroDivisionError("no conversations")

    plugin = ("bad", Registers(metrics=[BadSummary()]))
    summary = go(tmp_path, plugin, seams=False, tasks=TASKS[:1])
    store = Store(tmp_path / "runs.db")
    try:
        report = build_report(store, summary.run_id, collect(plugins(plugin, seams=False)))
    finally:
        store.close()
    assert (report.section("bad:bad-summary")["plugin"], report.section("bad:bad-summary")["error"]) == ("bad", "ZeroDivisionError: no conversations")


# --------------------------------------------------------------------------- plugin-owned data: problems, nulls, oracle steps, user profiles


@attrs.define(kw_only=True)
class CheckedGoals(bench_kernel.TaskExtension):
    """Goals that must not repeat, whose value tells the oracle what to do."""

    name: str = "seam-goals"
    field: str = "seam_goals"
    parent: Any = "user_scenario"
    type: Any = Goals

    def problems(self, value: Goals) -> list[str]:
        return ["a goal repeats"] if len(set(value.goals)) != len(value.goals) else []

    def load(self, raw: Any, *, source: str, root: str) -> Any:
        goals = super().load(raw, source=source, root=root)
        return Steps(goals=goals.goals)


@attrs.frozen
class Steps:
    goals: list[str]

    def oracle_actions(self) -> list[bench_kernel.Action]:
        return [bench_kernel.Action(action_id=f"step-{i}", name="increment", arguments={"name": "a", "by": 1}) for i, _ in enumerate(self.goals)]


def test_extension_problems_are_listed_and_an_explicit_null_is_no_data(tmp_path: Path) -> None:
    repeated = json.loads(json.dumps(SHIFT_TASK))
    repeated["user_scenario"]["seam_goals"] = {"goals": ["a", "a"]}
    empty = {**json.loads(json.dumps(SHIFT_TASK)), "id": "none"}
    empty["user_scenario"]["seam_goals"] = None
    tasks = load_tasks(_write(tmp_path, [repeated, empty]), TaskVocabulary(extensions=[CheckedGoals()]))
    assert tasks[0].extension("seam-goals") == Steps(goals=["a", "a"]) and tasks[1].extensions == {}
    from bench_kernel.tasks.extensions import task_problems

    assert task_problems(tasks, [CheckedGoals()]) == ("task 'shift': user_scenario.seam_goals: a goal repeats",)


def test_the_oracle_performs_steps_a_plugin_derives_when_a_task_has_no_gold_actions() -> None:
    task = bench_kernel.Task(
        id="t", user_scenario=bench_kernel.UserScenario(instructions="x"), extensions={"seam-goals": Steps(goals=["one", "two"])}
    )
    assert [a.action_id for a in task.oracle_actions()] == ["step-0", "step-1"]
    assert task.gold_actions() == []


def test_user_side_set_up_of_a_domain_without_user_tools_becomes_the_users_profile() -> None:
    from toy_domain import ToyDomain as Toy

    data = attrs.evolve(Toy(tasks=[]).load(bench_kernel.DomainOptions()), user_toolkit=None, user_state=None)
    task = bench_kernel.Task(
        id="p",
        user_scenario=bench_kernel.UserScenario(instructions="x"),
        initial_state=bench_kernel.InitialState(
            initialization_data=bench_kernel.InitializationData(user_data={"authenticated": False, "name": "Ada"}),
            initialization_actions=[bench_kernel.EnvFunctionCall(env_type="user", func_name="update_user", arguments={"zip_code": "19122"})],
        ),
    )
    env = bench_kernel.build_environment(data, task)
    assert env.user_tools is not None and env.user_tools.call_function("profile", {}) == {"authenticated": False, "name": "Ada", "zip_code": "19122"}
    assert env.user_schemas() is None  # a profile, not tools
    assert bench_kernel.build_environment(data, None).user_tools is None


def _write(tmp_path: Path, tasks: list[dict[str, Any]]) -> Path:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(tasks), encoding="utf-8")
    return path
