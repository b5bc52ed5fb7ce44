"""On resume, stored conversations whose judge failed are judged again from their stored messages (docs/judges.md).

No agent or user model is called and nothing is played again: the NL_ASSERTION component is computed anew, the
other components are kept as stored, and the reward is combined again by the task's rule.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

from bench_kernel import (
    ConversationModels,
    ConversationResult,
    Event,
    EventLog,
    Message,
    MetricValue,
    RewardInfo,
    RunContext,
    Store,
    Task,
    TerminationReason,
    attributed,
    build_environment,
    canonical_json,
    component_values,
    converter,
    event_rows,
    get_logger,
    metric_row,
    recombine,
    unstructure,
)

from .agreement import agreement_values
from .assertions import JUDGE_SOURCE, NL, nl_component

log = get_logger()
REJUDGED_EVENT = "judge.rejudged"
"""The event a conversation judged again on resume records (the error it had)."""


def judge_failed(row: dict[str, Any]) -> str | None:
    """The stored NL_ASSERTION error of a finished conversation (None: judged, or nothing to judge)."""
    if row["termination_reason"] == TerminationReason.INFRASTRUCTURE_ERROR.value or not row.get("reward_info_json"):
        return None
    info = json.loads(row["reward_info_json"])
    component = next((c for c in info.get("components", []) if c.get("component") == NL), None)
    return component.get("error") if component else None


async def rejudge_stored(ctx: RunContext, *, attributed_to_judge: bool = False) -> int:
    """Judge again every stored conversation of the run whose judge failed (and, with `attributed_to_judge`, every one
    whose failure is attributed to the judge: `--retry-attributed judge`); returns how many were judged again."""
    if ctx.judge is None:
        return 0
    tasks = {t.id: t for t in ctx.tasks or ctx.data.tasks}
    pending = [
        (row, tasks[row["task_id"]])
        for row in ctx.store.conversations(ctx.run_id)
        if row["task_id"] in tasks and (judge_failed(row) is not None or (attributed_to_judge and row.get("attribution") == "judge"))
    ]
    limit = asyncio.Semaphore(max(1, ctx.config.concurrency))

    async def one(row: dict[str, Any], task: Task) -> None:
        async with limit:
            # A verdict asked for again must not be the cached one: a judgment the rules doubted gets a seed of its own.
            seed = row["seed"] if judge_failed(row) is not None else _doubted_seed(row)
            await rejudge(ctx, {**row, "seed": seed}, task)

    await asyncio.gather(*(one(row, task) for row, task in pending))
    if pending:
        log.info("run.rejudged", conversations=len(pending))
    return len(pending)


def _doubted_seed(row: dict[str, Any]) -> int:
    digest = hashlib.sha256(f"{row['seed']}:{row['task_id']}:judge:retry-attributed".encode()).digest()
    return int.from_bytes(digest[:4], "big")


async def rejudge(ctx: RunContext, row: dict[str, Any], task: Task) -> RewardInfo:
    """One stored conversation judged again: its NL_ASSERTION component replaced, its reward recombined and stored."""
    cid = row["id"]
    messages: list[Message] = [
        converter.structure(json.loads(m["message_json"]), Message)  # type: ignore[arg-type]
        for m in ctx.store.messages(cid)
    ]
    stored = converter.structure(json.loads(row["reward_info_json"]), RewardInfo)
    events = EventLog()
    events.emit(Event(kind=REJUDGED_EVENT, data={"previous_error": judge_failed(row)}), source=JUDGE_SOURCE, message_index=len(messages))
    models = ConversationModels(ctx.models, run_id=ctx.run_id, conversation_id=cid, arm=row["arm"])
    judged = await nl_component(task, messages, ctx.judge, row["seed"], models, ctx.profile, events)
    components = [judged if c.component == NL else c for c in stored.components]
    info = recombine(ctx.evaluation, task, components, TerminationReason(row["termination_reason"]))
    result = _result(row, messages, info, events)
    values = [v for v in component_values(result) if v.metric in ("reward", f"component.{NL}")] + agreement_values(ctx.metrics, events.events)
    replace_judgment(ctx.store, cid, info, values, events.events)
    # The failure's attribution follows the new verdict (bench-trust's rules read the tools, not the final state: a fresh one does).
    found = attributed(
        result, task, ctx.data, build_environment(ctx.data, task), ctx.gold(task), ctx.store, ctx.registry.components.get("attributor", {}).values()
    ).attribution
    ctx.store.set_attribution(cid, found.label if found else None, found.evidence_record() if found else None)
    return info


def replace_judgment(store: Store, conversation_id: str, info: RewardInfo, values: list[MetricValue], events: list[Event]) -> None:
    """A stored conversation judged again: its reward, these metric values and new events, in one of the store's
    writes (docs/judges.md); messages, tool calls and every other value stay."""
    with store.write(grouped=True) as db:
        reward = [info.reward, canonical_json(unstructure(info)), conversation_id]
        db.execute("update conversations set reward = ?, reward_info_json = ? where id = ?", reward)
        sql = "select run_id, (select coalesce(max(idx) + 1, 0) from conversation_events where conversation_id = ?) from conversations where id = ?"
        run_id, first = db.execute(sql, [conversation_id, conversation_id]).fetchone()
        delete = "delete from metric_values where conversation_id = ? and metric = ? and plugin = ?"
        for value in values:
            db.execute(delete, [conversation_id, value.metric, value.plugin])
        db.table("metric_values").insert_all([metric_row(run_id, conversation_id, v) for v in values])
        db.table("conversation_events").insert_all(event_rows(run_id, conversation_id, events, int(first)))


def _result(row: dict[str, Any], messages: list[Message], info: RewardInfo, events: EventLog) -> ConversationResult:
    return ConversationResult(
        run_id=row["run_id"],
        arm=row["arm"],
        task_id=row["task_id"],
        trial=row["trial"],
        seed=row["seed"],
        agent=row["agent"],
        user=row["user"],
        termination_reason=TerminationReason(row["termination_reason"]),
        messages=messages,
        reward_info=info,
        started_utc=row["started_utc"],
        ended_utc=row["ended_utc"],
        duration_ms=row["duration_ms"],
        events=events.events,
    )
