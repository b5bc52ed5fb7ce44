"""bench: a plugin-based harness for evaluating tool-using conversational agents."""

from .components import ChatRequest, ChatResponse, Judge, JudgeRequest, Metric, Model, ModelClient, ModelConfig
from .domain import Domain, DomainData, DomainOptions, build_environment, read_tasks
from .environment import Environment, Toolkit, ToolKind, tool
from .errors import BenchError, ConfigError, ModelError, ParticipantError, PluginError, TaskFileError, ToolError
from .markers import hookimpl
from .models import (
    Action,
    AssistantMessage,
    Check,
    ConversationResult,
    Message,
    Mode,
    RewardType,
    StructuredUserInstructions,
    Task,
    TerminationReason,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from .participants import Agent, AgentSession, ConversationSetup, UserSession, UserSimulator
from .serialization import load_tasks, read_json
from .state import DumpHasher, State

__all__ = [
    "Action", "Agent", "AgentSession", "AssistantMessage", "BenchError", "ChatRequest", "ChatResponse", "Check",
    "ConfigError", "ConversationResult", "ConversationSetup", "Domain", "DomainData", "DumpHasher", "DomainOptions", "Environment",
    "Judge", "JudgeRequest", "Message", "Metric", "ModelError", "Mode", "Model", "ModelClient", "ModelConfig", "ParticipantError", "PluginError", "RewardType",
    "State", "StructuredUserInstructions", "Task", "TaskFileError", "TerminationReason", "ToolCall", "ToolError", "ToolKind", "ToolMessage",
    "Toolkit", "UserMessage", "UserSession", "UserSimulator", "build_environment", "hookimpl", "load_tasks", "read_json", "read_tasks", "tool",
]
