"""Offline evaluation: the memory evaluator re-run over a stored run's conversations (played or imported), no replay.

Goals come from the run's own tasks (its domain loaded as the run was) or from a goals file: ATOD's
annotated dialogues (`goal_list` per `dialogue_id`) or a bench task file (`goals` per `id`); a
conversation's task id names its dialogue. Results replace this plugin's values and memory rows of
each evaluated conversation.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
from bench_atod import Goal, task_goals
from bench_knowledge import EmbeddingRequest

from bench_kernel import (
    BenchError,
    ChatRequest,
    ChatResponse,
    ConfigError,
    Event,
    Message,
    ModelConfig,
    Registry,
    Store,
    collect,
    converter,
    get_plugin_manager,
    load_run_domain,
    model_option_configs,
    read_json,
    utc_now,
)

from .api import DialogueEvaluation, evaluate_conversation, failed, make_judge, stable_seed
from .index import make_index
from .metric import EMBEDDINGS_ROLE, JUDGE_ROLE, run_figures
from .store import TABLES, migrations

PLUGIN = "memory"
_GOAL_FIELDS = {a.name for a in attrs.fields(Goal)}


@attrs.frozen(kw_only=True)
class OfflineSummary:
    """What an offline evaluation did."""

    run_id: str
    evaluated: int
    errors: list[str]
    skipped: list[str]
    figures: dict[str, float | None]


def read_goals_file(path: Path) -> dict[str, list[Goal]]:
    """Goals by dialogue or task id from ATOD's annotated dialogues or a bench task file; errors name the JSON path."""
    document = read_json(path)
    entries = document.get("dialogues", document) if isinstance(document, dict) else document
    if not isinstance(entries, list):
        raise ConfigError(f"{path}: expected a list of dialogues or tasks")
    out: dict[str, list[Goal]] = {}
    for i, entry in enumerate(entries):
        key = "goal_list" if isinstance(entry, dict) and "goal_list" in entry else "goals"
        ident = entry.get("dialogue_id", entry.get("id")) if isinstance(entry, dict) else None
        if ident is None or not isinstance(entry.get(key), list):
            raise ConfigError(f"{path}: $[{i}] has no dialogue_id/id with a goal_list/goals list")
        out[str(ident)] = [goal_from(raw, f"{path}: $[{i}].{key}[{j}]") for j, raw in enumerate(entry[key])]
    return out


def goal_from(raw: Any, where: str) -> Goal:
    """A goal from a JSON object (ATOD's extra keys ignored); the error names where it is."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected an object")
    try:
        return converter.structure({k: v for k, v in raw.items() if k in _GOAL_FIELDS}, Goal)
    except Exception as exc:
        raise ConfigError(f"{where}: not a goal ({exc})") from exc


def run_goals(store: Store, run_id: str) -> dict[str, list[Goal]]:
    """Goals by task id from the run's own tasks (its domain loaded with the run's plugins and settings)."""
    run = store.run(run_id)
    assert run is not None
    try:
        data = load_run_domain(run)
    except BenchError as exc:
        raise ConfigError(f"cannot load the tasks of run {run_id!r} ({exc}); give them with --goals-file") from exc
    return {t.id: task_goals(t) for t in data.tasks}


def model_configs(options: Mapping[str, Any]) -> dict[str, ModelConfig]:
    """`ROLE.KEY` -> value options (as `--model-option` gives them) as model configurations by role."""
    return model_option_configs(options)


@attrs.frozen(kw_only=True)
class _Call:
    """One ledgered model call (the fields the store's llm_calls table takes)."""

    role: str
    model: str
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_ms: int | None
    error: str | None = None
    kind: str = "chat"
    request_hash: str | None = None
    cost: float | None = None
    cached: bool = False
    attempts: int = 1
    ts_utc: str = attrs.field(factory=utc_now)


@attrs.define
class DirectModels:
    """Model access for an offline evaluation: the registered backends' clients, every call ledgered under arm 'memory'."""

    configs: dict[str, ModelConfig]
    registry: Registry
    store: Store | None
    run_id: str
    conversation_id: str | None = None
    clients: dict[str, Any] = attrs.field(factory=dict)

    def has(self, role: str) -> bool:
        """True when the role is configured."""
        return role in self.configs

    def _client(self, role: str) -> Any:
        if role not in self.clients:
            config = self.configs[role]
            self.clients[role] = self.registry.get("model", config.backend).client(config)
        return self.clients[role]

    def _ledger(self, call: _Call) -> None:
        if self.store is not None:
            self.store.record_llm_call(self.run_id, self.conversation_id, "memory", call)

    async def complete(self, role: str, request: ChatRequest) -> ChatResponse:
        """One chat call for a role."""
        config = self.configs[role]
        started = time.perf_counter()
        try:
            response: ChatResponse = await self._client(role).complete(attrs.evolve(request, sampling={**config.sampling, **request.sampling}))
        except BenchError as exc:
            self._ledger(
                _Call(
                    role=role,
                    model=config.model,
                    prompt_tokens=None,
                    completion_tokens=None,
                    latency_ms=int((time.perf_counter() - started) * 1000),
                    error=f"{type(exc).__name__}: {exc}",
                )
            )
            raise
        self._ledger(
            _Call(
                role=role,
                model=config.model,
                prompt_tokens=response.prompt_tokens,
                completion_tokens=response.completion_tokens,
                latency_ms=response.latency_ms,
            )
        )
        return response

    async def embed(self, role: str, request: EmbeddingRequest) -> Any:
        """Embeddings for a role."""
        config = self.configs[role]
        vectors = await self._client(role).embed(request)
        self._ledger(
            _Call(
                role=role,
                model=config.model,
                prompt_tokens=vectors.prompt_tokens,
                completion_tokens=None,
                latency_ms=vectors.latency_ms,
                kind="embeddings",
            )
        )
        return vectors

    async def aclose(self) -> None:
        """Release the clients."""
        for client in self.clients.values():
            await client.aclose()


def _messages(store: Store, conversation_id: str) -> list[Message]:
    return [converter.structure(json.loads(m["message_json"]), Message) for m in store.messages(conversation_id)]  # type: ignore[arg-type]


def _events(store: Store, conversation_id: str) -> list[Event]:
    return [
        Event(kind=r["kind"], data=json.loads(r["data_json"] or "{}"), message_index=r["message_index"], source=r["source"] or "", ts_utc=r["ts_utc"])
        for r in store.conversation_events(conversation_id)
    ]


async def evaluate_run(
    db_path: str | Path,
    run_id: str,
    *,
    judge: str = "rules",
    index: str = "lexical",
    goals_file: Path | None = None,
    model_options: Mapping[str, Any] | None = None,
    arm: str = "agent",
) -> OfflineSummary:
    """Re-run the memory evaluator over a stored run's conversations and store its results with the run."""
    configs = model_configs(model_options or {})
    store = Store(db_path, extra_migrations=[migrations])
    try:
        store.run(run_id)
        goals = read_goals_file(goals_file) if goals_file else run_goals(store, run_id)
        registry = collect(get_plugin_manager(None)) if configs else Registry()
        models = DirectModels(configs, registry, store, run_id)
        if judge == "llm" and not models.has(JUDGE_ROLE):
            raise ConfigError(
                f"--judge llm needs the {JUDGE_ROLE} role: --model-option {JUDGE_ROLE}.model=NAME --model-option {JUDGE_ROLE}.base_url=URL"
            )
        try:
            return await _evaluate_all(store, run_id, goals, models, judge, index, arm)
        finally:
            await models.aclose()
    finally:
        store.close()


async def _evaluate_all(
    store: Store, run_id: str, goals: dict[str, list[Goal]], models: DirectModels, judge: str, index: str, arm: str
) -> OfflineSummary:
    rows = [r for r in store.conversations(run_id) if r["arm"] == arm and r["termination_reason"] != "infrastructure_error"]
    evaluations: list[DialogueEvaluation] = []
    skipped = [r["task_id"] for r in rows if not goals.get(r["task_id"])]
    for row in (r for r in rows if goals.get(r["task_id"])):
        evaluations.append(await _evaluate_one(store, row, goals[row["task_id"]], models, judge, index))
        _save(store, run_id, evaluations[-1])
    scored = [e for e in evaluations if e.scores is not None]
    figures = run_figures(
        [e.details()["counts"] for e in scored], [e.scores.detection_f1 for e in scored if e.scores], [t.latency_ms for e in scored for t in e.turns]
    )
    return OfflineSummary(
        run_id=run_id,
        evaluated=len(evaluations),
        errors=[f"{e.conversation_id}: {e.error}" for e in evaluations if e.error],
        skipped=skipped,
        figures=figures,
    )


async def _evaluate_one(store: Store, row: dict[str, Any], goals: list[Goal], models: DirectModels, judge: str, index: str) -> DialogueEvaluation:
    cid = row["id"]
    models.conversation_id = cid

    async def complete(request: ChatRequest) -> ChatResponse:
        return await models.complete(JUDGE_ROLE, request)

    async def embed(request: EmbeddingRequest) -> Any:
        return await models.embed(EMBEDDINGS_ROLE, request)

    try:
        return await evaluate_conversation(
            goals,
            _messages(store, cid),
            _events(store, cid),
            conversation_id=cid,
            judge=make_judge(judge, complete if models.has(JUDGE_ROLE) else None, seed=row["seed"] or stable_seed(cid)),
            index=make_index(index, embed if models.has(EMBEDDINGS_ROLE) else None),
        )
    except BenchError as exc:
        return failed(cid, exc)


def _save(store: Store, run_id: str, evaluation: DialogueEvaluation) -> None:
    """Replace this plugin's values and memory rows of one conversation, in one transaction."""
    cid = evaluation.conversation_id
    values = evaluation.values()
    details = {"detection_f1": evaluation.details()}
    metric_rows = [
        {
            "run_id": run_id,
            "conversation_id": cid,
            "metric": f"memory.{k}",
            "plugin": PLUGIN,
            "value": None if v is None else float(v),
            "details_json": json.dumps(details[k]) if k in details else None,
            "error": None,
        }
        for k, v in values.items()
    ]
    if evaluation.error:
        metric_rows = [
            {
                "run_id": run_id,
                "conversation_id": cid,
                "metric": "memory",
                "plugin": PLUGIN,
                "value": None,
                "details_json": None,
                "error": evaluation.error,
            }
        ]
    with store.db.atomic():
        store.db.execute("delete from metric_values where conversation_id = ? and plugin = ?", [cid, PLUGIN])
        for table in TABLES:
            store.db.execute(f"delete from {table} where conversation_id = ?", [cid])
        store.db.table("metric_values").insert_all(metric_rows)
        for table, row in evaluation.rows:
            store.db.table(table).insert(row)
