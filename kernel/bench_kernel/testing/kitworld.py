"""The conformance kit's own small world: a notes domain, hand-built conversations and the runs the kit checks with.

Seams other than domains are checked against this world, so a plugin's tests need no domain of their own: the
`kit-notes` domain (registered by `KitPlugin`, never by an entry point) has two tasks an oracle solves, in both modes.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs

from bench_kernel.evaluation.evaluator import evaluate, replay_gold
from bench_kernel.markers import hookimpl
from bench_kernel.plugins import DEFAULT_PLUGINS, PluginSet, get_plugin_manager
from bench_kernel.run.runner import RunConfig, prepare, run
from bench_kernel.run.scoring import MetricInputs
from bench_kernel.schema.messages import AssistantMessage, Message, TerminationReason, ToolCall, UserMessage
from bench_kernel.schema.results import ConversationResult
from bench_kernel.schema.tasks import Task
from bench_kernel.serialization import utc_now
from bench_kernel.store.store import Store
from bench_kernel.tasks.domain import Domain, DomainData, DomainOptions, build_environment
from bench_kernel.tasks.loading import structure_tasks
from bench_kernel.tools.environment import ToolKind, Toolkit, tool
from bench_kernel.tools.state import State

KIT_DOMAIN = "kit-notes"
KIT_PLUGIN_NAME = "conformance-kit"
STOP = "###STOP###"


class NotesTools(Toolkit):
    """A notebook: notes under keys."""

    @tool(ToolKind.READ)
    def get_note(self, key: str) -> str:
        """Read a note.

        Args:
            key (str): The note's key, for example 'door'.
        """
        note = self.state.notes.get(key)
        return "no such note" if note is None else note["text"]

    @tool(ToolKind.WRITE)
    def write_note(self, key: str, text: str) -> str:
        """Write (or overwrite) a note.

        Args:
            key (str): The note's key.
            text (str): What the note says.
        """
        self.state.notes[key] = {"text": text}
        return "saved"


def _scenario(text: str) -> dict[str, Any]:
    return {"instructions": {"domain": KIT_DOMAIN, "reason_for_call": text, "task_instructions": text}}


KIT_TASKS: list[dict[str, Any]] = [
    {
        "id": "write-note",
        "user_scenario": _scenario("Save the note 'milk' under the key 'shopping'."),
        "ticket": "Save the note 'milk' under the key 'shopping'.",
        "evaluation_criteria": {
            "actions": [{"action_id": "1", "name": "write_note", "arguments": {"key": "shopping", "text": "milk"}}],
            "reward_basis": ["DB"],
        },
    },
    {
        "id": "read-note",
        "user_scenario": _scenario("Ask what the note under the key 'door' says."),
        "ticket": "Tell what the note under the key 'door' says.",
        "evaluation_criteria": {
            "actions": [{"action_id": "1", "name": "get_note", "arguments": {"key": "door"}}],
            "communicate_info": ["1234"],
            "reward_basis": ["DB", "COMMUNICATE"],
        },
    },
]


@attrs.define(kw_only=True)
class NotesDomain(Domain):
    """The kit's domain: a notebook, two tasks, both modes."""

    name: str = KIT_DOMAIN

    def load(self, options: DomainOptions) -> DomainData:
        """The tasks and state, built in memory."""
        return DomainData(
            name=self.name,
            tasks=structure_tasks(KIT_TASKS, options.vocabulary, source=KIT_DOMAIN),
            policy="Help the user with their notes.",
            solo_policy="Solve the ticket alone, then stop.",
            agent_toolkit=NotesTools,
            agent_state=State.from_records({"notes": {"door": {"text": "1234"}}}),
            source="memory",
        )


class KitPlugin:
    """Registers the kit's domain beside the plugin under test."""

    @hookimpl
    def register_domains(self, register: Callable[[Domain], None]) -> None:
        """The notes domain."""
        register(NotesDomain())


def kit_data() -> DomainData:
    """The notes domain's data, loaded."""
    return NotesDomain().load(DomainOptions())


def kit_plugins(plugin: str | None, extra: Sequence[tuple[str, object]] = ()) -> PluginSet:
    """A plugin manager with the built-ins, the installed plugin under test (if any), extra objects and the kit's domain."""
    selected = [plugin] if plugin and plugin not in DEFAULT_PLUGINS else []  # built-ins always load
    return get_plugin_manager(selected, [*extra, (KIT_PLUGIN_NAME, KitPlugin())])


# --------------------------------------------------------------------------- hand-built conversations


def kit_conversations() -> dict[str, tuple[str, list[Message], TerminationReason]]:
    """Short conversations of the notes domain a metric is scored on: name -> (task id, messages, termination)."""
    greeting = AssistantMessage(content="Hi! How can I help you today?")
    ask = UserMessage(content="Please save the note 'milk' under the key 'shopping'.")
    call = AssistantMessage(tool_calls=[ToolCall(id="c1", name="write_note", arguments={"key": "shopping", "text": "milk"})])
    return {
        "solved": (
            "write-note",
            [greeting, ask, call, AssistantMessage(content="Saved."), UserMessage(content=f"Thanks. {STOP}")],
            TerminationReason.USER_STOP,
        ),
        "greeting only": ("read-note", [greeting], TerminationReason.MAX_STEPS),
        "agent error": ("read-note", [greeting, UserMessage(content="What does my note 'door' say?")], TerminationReason.AGENT_ERROR),
    }


def scored_conversation(
    task_id: str,
    messages: Sequence[Message],
    termination: TerminationReason = TerminationReason.USER_STOP,
    *,
    data: DomainData | None = None,
    run_id: str = "kit",
) -> tuple[ConversationResult, MetricInputs]:
    """A finished conversation of a domain (the kit's by default) built from messages, evaluated as a run would.

    Tool calls in the messages are executed on the task's environment, their results inserted after each call, so the
    final state and the reward follow from the messages alone. Returns the result and what a metric gets beside it.
    """
    data = data or kit_data()
    task = _task(data, task_id)
    env = build_environment(data, task)
    played = _with_tool_results(env, messages)
    gold = replay_gold(data, task)
    reward_info = asyncio.run(evaluate(task, played, termination, env, gold))
    now = utc_now()
    result = ConversationResult(
        run_id=run_id,
        arm="agent",
        task_id=task.id,
        trial=0,
        seed=0,
        agent="kit",
        user="kit",
        termination_reason=termination,
        messages=played,
        reward_info=reward_info,
        started_utc=now,
        ended_utc=now,
        duration_ms=0,
        agent_cost=0.0,
        user_cost=0.0,
    )
    return result, MetricInputs(task, _events(), env, gold)


def _task(data: DomainData, task_id: str) -> Task:
    for task in data.tasks:
        if task.id == task_id:
            return task
    raise KeyError(f"no task {task_id!r} in domain {data.name!r}")


def _with_tool_results(env: Any, messages: Sequence[Message]) -> list[Message]:
    played: list[Message] = []
    for message in messages:
        played.append(attrs.evolve(message, turn_idx=len(played), timestamp=message.timestamp or utc_now()))
        for call in getattr(message, "tool_calls", None) or []:
            played.append(env.execute(call, turn_idx=len(played), timestamp=utc_now()))
    return played


def _events() -> Any:
    from bench_kernel.schema.events import EventLog

    return EventLog()


# --------------------------------------------------------------------------- runs


@contextlib.contextmanager
def kit_store() -> Iterator[Path]:
    """A results database in a temporary folder, removed afterwards."""
    with tempfile.TemporaryDirectory() as folder:
        yield Path(folder) / "kit.db"


def kit_run(db: Path, plugins: PluginSet, /, **config: Any) -> str:
    """Play a run of the notes domain (two tasks, the oracle and the scripted user unless told otherwise); its id."""
    defaults: dict[str, Any] = {"domain": KIT_DOMAIN, "baseline": False, "trials": 1, "concurrency": 4}
    summary = run(RunConfig(**{**defaults, **config}), db, plugins=plugins)
    return summary.run_id


def kit_empty_run(db: Path, plugins: PluginSet, **config: Any) -> str:
    """A run of the notes domain that is begun and stored but plays nothing (what a report of an empty run reads)."""
    defaults: dict[str, Any] = {"domain": KIT_DOMAIN, "baseline": False, "run_id": "kit-empty"}

    async def begin() -> str:
        ctx, _, _, _ = await prepare(RunConfig(**{**defaults, **config}), db, plugins=plugins)
        ctx.store.set_status(ctx.run_id, "interrupted")
        ctx.store.close()
        await ctx.models.aclose()
        return ctx.run_id

    return asyncio.run(begin())


def stored_conversations(db: Path, run_id: str) -> list[dict[str, Any]]:
    """The stored conversation rows of a run."""
    store = Store(db)
    try:
        return store.conversations(run_id)
    finally:
        store.close()
