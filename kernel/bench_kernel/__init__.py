"""bench: a plugin-based harness for evaluating tool-using conversational agents.

Everything a plugin needs is importable from here, lazily (PEP 562: a name imports its own module on first use).
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bench_kernel.afterimport import after_import
    from bench_kernel.builtin.participants import DoNothingAgent, OracleAgent, ScriptedUser, device_request
    from bench_kernel.cli import db_option, domain_options, echo_report, format_option, plugin_option, require_db
    from bench_kernel.conversation.channels import Channel, ChannelSession, IdentityChannel
    from bench_kernel.conversation.loops import ConversationLoop
    from bench_kernel.conversation.openai_chat import (
        OpenAIChat,
        assistant_message,
        openai_message,
        openai_messages,
        openai_tool_calls,
        openai_tool_result,
        openai_user_messages,
        unseen_messages,
    )
    from bench_kernel.conversation.orchestrator import Conversation, Limits, stamp_history
    from bench_kernel.conversation.participants import GREETING, STOP_TOKENS, Agent, AgentSession, ConversationSetup, UserSession, UserSimulator
    from bench_kernel.conversation.prompts import agent_instructions, done_tool_name, plan_text, python_call
    from bench_kernel.errors import (
        INFRASTRUCTURE_FAILURES,
        BenchError,
        BudgetExceededError,
        ConfigError,
        ContextOverflowError,
        DeferredDataError,
        ModelAuthError,
        ModelError,
        ModelHTTPError,
        ModelResponseError,
        ModelUnavailableError,
        ParticipantError,
        PluginError,
        StoreError,
        TaskFileError,
        ToolError,
    )
    from bench_kernel.evaluation.attribution import Attributor, FinishedConversation, attributed
    from bench_kernel.evaluation.evaluator import GoldReplay, Replayed, evaluate, recombine, replay_gold
    from bench_kernel.evaluation.goldcheck import GoldChecker, ToolFault
    from bench_kernel.evaluation.metric import Judge, JudgeRequest, Metric, MetricContext, MetricResult
    from bench_kernel.evaluation.rewards import CombinationRule, Evaluation, ProductRule, RewardComponent, RewardContext, all_met
    from bench_kernel.evaluation.sections import (
        GOLD_FAILURES_EVENT,
        Card,
        Report,
        ReportBuilder,
        ReportContext,
        ReportFormat,
        ReportSection,
        Section,
        SectionTable,
    )
    from bench_kernel.evaluation.stats import (
        Agreement,
        Estimate,
        TaskOutcomes,
        bootstrap_ci,
        flip_summary,
        judge_agreement,
        mean_estimate,
        pass_hat_k,
        pass_hat_k_estimate,
        task_outcomes,
        trial_variance,
    )
    from bench_kernel.logs import configure_logging, get_logger
    from bench_kernel.markers import hookimpl
    from bench_kernel.modelhub.api import BaseClient, ChatRequest, ChatResponse, Model, ModelClient, ModelConfig
    from bench_kernel.modelhub.hub import ROLE_NAME, ConversationModels, LedgerEntry, ModelHub, role_option_hint
    from bench_kernel.modelhub.prices import DEFAULT_PRICES, Price
    from bench_kernel.plugins import PluginInfo, PluginSet, collect, get_plugin_manager, installed_entry_points, load_profile, with_backend_plugins
    from bench_kernel.profiles.profile import (
        BENCH_PROFILE_DIR,
        PLACEHOLDER,
        PLACEHOLDERS,
        PROFILE_FORMAT,
        PROFILE_NAME,
        JudgeStyle,
        MessageStyle,
        Profile,
        ProfileReader,
        hashed_profile,
        trial_seeds,
    )
    from bench_kernel.registry import Registry
    from bench_kernel.report.report import build_report, run_registry
    from bench_kernel.run.checks import check_tasks, checked_plugins, render_check
    from bench_kernel.run.config import RunConfig, parse_key_values, price_overrides, source_fingerprint
    from bench_kernel.run.context import Executor, ExecutorError, RunContext, Unit
    from bench_kernel.run.executors import LocalExecutor, Outbox, WorkerSpec, Writer, executor_option, stop_spending, worker_context, worker_spec
    from bench_kernel.run.methodology import METHODOLOGY_EVENT, methodology_lines
    from bench_kernel.run.planning import (
        BASELINE_AGENT,
        BASELINE_USER,
        checked_fingerprints,
        domain_changed,
        load_domain,
        load_run_domain,
        refuse_tool_faults,
        require_components,
        scripted_user,
        select_tasks,
        task_vocabulary,
    )
    from bench_kernel.run.playing import run_unit
    from bench_kernel.run.runconfig import model_option_configs
    from bench_kernel.run.runner import RunSummary, preload_run_data, run, run_async
    from bench_kernel.run.scoring import MetricInputs, component_values, score_metrics
    from bench_kernel.run.transforms import Prepared, TaskTransform, transformed_tasks
    from bench_kernel.schema.events import ChannelTranscript, Event, EventLog, GoalShift
    from bench_kernel.schema.messages import (
        AssistantMessage,
        Message,
        Mode,
        ParticipantMessage,
        Requestor,
        SystemMessage,
        TerminationReason,
        ToolCall,
        ToolMessage,
        UserMessage,
    )
    from bench_kernel.schema.results import ATTRIBUTION_LABELS, Attribution, Check, ComponentScore, ConversationResult, RewardInfo, is_success
    from bench_kernel.schema.tasks import (
        Action,
        Description,
        EnvAssertion,
        EnvFunctionCall,
        EvaluationCriteria,
        InitializationData,
        InitialState,
        RewardRule,
        RewardType,
        StructuredUserInstructions,
        Task,
        UserScenario,
    )
    from bench_kernel.serialization import canonical_json, check_plain_data, converter, read_json, read_text, structure, unstructure, utc_now
    from bench_kernel.store.store import MetricValue, RunRecord, Store, event_rows, metric_row, open_store, open_store_for_reading
    from bench_kernel.store.view import RunView, read_only
    from bench_kernel.tasks.domain import (
        DATA_DIR_VARIABLE,
        Domain,
        DomainData,
        DomainOptions,
        UserProfile,
        build_environment,
        data_dir_for,
        packaged_or_external,
        read_tasks,
        replay_history,
    )
    from bench_kernel.tasks.extensions import TaskExtension, TaskVocabulary
    from bench_kernel.tasks.lazy import LazyTasks, cached_text, inputs_key
    from bench_kernel.tasks.loading import load_tasks, structure_tasks
    from bench_kernel.tasks.ordering import task_id_key
    from bench_kernel.testing.background import BackgroundServer
    from bench_kernel.tools.environment import Environment, ToolContext, ToolKind, Toolkit, tool
    from bench_kernel.tools.state import BaseTable, DumpHasher, State, Table
    from bench_kernel.tools.toolschema import ToolResultStyle, tool_arguments


def _exported() -> dict[str, str]:
    """Each exported name's module, read off the imports above: the list type checkers see is the only list."""
    block = Path(__file__).read_text(encoding="utf-8").split("if TYPE_CHECKING:\n", 1)[1].split("\n\n", 1)[0]
    found = re.findall(r"from (\S+) import (\([^)]*\)|[^\n]*)", block)
    return {name.strip(): module for module, names in found for name in names.strip("()").split(",") if name.strip()}


_MODULE_OF = _exported()
__all__ = sorted(_MODULE_OF)

# The subpackage bench_kernel.run shares its name with the exported function run: bind the subpackage now and
# drop the attribute the import leaves, so `bench_kernel.run` stays the function whatever is imported later.
importlib.import_module("bench_kernel.run")
del globals()["run"]


def __getattr__(name: str) -> Any:
    """Import an exported name's module on first use and keep the name here."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """Every exported name, imported or not yet."""
    return sorted({*globals(), *__all__})


# The start-up accelerator bench-codecache, if installed, before any kernel module defines an attrs class (it imports
# after_import from here, hence last); missing or broken, attrs and cattrs compile as before.
try:
    import bench_codecache
except Exception:  # noqa: BLE001
    pass
