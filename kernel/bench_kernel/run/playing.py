"""One conversation: set it up, play it, evaluate it, score it, store it (an unexpected failure is stored too)."""

from __future__ import annotations

import hashlib
import time
from typing import Any

from bench_kernel.conversation.channels import Channel, IdentityChannel
from bench_kernel.conversation.orchestrator import Conversation, Limits, initial_messages, run_conversation, stamp_history
from bench_kernel.conversation.participants import Agent, AgentSession, ConversationSetup, UserSession, UserSimulator
from bench_kernel.errors import UnusableSessionError
from bench_kernel.evaluation.attribution import attributed
from bench_kernel.evaluation.evaluator import evaluate
from bench_kernel.loadchecks import session_problem
from bench_kernel.logs import bind_context, get_logger
from bench_kernel.modelhub.hub import ConversationModels
from bench_kernel.redact import redact
from bench_kernel.registry import Registry
from bench_kernel.run.context import RunContext, Unit
from bench_kernel.run.planning import TEXT_ARM, arm_channel_options, evaluated
from bench_kernel.run.scoring import MetricInputs, awaited, component_values, score_metrics
from bench_kernel.schema.events import EventLog
from bench_kernel.schema.messages import Mode, TerminationReason
from bench_kernel.schema.results import INFRASTRUCTURE, Attribution, ConversationResult
from bench_kernel.serialization import utc_now
from bench_kernel.store.store import MetricValue, PluginRows
from bench_kernel.tasks.domain import build_environment
from bench_kernel.tools.environment import Environment, ToolContext

log = get_logger()


async def run_unit(ctx: RunContext, unit: Unit) -> ConversationResult:
    """Run, evaluate and store one conversation; an unexpected failure is stored as an infrastructure error."""
    bind_context(task_id=unit.task.id, trial=unit.trial, arm=unit.arm)
    started_utc, t0 = utc_now(), time.perf_counter()
    cid = f"{ctx.run_id}/{unit.arm}/{unit.task.id}/{unit.trial}" + (f"/retry{unit.retry}" if unit.retry else "")
    models = ConversationModels(ctx.models, run_id=ctx.run_id, conversation_id=cid, arm=unit.arm)
    try:
        result, metrics, rows = await _converse(ctx, unit, models, started_utc, t0)
    except UnusableSessionError as exc:  # the plugin's mistake, not this conversation's: the run stops
        ctx.refused = exc
        raise
    except Exception as exc:  # noqa: BLE001 - recorded, excluded from metrics, re-run on resume
        log.error("conversation.infrastructure_error", error=repr(exc))
        result, metrics, rows = _infrastructure_error(ctx, unit, started_utc, t0, exc), [], []
    # A conversation that read no deferred record still waits for them (and their gold check) to be stored: a run
    # whose data or tasks turn out broken then stores nothing.
    ctx.data.load_deferred()
    if ctx.refused is not None:  # another conversation found an unusable session meanwhile: store none
        raise ctx.refused
    ctx.store.save_conversation(result, metrics, plugin_rows=rows)
    return result


async def _converse(
    ctx: RunContext, unit: Unit, models: ConversationModels, started_utc: str, t0: float
) -> tuple[ConversationResult, list[MetricValue], list[PluginRows]]:
    config, task = ctx.config, unit.task
    agent, user = (ctx.agent, ctx.user) if evaluated(unit.arm) else (ctx.baseline_agent, ctx.baseline_user)
    channel = IdentityChannel() if unit.arm == TEXT_ARM else ctx.channel
    profile = ctx.profile
    seed = retry_seed(profile.conversation_seed(config.seed, task.id, unit.trial), unit.retry)
    env = build_environment(ctx.data, task, solo=config.mode is Mode.NO_USER, context=ToolContext(profile=profile, models=models))
    opening = task.initial_state.message_history or [] if task.initial_state else []
    history = stamp_history(initial_messages(opening, config.mode, profile.greeting))
    events = EventLog()
    user_tools = env.user_schemas(task.user_tools)
    setup = ConversationSetup(
        task=task,
        domain=ctx.data.name,
        mode=config.mode,
        seed=seed,
        policy=ctx.data.policy_for(config.mode, task),
        agent_tools=profile.present_tools(ctx.data.name, "agent", env.agent_schemas(), solo=config.mode is Mode.NO_USER),
        user_tools=None if user_tools is None else profile.present_tools(ctx.data.name, "user", user_tools),
        history=tuple(history),
        profile=profile,
        options={"agent": config.agent_options, "user": config.user_options},
        services=ctx.registry,
        models=models,
        events=events,
        channel=channel.name,
        channel_options=arm_channel_options(config, unit.arm),
        exposure=config.exposure or "none",
        duplex=config.duplex,
        data_dir=config.data_dir,
    )
    convo = await _play(ctx, agent, user, setup, env, channel, recording_name(ctx.run_id, unit))
    assert convo.termination is not None
    gold = ctx.gold(task)
    reward_info = await evaluate(
        task,
        convo.messages,
        convo.termination,
        env,
        gold,
        judge=ctx.judge,
        seed=seed,
        models=models,
        evaluation=ctx.evaluation,
        events=events,
        profile=profile,
    )
    result = _result(
        ctx,
        unit,
        started_utc,
        t0,
        termination_reason=convo.termination,
        messages=convo.messages,
        reward_info=reward_info,
        error=convo.error and redact(convo.error),
        agent_cost=agent_cost(agent, models),
        user_cost=user_cost(models),
        channel=channel.name,
        attributes=ctx.task_attributes(task),
        events=events.events,  # the log's own list: events the metrics emit below are the result's too
    )
    result = attributed(result, task, ctx.data, env, gold, ctx.store, ctx.registry.components.get("attributor", {}).values())
    values, rows = await score_metrics(ctx.metrics, result, MetricInputs(task, events, env, gold, models), judge=ctx.judge, profile=ctx.profile)
    return result, component_values(result) + values, rows


def retry_seed(seed: int, retry: int) -> int:
    """The seed of a unit's n-th replay: derived from its first seed and the ordinal (0 keeps the seed)."""
    return seed if retry == 0 else int.from_bytes(hashlib.sha256(f"{seed}:retry:{retry}".encode()).digest()[:4], "big")


def recording_name(run_id: str, unit: Unit) -> str:
    """The file stem of a conversation's kept recording: one per conversation (run, arm, task, trial)."""
    stem = f"{run_id}-{unit.arm}-{unit.task.id[:80]}-{unit.trial}"
    return "".join(c if c.isalnum() or c in "-_.=" else "_" for c in stem)


async def _play(
    ctx: RunContext,
    agent: Agent,
    user: UserSimulator | None,
    setup: ConversationSetup,
    env: Environment,
    channel_kind: Channel,
    audio_name: str,
) -> Conversation:
    config = ctx.config
    limits = Limits(max_steps=config.max_steps, max_errors=config.max_errors, timeout_s=config.conversation_timeout_s)
    sessions: list[Any] = []
    termination: TerminationReason | None = None  # stays None when the conversation is cancelled
    try:
        agent_session = agent.start(setup.for_agent())
        sessions.append(agent_session)
        user_session = user.start(setup) if user is not None else None
        sessions.append(user_session)
        # The identity channel changes nothing: skipping it keeps the hot path as short as it was.
        channel = None if type(channel_kind) is IdentityChannel else channel_kind.start(setup)
        sessions.append(channel)
        _refuse_unusable_sessions(
            ctx.registry, [("agent", agent, agent_session), ("user simulator", user, user_session), ("channel", channel_kind, channel)]
        )
        if config.mode is Mode.FULL_DUPLEX:  # played by the loop a plugin registers (bench-duplex), checked at start
            loop = ctx.registry.get("conversation loop", config.mode.value)
            convo = await loop.play(setup, env, agent_session, user_session, channel, events=setup.events, limits=limits, audio_name=audio_name)
        else:
            convo = await run_conversation(
                env, agent_session, user_session, mode=config.mode, history=setup.history, limits=limits, channel=channel, events=setup.events
            )
        termination = convo.termination
        return convo
    except Exception:
        termination = TerminationReason.INFRASTRUCTURE_ERROR
        raise
    finally:
        for session in sessions:
            if isinstance(session, AgentSession | UserSession):
                session.termination = termination  # what close() may tell the participant's own service
            if session is not None:  # a plain `def close` is refused by the session check, which ran first
                await awaited(session.close())


def _refuse_unusable_sessions(registry: Registry, sessions: list[tuple[str, Any, Any]]) -> None:
    """Refuse a sync `respond` (or channel method) before the first await, naming plugin and class (docs/plugins.md)."""
    # The run stops: storing every conversation as the participant's error would score a plugin's mistake as the agent's.
    for kind, component, session in sessions:
        problem = None if session is None else session_problem(kind, component, session)
        if problem is not None:
            log.error("conversation.unusable_session", error=problem)
            origin = registry.origins.get((kind, component.name)) or "unknown"
            raise UnusableSessionError(origin, f"{problem}; the run stopped at its first conversation, storing none")


def agent_cost(agent: Agent, models: ConversationModels) -> float | None:
    """The agent's cost in one conversation: its ledgered calls' sum, or None when it calls models itself and bench saw none."""
    if agent.calls_models_itself and not any(entry.role == "agent" for entry in models.ledger):
        return None
    return models.cost("agent")


def user_cost(models: ConversationModels) -> float | None:
    """The user simulator's cost: its `user` role's calls and those of roles named user-* (a voice user's decisions)."""
    roles = ["user", *sorted({e.role for e in models.ledger if e.role.startswith("user-")})]
    costs = [models.cost(role) for role in roles]
    return None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)


def _result(ctx: RunContext, unit: Unit, started_utc: str, t0: float, **fields: Any) -> ConversationResult:
    """The unit's result with `fields`: its identity, seed, players and timing filled in."""
    agent, user = (ctx.agent, ctx.user) if evaluated(unit.arm) else (ctx.baseline_agent, ctx.baseline_user)
    seed = retry_seed(ctx.profile.conversation_seed(ctx.config.seed, unit.task.id, unit.trial), unit.retry)
    identity: dict[str, Any] = {"run_id": ctx.run_id, "arm": unit.arm, "task_id": unit.task.id, "trial": unit.trial, "retry": unit.retry}
    played: dict[str, Any] = {"seed": seed, "agent": agent.name, "user": user.name if user is not None else "none"}
    timing: dict[str, Any] = {"started_utc": started_utc, "ended_utc": utc_now(), "duration_ms": int((time.perf_counter() - t0) * 1000)}
    return ConversationResult(**identity, **played, **timing, **fields)


def _infrastructure_error(ctx: RunContext, unit: Unit, started_utc: str, t0: float, exc: Exception) -> ConversationResult:
    error = redact(f"{type(exc).__name__}: {exc}")
    attribution = Attribution(label=INFRASTRUCTURE, rule="infrastructure_error", evidence=error)
    try:
        attributes = ctx.task_attributes(unit.task)
    except Exception:  # noqa: BLE001 - an infrastructure error is stored whatever a plugin's attributes do
        attributes = {"domain": ctx.data.name}
    return _result(
        ctx,
        unit,
        started_utc,
        t0,
        termination_reason=TerminationReason.INFRASTRUCTURE_ERROR,
        messages=[],
        reward_info=None,
        error=error,
        attributes=attributes,
        attribution=attribution,
    )
