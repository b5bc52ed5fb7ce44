"""The listening oracle: the gold plan, but with every critical field taken from what the agent heard.

A plain oracle replays the gold plan and never reads the user, so no noise can cost it anything. This
one first confirms who the caller is with the field it heard (a phone number or an email, through the
domain's lookup tool), asks the caller to repeat a field it could not read or that the lookup rejects
(at most twice), and fills critical arguments of the gold actions with the values it heard. When it
still cannot identify the caller it hands over to a human, and the task fails for a reason the store
names: the misheard field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import attrs

from bench_kernel import Action, Agent, AgentSession, AssistantMessage, ConversationSetup, Message, ToolCall, ToolMessage, UserMessage

from .fields import Field, canonical, fields_in, heard_values

LOOKUPS = {"phone": ("get_customer_by_phone", "phone_number"), "email": ("find_user_id_by_email", "email")}
REPEATS = 2
STOP = "###STOP###"


@attrs.define
class ListeningSession(AgentSession):
    """One conversation of the listening oracle."""

    setup: ConversationSetup
    heard: list[str] = attrs.Factory(list)
    position: int = 0
    asked: int = 0
    verified: bool = False
    pending_lookup: str | None = None
    closed: bool = False

    @property
    def expected(self) -> list[Field]:
        """The critical fields the caller will say (the oracle knows the task, not what it will hear)."""
        instructions = self.setup.task.user_scenario.instructions
        text = instructions if isinstance(instructions, str) else f"{instructions.reason_for_call} {instructions.known_info or ''}"
        return fields_in(text)

    async def respond(self, incoming: Sequence[Message]) -> AssistantMessage:
        """Verify the caller with what was heard, then the gold plan with heard values, then close."""
        self.heard += [m.content for m in incoming if isinstance(m, UserMessage) and m.content]
        if self.pending_lookup is not None:
            result = next((m for m in incoming if isinstance(m, ToolMessage)), None)
            self.pending_lookup = None
            if result is not None and not result.error:
                self.verified = True
            else:
                return self._repeat_or_transfer()
        if not self.verified:
            asked = self._verify()
            if asked is not None:
                return asked
        actions = self.setup.task.oracle_actions()
        if self.position < len(actions):
            action = actions[self.position]
            self.position += 1
            return self._perform(action)
        if self.closed:
            return AssistantMessage(content="Is there anything else I can help you with?")
        self.closed = True
        info = self.setup.task.evaluation_criteria.communicate_info if self.setup.task.evaluation_criteria else None
        return AssistantMessage(content=" ".join(["All done.", *(f"{fact}." for fact in info or [])]))

    def _verify(self) -> AssistantMessage | None:
        """A lookup with the heard field (or a request to repeat it); None when there is nothing to verify."""
        tools = {t["function"]["name"] for t in self.setup.agent_tools}
        for field in self.expected:
            lookup = LOOKUPS.get(field.kind)
            if lookup is None or lookup[0] not in tools:
                continue
            value = self._heard(field)
            if value is None:
                return self._repeat_or_transfer(field.kind)
            self.pending_lookup = field.kind
            return AssistantMessage(tool_calls=[ToolCall(id=f"verify-{self.asked}", name=lookup[0], arguments={lookup[1]: value})])
        self.verified = True
        return None

    def _repeat_or_transfer(self, kind: str | None = None) -> AssistantMessage:
        if self.asked < REPEATS:
            self.asked += 1
            what = {"phone": "phone number", "email": "email address", "order_id": "order number"}.get(kind or "", "details")
            return AssistantMessage(content=f"Sorry, I could not catch that. Could you repeat your {what}, please?")
        self.verified = True
        self.position = len(self.setup.task.oracle_actions())
        self.closed = True
        return AssistantMessage(
            tool_calls=[ToolCall(id="handover", name="transfer_to_human_agents", arguments={"summary": "Could not understand the caller's details."})]
        )

    def _perform(self, action: Action) -> AssistantMessage:
        arguments = {k: self._hear_argument(v) for k, v in action.arguments.items()}
        if action.requestor == "user" and self.setup.user_tools:
            return AssistantMessage(content=f"Please do this on your device: {action.name}({json.dumps(arguments, sort_keys=True)})")
        return AssistantMessage(tool_calls=[ToolCall(id=f"oracle-{self.position}", name=action.name, arguments=arguments)])

    def _hear_argument(self, value: Any) -> Any:
        """A critical value replaced by what was heard (in the value's own format), anything else unchanged."""
        if not isinstance(value, str):
            return value
        for field in self.expected:
            if canonical(field.kind, value) == field.canonical:
                heard = self._heard(field)
                return value if heard is None else _formatted(field, heard)
        return value

    def _heard(self, field: Field) -> str | None:
        for text in reversed(self.heard):
            found = heard_values(field.kind, text)
            if found:
                return _formatted(field, found[0])
        return None


def _formatted(field: Field, heard: str) -> str:
    """A heard value written the way the original is (phone digits placed into its pattern)."""
    if field.kind != "phone":
        return heard
    original = re.sub(r"\D", "", field.value)
    if len(heard) < len(original):  # a country code the caller did not say: the one the record has
        heard = original[: len(original) - len(heard)] + heard
    digits = iter(heard[-len(original) :])
    return re.sub(r"\d", lambda _: next(digits), field.value)


@attrs.define(kw_only=True)
class ListeningOracle(Agent):
    """The gold plan with critical fields as heard: shows what a voice channel costs without an LLM."""

    name: str = "listening-oracle"
    description: str = "Replays the gold plan, taking ids, phones and emails from what it heard (asks twice, then hands over)."
    calls_models_itself: bool = False

    def start(self, setup: ConversationSetup) -> AgentSession:
        """A fresh session."""
        return ListeningSession(setup)
