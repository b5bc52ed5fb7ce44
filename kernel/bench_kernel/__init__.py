"""bench: a plugin-based harness for evaluating tool-using conversational agents.

Everything a plugin needs is importable from here; plugins import no kernel submodule, so the
kernel can regroup its files freely. Test helpers live in `bench_kernel.testing`.

Names are exported lazily (PEP 562): `from bench_kernel import Task` imports the module that defines
Task and nothing else, so `bench run` does not pay at start-up for the report, the importers or
modules it never uses. Kernel modules import from their sibling modules, never from here.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from bench_kernel.codecache import install as _install_code_cache

_install_code_cache()  # before any kernel module defines its attrs classes

if TYPE_CHECKING:
    from bench_kernel.afterimport import after_import
    from bench_kernel.builtin.participants import DoNothingAgent, OracleAgent, ScriptedUser
    from bench_kernel.cli import db_option, echo_report, plugin_option, require_db
    from bench_kernel.conversation.audio import Resampler, pcm_bytes, pcm_samples, pcm_to_ulaw, ulaw_byte, ulaw_to_pcm
    from bench_kernel.conversation.channels import Channel, ChannelSession, IdentityChannel
    from bench_kernel.conversation.duplex import (
        ACTIONS,
        EFFECT_TYPES,
        SAMPLE_RATE,
        SILENCE_BYTE,
        SPEECH_COMPLEXITIES,
        Chunk,
        DuplexSettings,
        Side,
        SpeechSegment,
        Timeline,
        TimelineEntry,
        ToolStamp,
        TurnTakingSettings,
        Utterance,
        fit,
        silence,
        tick_bytes,
    )
    from bench_kernel.conversation.duplex_loop import OpenSpeech, TranscriptWriter, run_duplex, speech_segments
    from bench_kernel.conversation.events import ChannelTranscript, Event, EventLog, GoalShift, GoalStatusChange, PersonaChange
    from bench_kernel.conversation.messages import (
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
    from bench_kernel.conversation.participants import (
        GREETING,
        STOP_TOKENS,
        Agent,
        AgentSession,
        ConversationSetup,
        DuplexAgentSession,
        DuplexUserSession,
        UserSession,
        UserSimulator,
    )
    from bench_kernel.conversation.realtime import (
        LOCKSTEP_DONE,
        LOCKSTEP_TICK,
        PACINGS,
        PACKET_MS,
        Pacing,
        RealtimeAdapter,
        RealtimeConnectionError,
        RealtimeError,
        RealtimeSettings,
        TickOutput,
        ToolResult,
        VadSettings,
        b64decode,
        b64encode,
        chat_function,
    )
    from bench_kernel.conversation.speech import paced_utterance, spread, utterance_id
    from bench_kernel.conversation.turntaking import CHECK_INS, Counters, Speech, TurnBasedAgent, TurnTakingUser, split_stop
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
    from bench_kernel.evaluation.evaluator import GoldReplay, evaluate, replay_gold, replay_trajectory
    from bench_kernel.evaluation.metric import Judge, JudgeRequest, Metric, MetricContext, MetricResult
    from bench_kernel.evaluation.results import Check, ComponentScore, ConversationResult, RewardInfo, is_success
    from bench_kernel.evaluation.rewards import CombinationRule, ProductRule, RewardComponent, RewardContext, all_met
    from bench_kernel.evaluation.stats import Agreement, judge_agreement
    from bench_kernel.knowledge import (
        RETRIEVAL_VARIANTS,
        BM25Index,
        Document,
        KnowledgeBase,
        RetrievalSettings,
        RetrievalVariant,
        knowledge_toolkit,
        resolve_variant,
        retrieval_refusal,
    )
    from bench_kernel.logs import get_logger
    from bench_kernel.markers import hookimpl
    from bench_kernel.modelhub.api import (
        Audio,
        ChatRequest,
        ChatResponse,
        EmbeddingClient,
        EmbeddingRequest,
        Embeddings,
        Model,
        ModelClient,
        ModelConfig,
        SpeechClient,
        SpeechRequest,
        Transcription,
        TranscriptionClient,
        TranscriptionRequest,
    )
    from bench_kernel.modelhub.hub import ConversationModels, LedgerEntry, ModelHub
    from bench_kernel.modelhub.prices import DEFAULT_PRICES, Price
    from bench_kernel.plugins import PluginInfo, PluginSet, Registry, collect, get_plugin_manager, installed_entry_points
    from bench_kernel.profiles.profile import (
        PLACEHOLDER,
        PLACEHOLDERS,
        PROFILE_FORMAT,
        PROFILE_NAME,
        MessageStyle,
        Profile,
        load_profile,
        trial_seeds,
    )
    from bench_kernel.profiles.prompts import agent_instructions, done_tool_name, plan_text, python_call
    from bench_kernel.report.compare import Comparison, compare_stored, render_comparison
    from bench_kernel.report.html import render_html
    from bench_kernel.report.report import Report, agent_label, build_report, run_registry
    from bench_kernel.report.sections import ReportSection, Section, SectionTable
    from bench_kernel.report.view import RunView, open_read_only
    from bench_kernel.run.executors import (
        Executor,
        ExecutorError,
        LocalExecutor,
        Outbox,
        WorkerSpec,
        Writer,
        executor_option,
        stop_spending,
        worker_context,
        worker_spec,
    )
    from bench_kernel.run.runconfig import model_option_configs, parse_key_values, price_overrides
    from bench_kernel.run.runner import (
        MetricInputs,
        RunConfig,
        RunContext,
        RunSummary,
        Unit,
        component_values,
        load_domain,
        run,
        run_async,
        run_unit,
        score_metrics,
        task_vocabulary,
    )
    from bench_kernel.serialization import (
        canonical_json,
        converter,
        read_json,
        structure,
        unstructure,
        utc_now,
    )
    from bench_kernel.store.store import MetricValue, RunRecord, Store
    from bench_kernel.tasks.checks import check_tasks, checked_plugins, render_check
    from bench_kernel.tasks.compose import Composer, Composition, Subtask, compose, composed_id, verify, with_personas
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
    )
    from bench_kernel.tasks.extensions import TaskExtension, TaskVocabulary
    from bench_kernel.tasks.goals import DECIDED, FINISHED, GOAL_STATUSES, Goal, GoalsExtension, StatusEntry, goal_problems, task_goals
    from bench_kernel.tasks.loading import load_tasks, structure_tasks
    from bench_kernel.tasks.personas import Persona, apply_personas, persona_texts
    from bench_kernel.tasks.schema import (
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
    from bench_kernel.tools.environment import Environment, ToolContext, ToolKind, Toolkit, tool
    from bench_kernel.tools.state import BaseTable, DumpHasher, State, Table
    from bench_kernel.tools.toolschema import ToolResultStyle

__all__ = [
    "ACTIONS",
    "CHECK_INS",
    "DATA_DIR_VARIABLE",
    "DECIDED",
    "DEFAULT_PRICES",
    "EFFECT_TYPES",
    "FINISHED",
    "GOAL_STATUSES",
    "GREETING",
    "INFRASTRUCTURE_FAILURES",
    "LOCKSTEP_DONE",
    "LOCKSTEP_TICK",
    "PACINGS",
    "PACKET_MS",
    "PLACEHOLDER",
    "PLACEHOLDERS",
    "PROFILE_FORMAT",
    "PROFILE_NAME",
    "RETRIEVAL_VARIANTS",
    "SAMPLE_RATE",
    "SILENCE_BYTE",
    "SPEECH_COMPLEXITIES",
    "STOP_TOKENS",
    "Action",
    "Agent",
    "AgentSession",
    "Agreement",
    "AssistantMessage",
    "Audio",
    "BM25Index",
    "BaseTable",
    "BenchError",
    "BudgetExceededError",
    "Channel",
    "ChannelSession",
    "ChannelTranscript",
    "ChatRequest",
    "ChatResponse",
    "Check",
    "Chunk",
    "CombinationRule",
    "Comparison",
    "ComponentScore",
    "Composer",
    "Composition",
    "ConfigError",
    "ContextOverflowError",
    "ConversationModels",
    "ConversationResult",
    "ConversationSetup",
    "Counters",
    "DeferredDataError",
    "Description",
    "DoNothingAgent",
    "Document",
    "Domain",
    "DomainData",
    "DomainOptions",
    "DumpHasher",
    "DuplexAgentSession",
    "DuplexSettings",
    "DuplexUserSession",
    "EmbeddingClient",
    "EmbeddingRequest",
    "Embeddings",
    "EnvAssertion",
    "EnvFunctionCall",
    "Environment",
    "EvaluationCriteria",
    "Event",
    "EventLog",
    "Executor",
    "ExecutorError",
    "Goal",
    "GoalShift",
    "GoalStatusChange",
    "GoalsExtension",
    "GoldReplay",
    "IdentityChannel",
    "InitialState",
    "InitializationData",
    "Judge",
    "JudgeRequest",
    "KnowledgeBase",
    "LedgerEntry",
    "LocalExecutor",
    "Message",
    "MessageStyle",
    "Metric",
    "MetricContext",
    "MetricInputs",
    "MetricResult",
    "MetricValue",
    "Mode",
    "Model",
    "ModelAuthError",
    "ModelClient",
    "ModelConfig",
    "ModelError",
    "ModelHTTPError",
    "ModelHub",
    "ModelResponseError",
    "ModelUnavailableError",
    "OpenSpeech",
    "OracleAgent",
    "Outbox",
    "Pacing",
    "ParticipantError",
    "ParticipantMessage",
    "Persona",
    "PersonaChange",
    "PluginError",
    "PluginInfo",
    "PluginSet",
    "Price",
    "ProductRule",
    "Profile",
    "RealtimeAdapter",
    "RealtimeConnectionError",
    "RealtimeError",
    "RealtimeSettings",
    "Registry",
    "Report",
    "ReportSection",
    "Requestor",
    "Resampler",
    "RetrievalSettings",
    "RetrievalVariant",
    "RewardComponent",
    "RewardContext",
    "RewardInfo",
    "RewardRule",
    "RewardType",
    "RunConfig",
    "RunContext",
    "RunRecord",
    "RunSummary",
    "RunView",
    "ScriptedUser",
    "Section",
    "SectionTable",
    "Side",
    "Speech",
    "SpeechClient",
    "SpeechRequest",
    "SpeechSegment",
    "State",
    "StatusEntry",
    "Store",
    "StoreError",
    "StructuredUserInstructions",
    "Subtask",
    "SystemMessage",
    "Table",
    "Task",
    "TaskExtension",
    "TaskFileError",
    "TaskVocabulary",
    "TerminationReason",
    "TickOutput",
    "Timeline",
    "TimelineEntry",
    "ToolCall",
    "ToolContext",
    "ToolError",
    "ToolKind",
    "ToolMessage",
    "ToolResult",
    "ToolResultStyle",
    "ToolStamp",
    "Toolkit",
    "TranscriptWriter",
    "Transcription",
    "TranscriptionClient",
    "TranscriptionRequest",
    "TurnBasedAgent",
    "TurnTakingSettings",
    "TurnTakingUser",
    "Unit",
    "UserMessage",
    "UserProfile",
    "UserScenario",
    "UserSession",
    "UserSimulator",
    "Utterance",
    "VadSettings",
    "WorkerSpec",
    "Writer",
    "after_import",
    "agent_instructions",
    "agent_label",
    "all_met",
    "apply_personas",
    "b64decode",
    "b64encode",
    "build_environment",
    "build_report",
    "canonical_json",
    "chat_function",
    "check_tasks",
    "checked_plugins",
    "collect",
    "compare_stored",
    "component_values",
    "compose",
    "composed_id",
    "converter",
    "data_dir_for",
    "db_option",
    "done_tool_name",
    "echo_report",
    "evaluate",
    "executor_option",
    "fit",
    "get_logger",
    "get_plugin_manager",
    "goal_problems",
    "hookimpl",
    "installed_entry_points",
    "is_success",
    "judge_agreement",
    "knowledge_toolkit",
    "load_domain",
    "load_profile",
    "load_tasks",
    "model_option_configs",
    "open_read_only",
    "paced_utterance",
    "packaged_or_external",
    "parse_key_values",
    "pcm_bytes",
    "pcm_samples",
    "pcm_to_ulaw",
    "persona_texts",
    "plan_text",
    "plugin_option",
    "price_overrides",
    "python_call",
    "read_json",
    "read_tasks",
    "render_check",
    "render_comparison",
    "render_html",
    "replay_gold",
    "replay_trajectory",
    "require_db",
    "resolve_variant",
    "retrieval_refusal",
    "run",
    "run_async",
    "run_duplex",
    "run_registry",
    "run_unit",
    "score_metrics",
    "silence",
    "speech_segments",
    "split_stop",
    "spread",
    "stop_spending",
    "structure",
    "structure_tasks",
    "task_goals",
    "task_vocabulary",
    "tick_bytes",
    "tool",
    "trial_seeds",
    "ulaw_byte",
    "ulaw_to_pcm",
    "unstructure",
    "utc_now",
    "utterance_id",
    "verify",
    "with_personas",
    "worker_context",
    "worker_spec",
]

_EXPORTS_BY_MODULE: dict[str, tuple[str, ...]] = {
    "bench_kernel.conversation.duplex": (
        "ACTIONS", "EFFECT_TYPES", "SAMPLE_RATE", "SILENCE_BYTE", "SPEECH_COMPLEXITIES", "Chunk", "DuplexSettings", "Side",
        "SpeechSegment", "Timeline", "TimelineEntry", "ToolStamp",
        "TurnTakingSettings", "Utterance", "fit", "silence", "tick_bytes",
    ),
    "bench_kernel.conversation.duplex_loop": ("OpenSpeech", "TranscriptWriter", "run_duplex", "speech_segments"),
    "bench_kernel.conversation.audio": ("Resampler", "pcm_bytes", "pcm_samples", "pcm_to_ulaw", "ulaw_byte", "ulaw_to_pcm"),
    "bench_kernel.conversation.realtime": (
        "LOCKSTEP_DONE", "LOCKSTEP_TICK", "PACINGS", "PACKET_MS", "Pacing", "RealtimeAdapter",
        "RealtimeConnectionError", "RealtimeError", "RealtimeSettings", "TickOutput", "ToolResult", "VadSettings",
        "b64decode", "b64encode", "chat_function",
    ),
    "bench_kernel.conversation.turntaking": ("CHECK_INS", "Counters", "Speech", "TurnBasedAgent", "TurnTakingUser", "split_stop"),
    "bench_kernel.conversation.speech": ("paced_utterance", "spread", "utterance_id",),
    "bench_kernel.builtin.participants": ("DoNothingAgent", "OracleAgent", "ScriptedUser"),
    "bench_kernel.cli": ("db_option", "echo_report", "plugin_option", "require_db"),
    "bench_kernel.conversation.channels": ("Channel", "ChannelSession", "IdentityChannel"),
    "bench_kernel.conversation.events": (
        "ChannelTranscript", "Event", "EventLog", "GoalShift", "GoalStatusChange", "PersonaChange",
    ),
    "bench_kernel.conversation.messages": (
        "AssistantMessage", "Message", "Mode", "ParticipantMessage", "Requestor", "SystemMessage", "TerminationReason",
        "ToolCall", "ToolMessage", "UserMessage",
    ),
    "bench_kernel.conversation.participants": (
        "GREETING", "STOP_TOKENS", "Agent", "AgentSession", "ConversationSetup", "DuplexAgentSession", "DuplexUserSession",
        "UserSession", "UserSimulator",
    ),
    "bench_kernel.errors": (
        "INFRASTRUCTURE_FAILURES", "BenchError", "BudgetExceededError", "ConfigError", "ContextOverflowError",
        "DeferredDataError", "ModelAuthError",
        "ModelError",
        "ModelHTTPError", "ModelResponseError", "ModelUnavailableError", "ParticipantError", "PluginError",
        "StoreError", "TaskFileError", "ToolError",
    ),
    "bench_kernel.evaluation.evaluator": ("GoldReplay", "evaluate", "replay_gold", "replay_trajectory"),
    "bench_kernel.evaluation.metric": ("Judge", "JudgeRequest", "Metric", "MetricContext", "MetricResult"),
    "bench_kernel.evaluation.results": ("Check", "ComponentScore", "ConversationResult", "RewardInfo", "is_success"),
    "bench_kernel.evaluation.stats": ("Agreement", "judge_agreement"),
    "bench_kernel.evaluation.rewards": (
        "CombinationRule", "ProductRule", "RewardComponent", "RewardContext", "all_met",
    ),
    "bench_kernel.logs": ("get_logger",),
    "bench_kernel.markers": ("hookimpl",),
    "bench_kernel.modelhub.api": (
        "Audio", "ChatRequest", "ChatResponse", "EmbeddingClient", "EmbeddingRequest", "Embeddings", "Model",
        "ModelClient", "ModelConfig", "SpeechClient", "SpeechRequest", "Transcription", "TranscriptionClient",
        "TranscriptionRequest",
    ),
    "bench_kernel.modelhub.hub": ("ConversationModels", "LedgerEntry", "ModelHub"),
    "bench_kernel.modelhub.prices": ("DEFAULT_PRICES", "Price"),
    "bench_kernel.plugins": ("PluginInfo", "PluginSet", "Registry", "collect", "get_plugin_manager", "installed_entry_points"),
    "bench_kernel.profiles.prompts": ("agent_instructions", "done_tool_name", "plan_text", "python_call"),
    "bench_kernel.profiles.profile": (
        "PLACEHOLDER", "PLACEHOLDERS", "PROFILE_FORMAT", "PROFILE_NAME", "MessageStyle", "Profile", "load_profile", "trial_seeds",
    ),
    "bench_kernel.report.compare": ("Comparison", "compare_stored", "render_comparison"),
    "bench_kernel.report.html": ("render_html",),
    "bench_kernel.report.report": ("Report", "agent_label", "build_report", "run_registry"),
    "bench_kernel.report.sections": ("ReportSection", "Section", "SectionTable"),
    "bench_kernel.report.view": ("RunView", "open_read_only"),
    "bench_kernel.run.executors": (
        "Executor", "ExecutorError", "LocalExecutor", "Outbox", "WorkerSpec", "Writer", "executor_option",
        "stop_spending", "worker_context", "worker_spec",
    ),
    "bench_kernel.run.runconfig": ("model_option_configs", "parse_key_values", "price_overrides"),
    "bench_kernel.run.runner": (
        "MetricInputs", "RunConfig", "RunContext", "RunSummary", "Unit", "component_values", "load_domain", "run",
        "run_async", "run_unit", "score_metrics", "task_vocabulary",
    ),
    "bench_kernel.serialization": (
        "canonical_json", "converter", "read_json", "structure", "unstructure", "utc_now",
    ),
    "bench_kernel.store.store": ("MetricValue", "RunRecord", "Store"),
    "bench_kernel.tasks.checks": ("check_tasks", "checked_plugins", "render_check"),
    "bench_kernel.tasks.compose": (
        "Composer", "Composition", "Subtask", "compose", "composed_id", "verify", "with_personas",
    ),
    "bench_kernel.tasks.domain": (
        "DATA_DIR_VARIABLE", "Domain", "DomainData", "DomainOptions", "UserProfile", "build_environment",
        "data_dir_for", "packaged_or_external", "read_tasks",
    ),
    "bench_kernel.tasks.extensions": ("TaskExtension", "TaskVocabulary"),
    "bench_kernel.tasks.goals": (
        "DECIDED", "FINISHED", "GOAL_STATUSES", "Goal", "GoalsExtension", "StatusEntry", "goal_problems", "task_goals",
    ),
    "bench_kernel.tasks.loading": ("load_tasks", "structure_tasks"),
    "bench_kernel.tasks.personas": ("Persona", "apply_personas", "persona_texts"),
    "bench_kernel.tasks.schema": (
        "Action", "Description", "EnvAssertion", "EnvFunctionCall", "EvaluationCriteria", "InitializationData", "InitialState",
        "RewardRule", "RewardType", "StructuredUserInstructions", "Task", "UserScenario",
    ),
    "bench_kernel.tools.environment": ("Environment", "ToolContext", "ToolKind", "Toolkit", "tool"),
    "bench_kernel.afterimport": ("after_import",),
    "bench_kernel.knowledge": ("BM25Index", "Document", "KnowledgeBase", "RETRIEVAL_VARIANTS", "RetrievalSettings",
                               "RetrievalVariant", "knowledge_toolkit", "resolve_variant", "retrieval_refusal"),
    "bench_kernel.tools.state": ("BaseTable", "DumpHasher", "State", "Table"),
    "bench_kernel.tools.toolschema": ("ToolResultStyle",),
}
_MODULE_OF = {name: module for module, names in _EXPORTS_BY_MODULE.items() for name in names}

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
