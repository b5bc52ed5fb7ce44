"""The agent's tools: fourteen always offered, and the discovery wrappers that reach the hidden ones.

Result and error texts of the tools that change the database (and of unlocking and giving,
which tau2 replays too) are tau2's, byte for byte: a re-grade replays them and compares. The
descriptions are ours; under a profile carrying tau2's texts the discovery outputs use those.
"""

from __future__ import annotations

import inspect
import json
from typing import Any, Literal, get_args

import attrs

from bench_kernel import ToolKind, tool

from . import ids
from .agent_discoverable import AgentDiscoverableTools
from .discovery import ToolInfo, discoverable_kind
from .hidden import HiddenToolsToolkit, parse_arguments, type_error_text
from .user_tools import BankingKnowledgeUserTools

AGENT_CLASS = "KnowledgeTools"

TransferReason = Literal[
    "fraud_or_security_concern",
    "account_closure_request",
    "deceased_account_holder",
    "legal_or_regulatory_matter",
    "account_ownership_dispute",
    "complex_billing_dispute",
    "abusive_customer_behavior",
    "third_party_inquiry",
    "technical_system_error",
    "unconfirmed_external_communication",
    "customer_demands_after_unavailable_offer_refusal",
    "kb_search_unsuccessful_customer_requests_transfer",
    "specialized_department_required",
    "accessibility_or_special_needs",
    "customer_frustrated_demands_human",
    "supervisor_request_service_complaint",
    "customer_requests_human_no_specific_reason",
    "request_completed_customer_wants_human_followup",
    "other",
]
TRANSFER_REASONS: tuple[str, ...] = get_args(TransferReason)


def read_log_allowlist(task: Any) -> frozenset[str]:
    """The hidden tools a task's gold actions call through `call_discoverable_agent_tool` (tau2's per-task allowlist)."""
    criteria = getattr(task, "evaluation_criteria", None)
    names = set()
    for action in (criteria.actions or []) if criteria is not None else []:
        if action.name == "call_discoverable_agent_tool":
            name = (action.arguments or {}).get("agent_tool_name")
            if name:
                names.add(name)
    return frozenset(names)


@attrs.define
class BankingKnowledgeTools(HiddenToolsToolkit, AgentDiscoverableTools):
    """The bank's help-desk tools: look people up, verify them, and reach hidden tools the documents name."""

    unlocked: dict[str, ToolInfo] = attrs.field(factory=dict, kw_only=True)
    """Hidden tools unlocked in this conversation (memory only: tau2 writes nothing on unlock)."""

    # ------------------------------------------------------------------ people and records

    @tool(ToolKind.GENERIC)
    def transfer_to_human_agents(self, summary: str, reason: TransferReason = "other") -> str:
        """Hand the conversation to a human colleague; the documents say which reason code fits.

        Args:
            summary (str): What the customer needs and what was tried so far.
            reason (str): The reason code for the hand-over.
        """
        if reason not in TRANSFER_REASONS:
            return f"Error: Invalid transfer reason '{reason}'. Must be one of: {', '.join(TRANSFER_REASONS)}"
        return f"Transfer successful (reason: {reason}). A human agent will assist you shortly."

    @tool(ToolKind.READ)
    def get_current_time(self) -> str:
        """Tell the current date and time (the timestamp verification records need)."""
        return "The current time is 2025-11-14 03:40:00 EST."

    @tool(ToolKind.READ)
    def get_user_information_by_id(self, user_id: str) -> str:
        """Look a customer up by customer id: name, birth date, email, phone and address.

        Args:
            user_id (str): The customer's id.
        """
        return self.db.query_text("users", f'{{"user_id": "{user_id}"}}')

    @tool(ToolKind.READ)
    def get_user_information_by_name(self, customer_name: str) -> str:
        """Look a customer up by full name (exact spelling and case).

        Args:
            customer_name (str): The customer's full name.
        """
        return self.db.query_text("users", f'{{"name": "{customer_name}"}}')

    @tool(ToolKind.READ)
    def get_user_information_by_email(self, email: str) -> str:
        """Look a customer up by email address.

        Args:
            email (str): The customer's email address.
        """
        return self.db.query_text("users", f'{{"email": "{email}"}}')

    @tool(ToolKind.WRITE)
    def change_user_email(self, user_id: str, new_email: str) -> str:
        """Replace the email address on a customer's profile.

        Args:
            user_id (str): The customer's id.
            new_email (str): The address to keep from now on.
        """
        if not self.db.update("users", user_id, {"email": new_email}):
            return f"Error: User with ID '{user_id}' not found."
        return f"Email updated successfully.\n  - User ID: {user_id}\n  - New Email: {new_email}"

    @tool(ToolKind.READ)
    def get_referrals_by_user(self, user_id: str) -> str:
        """List the referrals a customer has made.

        Args:
            user_id (str): The referring customer's id.
        """
        return self.db.query_text("referrals", f'{{"referrer_id": "{user_id}"}}')

    @tool(ToolKind.READ)
    def get_credit_card_transactions_by_user(self, user_id: str) -> str:
        """List a customer's credit-card purchases.

        Args:
            user_id (str): The customer's id.
        """
        return self.db.query_text("credit_card_transaction_history", f'{{"user_id": "{user_id}"}}')

    @tool(ToolKind.READ)
    def get_credit_card_accounts_by_user(self, user_id: str) -> str:
        """List a customer's credit-card accounts with card, opening date, balance and points.

        Args:
            user_id (str): The customer's id.
        """
        return self.db.query_text("credit_card_accounts", f'{{"user_id": "{user_id}"}}')

    @tool(ToolKind.WRITE)
    def log_verification(self, name: str, user_id: str, address: str, email: str, phone_number: str, date_of_birth: str, time_verified: str) -> str:
        """Record that a customer's identity was confirmed (after two of birth date, email, phone, address matched).

        Args:
            name (str): The customer's full name.
            user_id (str): The customer's id.
            address (str): The address on file.
            email (str): The email on file.
            phone_number (str): The phone number on file.
            date_of_birth (str): The birth date on file, MM/DD/YYYY.
            time_verified (str): When the check was done, e.g. "2025-11-14 03:40:00 EST".
        """
        record = {
            "name": name,
            "user_id": user_id,
            "address": address,
            "email": email,
            "phone_number": phone_number,
            "date_of_birth": date_of_birth,
            "time_verified": time_verified,
        }
        if not self.db.add("verification_history", ids.verification_id(user_id, time_verified), record):
            return "Failed to log verification: Record may already exist."
        return f"Verification logged successfully.\n  - User: {name} (ID: {user_id})\n  - Verified at: {time_verified}"

    # ------------------------------------------------------------------ discovery

    @tool(ToolKind.WRITE)
    def give_discoverable_user_tool(self, discoverable_tool_name: str, arguments: str = "{}") -> str:
        """Hand the customer a tool the documents say they should run themselves.

        Args:
            discoverable_tool_name (str): The tool's name as the documents give it.
            arguments (str): Suggested arguments as a JSON object text, e.g. '{"account_id": "chk_1"}'.
        """
        hidden = BankingKnowledgeUserTools.discoverable()
        if discoverable_tool_name not in hidden:
            return f"Error: Unknown discoverable tool '{discoverable_tool_name}'."
        try:
            args = json.loads(arguments)
        except json.JSONDecodeError as exc:
            return f"Error: Invalid JSON in arguments: {exc}"
        method = hidden[discoverable_tool_name]
        params = inspect.signature(method).parameters
        for name in args:
            if name not in params and name != "self":
                return f"Error: Unexpected parameter: {name}"
        info = self.describe(method, "user")
        self.db.add("user_discoverable_tools", ids.user_tool_id(discoverable_tool_name), {"tool_name": discoverable_tool_name, "status": "GIVEN"})
        return info.given_text(json.dumps(args, indent=2) if args else None, self.formats())

    @tool(ToolKind.WRITE)
    def unlock_discoverable_agent_tool(self, agent_tool_name: str) -> str:
        """Unlock a specialised internal tool the documents name, and learn its parameters.

        Args:
            agent_tool_name (str): The tool's name as the documents give it.
        """
        method = self.discoverable().get(agent_tool_name)
        if method is None:
            return f"Error: Unknown agent tool '{agent_tool_name}'. This tool is not available."
        info = self.unlocked[agent_tool_name] = self.describe(method, "agent")
        return info.unlocked_text(self.formats())

    @tool(ToolKind.WRITE)
    def call_discoverable_agent_tool(self, agent_tool_name: str, arguments: str = "{}") -> Any:
        """Run an internal tool unlocked earlier in this conversation.

        Args:
            agent_tool_name (str): The unlocked tool's name.
            arguments (str): Its arguments as a JSON object text, e.g. '{"user_id": "123"}'.
        """
        method = self.discoverable().get(agent_tool_name)
        if method is None:
            return f"Error: Unknown agent tool '{agent_tool_name}'. This tool is not available."
        if agent_tool_name not in self.unlocked:
            return (
                f"Error: Tool '{agent_tool_name}' has not been unlocked. "
                "You must first use `unlock_discoverable_agent_tool` to unlock this tool before calling it."
            )
        try:
            args = parse_arguments(arguments)
        except json.JSONDecodeError as exc:
            return f"Error: Invalid JSON in arguments: {exc}"
        try:
            result = getattr(self, agent_tool_name)(**args)
        except TypeError as exc:
            return f"Error: Invalid arguments: {type_error_text(exc, method, AGENT_CLASS)}"
        self._log_call(agent_tool_name, method)
        return result

    def _log_call(self, name: str, method: Any) -> None:
        """Log a hidden tool's call: always for writes, for reads only when the task's gold calls them."""
        if discoverable_kind(method) is ToolKind.WRITE or name in read_log_allowlist(self.context.task):
            self.db.add("agent_discoverable_tools", ids.agent_tool_id(name), {"tool_name": name, "status": "CALLED"})

    @tool(ToolKind.READ)
    def list_discoverable_agent_tools(self) -> str:
        """List the internal tools called so far whose calls were recorded."""
        return f"Your called agent tools:\n{self.db.query_text('agent_discoverable_tools')}"
