"""The attrs task model: a superset of tau2-bench's task JSON."""

from __future__ import annotations

import enum
import textwrap
from typing import Any

import attrs
from cattrs.gen import make_dict_structure_fn

from bench_kernel.schema.messages import Message, Requestor, ToolCall
from bench_kernel.serialization import converter, expect


class RewardType(str, enum.Enum):
    """A component a task's reward can be based on (tau2 names)."""

    DB = "DB"
    ENV_ASSERTION = "ENV_ASSERTION"
    NL_ASSERTION = "NL_ASSERTION"
    ACTION = "ACTION"
    COMMUNICATE = "COMMUNICATE"


def _indent(text: str) -> str:
    return textwrap.indent(text, "\t")


@attrs.frozen(kw_only=True)
class Description:
    """Free text about a task, for readers and evaluators only."""

    purpose: str | None = None
    relevant_policies: str | None = None
    notes: str | None = None


@attrs.frozen(kw_only=True)
class StructuredUserInstructions:
    """tau2's structured user instructions."""

    domain: str
    reason_for_call: str
    known_info: str | None = None
    unknown_info: str | None = None
    task_instructions: str

    def render(self) -> str:
        """Render as tau2 does, so prompts built from it match."""
        lines = [f"Domain: {self.domain}", f"Reason for call:\n{_indent(self.reason_for_call)}"]
        if self.known_info is not None:
            lines.append(f"Known info:\n{_indent(self.known_info)}")
        if self.unknown_info is not None:
            lines.append(f"Unknown info:\n{_indent(self.unknown_info)}")
        lines.append(f"Task instructions:\n{_indent(self.task_instructions)}")
        return "\n".join(lines)


@attrs.frozen(kw_only=True)
class UserScenario:
    """What the simulated user knows and wants."""

    persona: str | None = None
    instructions: StructuredUserInstructions | str
    script: list[str] | None = None
    """Optional lines for the scripted user, spoken in order (bench extension)."""

    def render(self) -> str:
        """Render as tau2 does (persona, then instructions, tab-indented)."""
        parts: list[str] = []
        if self.persona is not None:
            parts += ["Persona:", _indent(self.persona)]
        text = self.instructions if isinstance(self.instructions, str) else self.instructions.render()
        parts += ["Instructions:", _indent(text)]
        return "\n".join(parts)


@attrs.frozen(kw_only=True)
class EnvFunctionCall:
    """A call of any public toolkit method, on the agent or the user side."""

    env_type: Requestor
    func_name: str
    arguments: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class EnvAssertion(EnvFunctionCall):
    """An env function call whose boolean result must equal assert_value."""

    assert_value: bool = True
    message: str | None = None


@attrs.frozen(kw_only=True)
class InitializationData:
    """Deep-merge patches applied to the agent and user databases."""

    agent_data: dict[str, Any] | None = None
    user_data: dict[str, Any] | None = None


@attrs.frozen(kw_only=True)
class InitialState:
    """How a task's environment differs from the domain's pristine one."""

    initialization_data: InitializationData | None = None
    initialization_actions: list[EnvFunctionCall] | None = None
    message_history: list[Message] | None = None


@attrs.frozen(kw_only=True)
class Action:
    """A gold action: a tool call the task expects."""

    action_id: str
    requestor: Requestor = "assistant"
    name: str
    arguments: dict[str, Any] = attrs.field(factory=dict)
    info: str | None = None
    compare_args: list[str] | None = None

    def as_tool_call(self) -> ToolCall:
        """The tool call that performs this action."""
        return ToolCall(id=self.action_id, name=self.name, arguments=self.arguments, requestor=self.requestor)


@attrs.frozen(kw_only=True)
class RewardRule:
    """How a task's basis components combine into its reward: a registered rule's name and its parameters."""

    name: str = "product"
    params: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class EvaluationCriteria:
    """What decides a task's reward."""

    actions: list[Action] | None = None
    env_assertions: list[EnvAssertion] | None = None
    communicate_info: list[str] | None = None
    nl_assertions: list[str] | None = None
    reward_basis: list[str] = attrs.field(factory=lambda: [RewardType.DB.value, RewardType.COMMUNICATE.value])
    """Names of registered reward components (tau2's DB, ENV_ASSERTION, ACTION, COMMUNICATE, NL_ASSERTION, or a plugin's)."""
    reward_rule: RewardRule | None = None
    """The combination rule (bench extension): a name, or {name, params}; tau2's product when absent."""

    def nl_assertions_to_judge(self) -> list[str]:
        """The NL assertions that decide the reward (empty when NL_ASSERTION is not in the basis)."""
        return list(self.nl_assertions or []) if RewardType.NL_ASSERTION.value in self.reward_basis else []


@attrs.frozen(kw_only=True)
class Task:
    """One evaluation task; loads tau2-bench task JSON unchanged."""

    id: str
    description: Description | None = None
    user_scenario: UserScenario
    ticket: str | None = None
    initial_state: InitialState | None = None
    evaluation_criteria: EvaluationCriteria | None = None
    issues: list[dict[str, Any]] | None = None
    annotations: Any = None
    required_documents: list[str] | None = None
    user_tools: list[str] | None = None
    attributes: dict[str, str] = attrs.field(factory=dict)
    """Task attributes to break reports down by, e.g. {"persona": "Hard", "intent": "mms_issue"} (bench extension)."""
    extensions: dict[str, Any] = attrs.field(factory=dict)
    """Plugin-owned data keyed by task-extension name, structured by the extension that owns it (bench extension)."""

    def extension(self, name: str, default: Any = None) -> Any:
        """The plugin-owned data of one task extension, or default when the task has none."""
        return self.extensions.get(name, default)

    def gold_actions(self) -> list[Action]:
        """The task's gold actions, empty when there are none."""
        if self.evaluation_criteria is None:
            return []
        return list(self.evaluation_criteria.actions or [])

    def oracle_actions(self) -> list[Action]:
        """What the oracle agent performs: the gold actions, else an extension's `oracle_actions()` (never scored)."""
        gold = self.gold_actions()
        if gold:
            return gold
        for value in self.extensions.values():
            derive = getattr(value, "oracle_actions", None)
            if callable(derive):
                return list(derive())
        return []


def _structure_instructions(obj: Any, _: Any) -> StructuredUserInstructions | str:
    """tau2's instructions: a plain string or the structured object."""
    return obj if isinstance(obj, str) else converter.structure(obj, StructuredUserInstructions)


_rule_from_dict = make_dict_structure_fn(RewardRule, converter, _cattrs_forbid_extra_keys=True)


def _structure_rule(obj: Any, _: Any) -> RewardRule:
    """A reward rule: its name alone, or the object."""
    return RewardRule(name=obj) if isinstance(obj, str) else _rule_from_dict(expect(obj, dict, "an object"), RewardRule)


# Registered here, not in serialization: the converter sits below the schema and does not import it.
converter.register_structure_hook(RewardRule, _structure_rule)
converter.register_structure_hook(StructuredUserInstructions | str, _structure_instructions)
