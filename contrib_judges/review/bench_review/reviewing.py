"""`bench review RUN`: a reviewer model labels a stored run's conversations, one review per conversation, role and mode.

Calls go through the kernel's model hub over the results database: each is ledgered against its conversation under
arm `review` (so the run's cost table shows them), answered from the cache with `--cache`, priced as a run prices
them, and stopped by `--max-cost` (which counts what earlier reviews of this run spent). Reviews are stored as they
finish; reviewing again skips what is stored (errors are retried), so a killed review resumes where it stopped.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from bench_kernel import (
    DEFAULT_PRICES,
    BenchError,
    BudgetExceededError,
    ChatRequest,
    ConfigError,
    ConversationModels,
    DomainData,
    Mode,
    ModelConfig,
    ModelError,
    ModelHub,
    PluginSet,
    Price,
    RunRecord,
    Store,
    Task,
    collect,
    domain_changed,
    get_logger,
    get_plugin_manager,
    installed_entry_points,
    is_success,
    load_run_domain,
)

from .attribution import apply_review_attributions
from .rubric import ReviewReplyError, Turn, parse_review, reference_text, system_prompt, user_prompt
from .store import migrations, reviewed_keys, save_review

PLUGIN = "review"
ARM = "review"
"""The ledger arm of review calls."""
log = get_logger()


@attrs.frozen(kw_only=True)
class ReviewPlan:
    """What to review and with whom."""

    run_id: str
    roles: tuple[str, ...]
    """The reviewer roles: the first, and a second one when configured (for the agreement figure)."""
    models: Mapping[str, ModelConfig]
    mode: str = "full"
    failed_only: bool = False
    arm: str = "agent"
    redo: bool = False
    cache: bool = False
    max_cost: float | None = None
    prices: Mapping[str, Price] = attrs.field(factory=dict)
    concurrency: int = 8
    task_ids: tuple[str, ...] = ()
    """Review only the conversations of these tasks (`--task-id`, repeatable); all when empty."""
    limit: int | None = None
    """Review at most this many conversations not yet reviewed (`--limit`)."""


@attrs.frozen(kw_only=True)
class ReviewSummary:
    """What one `bench review` did."""

    run_id: str
    mode: str
    roles: tuple[str, ...]
    selected: int
    """Conversations chosen (all scored ones of the arm, or the failed ones)."""
    skipped: int
    """Reviews already stored, not asked again."""
    reviewed: int
    errors: list[str]
    notes: list[str]
    stopped: str | None = None
    """Why the review stopped before the end (the cost cap), if it did."""
    attributed: int = 0
    """Failed conversations whose attribution the reviews changed (docs/attribution.md)."""


def review_run(db_path: str, plan: ReviewPlan, plugins: PluginSet | None = None) -> ReviewSummary:
    """Review a stored run's conversations and store the reviews with the run."""
    missing = [role for role in plan.roles if role not in plan.models]
    if missing:
        raise ConfigError(f"no model for the reviewer role {missing[0]!r}: give --reviewer-model NAME (or --model-option {missing[0]}.model=NAME)")
    store = Store(db_path, extra_migrations=[migrations])
    try:
        run = store.run(plan.run_id)
        assert run is not None
        plugins = plugins or get_plugin_manager(_selection(run.config.get("plugins"), plan.models))
        registry = collect(plugins)
        data, notes = _domain_data(registry, run)
        hub = ModelHub(
            configs=dict(plan.models),
            backends=registry.components.get("model", {}),
            store=store,
            use_cache=plan.cache,
            max_cost=plan.max_cost,
            prices={**DEFAULT_PRICES, **plan.prices},
            concurrency=plan.concurrency,
        )
        hub.spent = _review_spend(store, plan.run_id)
        summary = asyncio.run(_review_all(store, hub, plan, data, notes))
        store.add_run_plugin(plan.run_id, _plugin_entry(plugins))
        return attrs.evolve(summary, attributed=apply_review_attributions(store, plan.run_id, plan.arm, plan.roles[0]))
    finally:
        store.close()


def _selection(selected: Sequence[str] | None, models: Mapping[str, ModelConfig]) -> list[str] | None:
    """The run's plugins (its domain's), this one and the reviewers' model backends; None (all installed) stays None."""
    if selected is None:
        return None
    installed = installed_entry_points()
    wanted = [PLUGIN, *(m.backend for m in models.values())]
    return [*selected, *(name for name in dict.fromkeys(wanted) if name in installed and name not in selected)]


def _plugin_entry(plugins: PluginSet) -> dict[str, Any]:
    info = next((p for p in plugins.plugins if p.name == PLUGIN), None)
    return {"name": PLUGIN, "distribution": "bench-review", "version": info.version if info else None, "builtin": False}


def _domain_data(registry: Any, run: RunRecord) -> tuple[DomainData, list[str]]:
    """The run's tasks and policy, loaded as the run loaded them; a note when they changed since the run."""
    try:
        data = load_run_domain(run, registry)
    except BenchError as exc:
        raise ConfigError(f"cannot load the tasks and policy of run {run.id!r}, which the reviewer reads: {exc}") from exc
    changed = domain_changed(run, data)
    return data, [f"{changed}: the reviewer reads today's"] if changed else []


def _review_spend(store: Store, run_id: str) -> float:
    """What earlier reviews of this run cost (known prices): --max-cost covers every resume."""
    store.flush()
    row = store.db.execute("select sum(cost) from llm_calls where run_id = ? and arm = ?", [run_id, ARM]).fetchone()
    return float(row[0] or 0.0)


async def _review_all(store: Store, hub: ModelHub, plan: ReviewPlan, data: DomainData, notes: list[str]) -> ReviewSummary:
    """Every selected conversation with every reviewer role, `concurrency` at a time, each stored as it finishes."""
    rows = [r for r in store.conversations(plan.run_id) if r["arm"] == plan.arm and r["termination_reason"] != "infrastructure_error"]
    rows = _of_tasks(rows, plan.task_ids, plan.run_id)
    if plan.failed_only:
        rows = [r for r in rows if not is_success(r["reward"])]
    done = set() if plan.redo else reviewed_keys(store, plan.run_id)
    todo = [row for row in rows if any((row["id"], role, plan.mode) not in done for role in plan.roles)]
    chosen = {row["id"] for row in todo[: plan.limit]}
    work = [(row, role) for row in rows for role in plan.roles if (row["id"], role, plan.mode) not in done and row["id"] in chosen]
    errors: list[str] = []
    stopped: list[str] = []
    gate = asyncio.Semaphore(plan.concurrency)
    mode = Mode(store.run(plan.run_id).config.get("mode", "default"))  # type: ignore[union-attr]

    async def one(row: dict[str, Any], role: str) -> None:
        async with gate:
            if stopped:
                return
            models = ConversationModels(hub, run_id=plan.run_id, conversation_id=row["id"], arm=ARM)
            try:
                error = await _review_one(store, models, role, plan, row, data, mode)
            except BudgetExceededError as exc:
                stopped.append(str(exc))
                return
            if error:
                errors.append(f"{row['id']} ({role}): {error}")

    try:
        if work:
            await hub.check()  # credentials and endpoints, before the first review
        await asyncio.gather(*(one(row, role) for row, role in work))
    finally:
        await hub.aclose()
    skipped = sum(1 for row in rows for role in plan.roles if (row["id"], role, plan.mode) in done)
    return ReviewSummary(
        run_id=plan.run_id,
        mode=plan.mode,
        roles=plan.roles,
        selected=len(rows),
        skipped=skipped,
        reviewed=len(work) - len(errors) - _unfinished(store, plan, work),
        errors=errors,
        notes=notes,
        stopped=stopped[0] if stopped else None,
    )


def _of_tasks(rows: list[dict[str, Any]], task_ids: Sequence[str], run_id: str) -> list[dict[str, Any]]:
    """The rows of these tasks (all rows when none is named); a task the run has no conversation of is refused."""
    if not task_ids:
        return rows
    missing = [t for t in task_ids if not any(r["task_id"] == t for r in rows)]
    if missing:
        raise ConfigError(f"run {run_id!r} has no scored conversation of task {missing[0]!r} in this arm")
    return [r for r in rows if r["task_id"] in set(task_ids)]


def _unfinished(store: Store, plan: ReviewPlan, work: Sequence[tuple[dict[str, Any], str]]) -> int:
    """Conversations of this pass left without a stored review (the cost cap stopped them)."""
    stored = {
        (r["conversation_id"], r["reviewer"])
        for r in store.db.query("select conversation_id, reviewer from reviews where run_id = ? and mode = ?", [plan.run_id, plan.mode])
    }
    return sum(1 for row, role in work if (row["id"], role) not in stored)


async def _review_one(
    store: Store, models: ConversationModels, role: str, plan: ReviewPlan, row: dict[str, Any], data: DomainData, mode: Mode
) -> str | None:
    """Ask one reviewer about one conversation and store what came of it; the error text when it is not a review."""
    key = {"conversation_id": row["id"], "reviewer": role, "mode": plan.mode}
    model = plan.models[role].model
    try:
        task = data.task(row["task_id"])
        turns = _turns(store.messages(row["id"]))
        request = _request(plan.mode, task, data, mode, row, turns, role)
    except BenchError as exc:
        save_review(store, key, plan.run_id, model, f"{type(exc).__name__}: {exc}")
        return str(exc)
    try:
        response = await models.complete(role, request)
    except BudgetExceededError:
        raise
    except ModelError as exc:
        save_review(store, key, plan.run_id, model, f"{type(exc).__name__}: {exc}")
        return f"{type(exc).__name__}: {exc}"
    try:
        review = parse_review(response.content, plan.mode, [t.turn for t in turns])
    except ReviewReplyError as exc:
        save_review(store, key, plan.run_id, model, f"ReviewReplyError: {exc}", reply_text=(response.content or "")[:4000])
        return f"ReviewReplyError: {exc}"
    save_review(store, key, plan.run_id, model, review)
    return None


def _turns(messages: Sequence[Mapping[str, Any]]) -> list[Turn]:
    """The stored messages as the reviewer reads them (system messages left out)."""
    turns = []
    for m in messages:
        if m["role"] not in ("assistant", "user", "tool"):
            continue
        calls = json.loads(m["tool_calls_json"]) if m.get("tool_calls_json") else []
        turns.append(
            Turn(
                turn=m["turn_idx"] if m.get("turn_idx") is not None else m["idx"],
                role=m["role"],
                content=m["content"],
                tool_calls=tuple((c["name"], json.dumps(c.get("arguments") or {}, ensure_ascii=False, sort_keys=True)) for c in calls),
                requestor=m.get("requestor"),
                error=bool(m.get("error")),
            )
        )
    return turns


def _request(review_mode: str, task: Task, data: DomainData, mode: Mode, row: Mapping[str, Any], turns: Sequence[Turn], role: str) -> ChatRequest:
    criteria = task.evaluation_criteria
    actions = [{"requestor": a.requestor, "name": a.name, "arguments": a.arguments} for a in task.gold_actions()]
    facts = list(criteria.communicate_info or []) if criteria is not None else []
    prompt = user_prompt(
        review_mode,
        scenario=task.user_scenario.render(),
        policy=data.policy_for(mode, task),
        reference=reference_text(actions, facts),
        verdict=_verdict(row),
        turns=turns,
    )
    messages = [{"role": "system", "content": system_prompt(review_mode)}, {"role": "user", "content": prompt}]
    return ChatRequest(messages=messages, response_format={"type": "json_object"}, seed=_seed(row["id"], role, review_mode))


def _verdict(row: Mapping[str, Any]) -> str:
    """The automatic check's outcome in words: reward, how the conversation ended, and the checks that failed."""
    reward = row["reward"]
    lines = [f"reward {reward} ({'solved' if is_success(reward) else 'not solved'}), ended by {row['termination_reason']}"]
    info = json.loads(row["reward_info_json"]) if row.get("reward_info_json") else {}
    for component in info.get("components", []):
        failed = [c for c in component.get("checks", []) if c.get("met") is False]
        lines += [f"- {component.get('component')} check failed: {c.get('subject')}" for c in failed]
    return "\n".join(lines)


def _seed(conversation_id: str, role: str, mode: str) -> int:
    return int(hashlib.sha256(f"{conversation_id}:{role}:{mode}".encode()).hexdigest()[:8], 16)
