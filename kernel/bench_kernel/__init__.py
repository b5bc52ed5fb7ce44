"""bench: a plugin-based harness for evaluating tool-using conversational agents.

Everything a plugin needs is importable from here; plugins import no kernel submodule, so the
kernel can regroup its files freely. Test helpers live in `bench_kernel.testing`.
"""

from bench_kernel.builtin.participants import DoNothingAgent, OracleAgent, ScriptedUser
from bench_kernel.cli import db_option, echo_report, plugin_option, require_db
from bench_kernel.conversation.channels import Channel, ChannelSession, IdentityChannel
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
    UserSession,
    UserSimulator,
)
from bench_kernel.errors import (
    BenchError,
    BudgetExceededError,
    ConfigError,
    ContextOverflowError,
    ModelAuthError,
    ModelError,
    ModelHTTPError,
    ModelResponseError,
    ModelUnavailableError,
    ParticipantError,
    PluginError,
    TaskFileError,
    ToolError,
)
from bench_kernel.evaluation.evaluator import GoldReplay, evaluate, replay_gold, replay_trajectory
from bench_kernel.evaluation.metric import Judge, JudgeRequest, Metric, MetricContext, MetricResult
from bench_kernel.evaluation.results import Check, ComponentScore, ConversationResult, RewardInfo, is_success
from bench_kernel.evaluation.rewards import CombinationRule, ProductRule, RewardComponent, RewardContext, all_met
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
from bench_kernel.plugins import PluginSet, Registry, collect, get_plugin_manager, installed_entry_points
from bench_kernel.report.sections import ReportSection, RunView, Section, SectionTable
from bench_kernel.run.runner import RunConfig, RunSummary, component_values, load_domain, run, run_async
from bench_kernel.serialization import (
    canonical_json,
    converter,
    load_tasks,
    read_json,
    structure,
    structure_tasks,
    unstructure,
    utc_now,
)
from bench_kernel.store.store import MetricValue, Store
from bench_kernel.tasks.checks import check_tasks, checked_plugins, render_check
from bench_kernel.tasks.domain import (
    DATA_DIR_VARIABLE,
    Domain,
    DomainData,
    DomainOptions,
    build_environment,
    packaged_or_external,
    read_tasks,
)
from bench_kernel.tasks.extensions import TaskExtension, TaskVocabulary
from bench_kernel.tasks.schema import (
    Action,
    EnvAssertion,
    EnvFunctionCall,
    RewardRule,
    RewardType,
    StructuredUserInstructions,
    Task,
)
from bench_kernel.tools.environment import Environment, ToolKind, Toolkit, tool
from bench_kernel.tools.state import BaseTable, DumpHasher, State, Table

__all__ = [
    "DATA_DIR_VARIABLE", "GREETING", "STOP_TOKENS",
    "Audio", "Channel", "ChannelSession", "ChannelTranscript", "CombinationRule", "EmbeddingClient", "EmbeddingRequest",
    "Embeddings", "Event", "EventLog", "GoalShift", "GoalStatusChange", "IdentityChannel", "MetricContext", "MetricResult",
    "PersonaChange", "ProductRule", "RewardComponent", "RewardContext", "RewardRule", "SpeechClient", "SpeechRequest",
    "MetricValue", "ReportSection", "RunView", "checked_plugins", "component_values", "db_option", "echo_report",
    "load_domain", "plugin_option", "replay_trajectory", "require_db", "structure", "utc_now", "Section", "SectionTable", "TaskExtension", "TaskVocabulary", "Transcription", "TranscriptionClient", "TranscriptionRequest", "all_met",
    "Action", "Agent", "AgentSession", "AssistantMessage", "BaseTable", "BenchError", "BudgetExceededError", "ChatRequest",
    "ChatResponse", "Check", "ComponentScore", "ConfigError", "ContextOverflowError", "ConversationResult", "ConversationSetup",
    "DoNothingAgent", "Domain", "DomainData", "DomainOptions", "DumpHasher", "EnvAssertion", "EnvFunctionCall", "Environment",
    "GoldReplay", "Judge", "JudgeRequest", "Message", "Metric", "Mode", "Model", "ModelAuthError", "ModelClient", "ModelConfig",
    "ModelError", "ModelHTTPError", "ModelResponseError", "ModelUnavailableError", "OracleAgent", "ParticipantError",
    "ParticipantMessage", "PluginError", "PluginSet", "Registry", "Requestor", "RewardInfo", "RewardType", "RunConfig",
    "RunSummary", "ScriptedUser", "State", "Store", "StructuredUserInstructions", "SystemMessage", "Table", "Task",
    "TaskFileError", "TerminationReason", "ToolCall", "ToolError", "ToolKind", "ToolMessage", "Toolkit", "UserMessage",
    "UserSession", "UserSimulator",
    "build_environment", "canonical_json", "check_tasks", "collect", "converter", "evaluate", "get_plugin_manager",
    "hookimpl", "installed_entry_points", "is_success", "load_tasks", "packaged_or_external", "read_json", "read_tasks",
    "render_check", "replay_gold", "run", "run_async", "structure_tasks", "tool", "unstructure",
]
