"""What a domain plugin registers, what it loads at run time, and how a task's environment is built."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from importlib.resources import as_file, files
from pathlib import Path
from typing import Any

import attrs

from bench_kernel.errors import ConfigError
from bench_kernel.schema.events import EventLog
from bench_kernel.schema.messages import AssistantMessage, Message, Mode, ToolMessage, UserMessage
from bench_kernel.schema.tasks import Task
from bench_kernel.serialization import read_json, structure
from bench_kernel.tasks.extensions import TaskVocabulary
from bench_kernel.tasks.lazy import LazyTasks, task_set_hash
from bench_kernel.tasks.loading import load_tasks
from bench_kernel.tools.environment import Environment, ToolContext, Toolkit
from bench_kernel.tools.state import DeferredTables, State
from bench_kernel.tools.toolschema import TOOL_RESULT_STYLES, ToolResultStyle


@attrs.frozen(kw_only=True)
class DomainOptions:
    """Run-time choices about where a domain's data comes from and which tasks to take."""

    data_dir: Path | None = None
    tasks_file: Path | None = None
    split: str | None = None
    vocabulary: TaskVocabulary | None = None
    """What the loaded plugins let task files say (extension fields, reward components, rules); `read_tasks` uses it."""
    retrieval: str | None = None
    """The knowledge-retrieval variant asked for (`--retrieval`), for domains whose agent searches a knowledge base."""
    retrieval_options: Mapping[str, str] = attrs.field(factory=dict, converter=lambda m: dict(sorted(dict(m).items())))
    """Settings of that variant (`--retrieval-option KEY=VALUE`: top_k, grep_top_k, ...)."""
    profile: Any = None
    """The run's `Profile`, for domains that assemble texts the model sees from it (None: bench's own applies)."""


@attrs.frozen(kw_only=True)
class DomainData:
    """A loaded domain: tasks, policy, pristine states and toolkit classes."""

    name: str
    tasks: Sequence[Task]
    """A list, or `LazyTasks` for a domain that builds its tasks (each on first use)."""
    policy: str
    agent_toolkit: type[Toolkit]
    agent_state: State
    user_toolkit: type[Toolkit] | None = None
    user_state: State | None = None
    shared_user_state: bool = False
    """The user's toolkit works on the agent's very state (one database for both sides); `user_state` is then unused."""
    task_policy: Callable[[Task], str] | None = None
    """The agent's policy for one task, when it depends on the task (e.g. the documents a task needs, given up front)."""
    retrieval: str | None = None
    """The knowledge-retrieval variant the data was loaded for (part of the run's identity and header)."""
    agent_data_patch: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None
    """Turns a task's `agent_data`, as the domain's task files spell it, into the kernel's {table: {id: partial record}} patch."""
    model_roles: tuple[str, ...] = ()
    """Model roles the domain's tools call (e.g. "embeddings", "reranker"): a run refuses to start without a model for each."""
    solo_policy: str | None = None
    sync: Callable[[Environment], None] | None = None
    sync_gold_actions: bool = True
    """Run `sync` after each gold action; tau2-exact domains set False, as tau2 skips it there."""
    advance: Callable[[Environment, int, EventLog], None] | None = None
    """Called after every conversation step (see `Environment.advance`): asynchronous work completes here."""
    scripted_user: str | None = None
    """A user simulator that plays this domain's tasks wherever a run asks for the kernel's `scripted` user (docs/plugins.md)."""
    reference_hash: Callable[[State], str] | None = None
    """The hash a reference implementation computes for an agent state (e.g. tau2's db.json hash)."""
    reference_user_hash: Callable[[State], str] | None = None
    """The reference implementation's hash of a user (device) state, for dual-control domains."""
    tool_results: ToolResultStyle = attrs.field(default="json", validator=attrs.validators.in_(TOOL_RESULT_STYLES))
    """How a tool's return value reaches the model: "json" (plain JSON) or "tau2" (tau2's rendering: `{"max_loans": "3"}`)."""
    failed_gold_actions_scored: bool = False
    """Run tasks whose gold actions fail, scored as the reference does (tau2 swallows them) instead of refusing them (docs/plugins.md)."""
    source: str = ""
    task_problems: tuple[str, ...] = ()
    """Inconsistencies plugins found in the tasks' own data (the tasks still run); `bench tasks` lists them."""

    def pending_loads(self) -> list[DeferredTables]:
        """The loaders of the agent's and the user's deferred tables that have not run yet (see State.deferred)."""
        states = [self.agent_state, *([self.user_state] if self.user_state is not None else [])]
        return [source for state in states for source in state.pending_loads()]

    def load_deferred(self) -> None:
        """Build every deferred table of both sides now; raise DeferredDataError if that failed."""
        self.agent_state.load_deferred()
        if self.user_state is not None:
            self.user_state.load_deferred()

    def task(self, task_id: str) -> Task:
        """The task with this id."""
        found = self.tasks.get(task_id) if isinstance(self.tasks, LazyTasks) else next((t for t in self.tasks if t.id == task_id), None)
        if found is not None:
            return found
        raise ConfigError(f"task {task_id!r} not found in domain {self.name!r}")

    def policy_for(self, mode: Mode, task: Task | None = None) -> str:
        """The policy text the agent gets in this mode (for this task, when the domain's policy depends on it)."""
        if mode is Mode.NO_USER:
            if self.solo_policy is None:
                raise ConfigError(f"domain {self.name!r} does not support the no-user mode")
            return self.solo_policy
        if task is not None and self.task_policy is not None:
            return self.task_policy(task)
        return self.policy

    def content_hash(self) -> str:
        """A hash of the tasks and policy, stored with a run so a changed task set is noticed."""
        return task_set_hash(self.tasks, self.policy)


@attrs.define(kw_only=True)
class Domain:
    """Base class of registered domains: subclasses set `name` and implement `load`."""

    name: str
    description: str = ""

    def load(self, options: DomainOptions) -> DomainData:
        """Read the domain's data (the only place a domain does I/O)."""
        raise NotImplementedError(f"domain {self.name!r} does not implement load()")


DATA_DIR_VARIABLE = "BENCH_TAU2_DATA_DIR"


def data_dir_for(options: DomainOptions, domain: str, required: tuple[str, ...] = ("db.json", "tasks.json")) -> Path | None:
    """The directory of a domain's external data (options.data_dir or $BENCH_TAU2_DATA_DIR: its own or a parent), if set."""
    given = options.data_dir or os.environ.get(DATA_DIR_VARIABLE)
    if not given:
        return None
    root = Path(given)
    for candidate in (root / domain, root):
        if all((candidate / name).is_file() for name in required):
            return candidate
    raise ConfigError(f"no {domain} data in {root}: expected {', '.join(required)} there or in {root / domain}")


def packaged_or_external(package: str, options: DomainOptions, domain: str) -> Path:
    """The external data directory if one is given, else the package's own `data/` directory."""
    external = data_dir_for(options, domain)
    if external is not None:
        return external
    with as_file(files(package).joinpath("data")) as packaged:
        return Path(packaged)


def read_tasks(default_file: Path, options: DomainOptions) -> list[Task]:
    """Tasks from options.tasks_file or the default file, narrowed to options.split."""
    path = options.tasks_file or default_file
    tasks = load_tasks(path, options.vocabulary)
    if options.split is None:
        return tasks
    split_path = path.with_name(f"split_{path.stem}.json")
    if not split_path.exists():
        raise ConfigError(f"no split file {split_path} next to {path}")
    # structure() refuses anything but an object of split name -> task ids, naming the file and JSON path
    splits = structure(read_json(split_path), dict[str, list[str]], source=str(split_path))
    if options.split not in splits:
        raise ConfigError(f"unknown split {options.split!r} for {path}; known: {', '.join(sorted(splits))}")
    wanted = set(splits[options.split])
    return [t for t in tasks if t.id in wanted]


class UserProfile(Toolkit):
    """The user's side of a domain whose users have no tools: what the task says about the user (AgentChangeBench's set-ups)."""

    def update_user(self, **fields: Any) -> None:
        """Merge facts into the user's profile."""
        table = self.state["profile"]
        table["user"] = {**table["user"], **fields}

    def profile(self) -> dict[str, Any]:
        """The user's profile."""
        return dict(self.state["profile"]["user"])


def has_user_setup(task: Task | None) -> bool:
    """True when the task sets up anything on the user's side."""
    init = task.initial_state if task is not None else None
    if init is None:
        return False
    data = init.initialization_data
    return bool(data is not None and data.user_data) or any(a.env_type == "user" for a in init.initialization_actions or [])


def build_environment(data: DomainData, task: Task | None, *, solo: bool = False, context: ToolContext | None = None) -> Environment:
    """A fresh environment for a task: pristine states forked, both toolkits given `context` with `task` set, initial state applied."""
    context = attrs.evolve(context or ToolContext(), task=task)
    agent = data.agent_toolkit(data.agent_state.fork(), context=context)
    user_state = agent.state if data.shared_user_state else data.user_state.fork() if data.user_state is not None else None
    user = data.user_toolkit(user_state, context=context) if data.user_toolkit is not None and user_state is not None else None
    if user is None and has_user_setup(task):
        user = UserProfile(State.from_records({"profile": {"user": {}}}), context=context)
    env = Environment(agent_tools=agent, user_tools=user, solo=solo, tool_results=data.tool_results)
    if data.sync is not None:
        env.sync = data.sync
    if data.advance is not None:
        env.advance = data.advance
    if task is not None and task.initial_state is not None:
        apply_initial_state(env, task, agent_patch=data.agent_data_patch)
    return env


def apply_initial_state(env: Environment, task: Task, *, agent_patch: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None) -> None:
    """Apply a task's initialization data (agent data through `agent_patch`), actions and message history replay."""
    init = task.initial_state
    assert init is not None
    if init.initialization_data is not None:
        agent_data = init.initialization_data.agent_data
        _patch(env.agent_tools, agent_patch(agent_data) if agent_patch is not None and agent_data else agent_data)
        _patch(env.user_tools, init.initialization_data.user_data)
    for action in init.initialization_actions or []:
        env.run_function(action)
    replay_history(env, init.message_history or [])
    env.sync(env)


def _patch(toolkit: Toolkit | None, patch: Mapping[str, Any] | None) -> None:
    if patch:
        if toolkit is None:
            raise ConfigError("initialization data for a side that has no toolkit")
        if isinstance(toolkit, UserProfile):
            toolkit.update_user(**patch)
        else:
            toolkit.state.apply_patch(patch)


def replay_history(env: Environment, history: Sequence[Message], *, strict: bool = True) -> list[str]:
    """Re-run the mutating tool calls of a history; return mismatches (raise on them if strict)."""
    results = {m.id: m for m in history if isinstance(m, ToolMessage)}
    problems = []
    for call in (c for m in history if isinstance(m, AssistantMessage | UserMessage) for c in m.tool_calls or []):
        if not env.mutates(call):
            continue
        replayed = env.execute(call)
        recorded = results.get(call.id)
        if recorded is not None and not _same_result(recorded.content, replayed.content):
            problems.append(f"replay of {call.name} ({call.id}) gave {replayed.content!r:.120}")
    if problems and strict:
        raise ConfigError("message history does not replay: " + "; ".join(problems))
    return problems


def _same_result(recorded: str | None, replayed: str | None) -> bool:
    def parse(text: str | None) -> Any:
        try:
            return json.loads(text) if text is not None else None
        except json.JSONDecodeError:
            return text

    return parse(recorded) == parse(replayed)
