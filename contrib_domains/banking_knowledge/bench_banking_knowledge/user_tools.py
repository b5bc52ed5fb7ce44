"""The customer's tools: six always offered (filtered per task) and four the agent must give first.

They work on the agent's very database (tau2 has one DB for both sides). Result and error texts
of these tools are replayed and compared when a conversation is re-graded, so they are tau2's,
byte for byte; the descriptions are ours.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

import attrs

from bench_kernel import ToolKind, tool

from . import ids
from .discovery import discoverable
from .hidden import HiddenToolsToolkit, parse_arguments, type_error_text

USER_CLASS = "KnowledgeUserTools"

CARD_TYPES: tuple[str, ...] = (
    "Bronze Rewards Card",
    "Business Bronze Rewards Card",
    "Business Gold Rewards Card",
    "Business Platinum Rewards Card",
    "Business Silver Rewards Card",
    "Crypto-Cash Back",
    "Diamond Elite Card",
    "EcoCard",
    "Gold Rewards Card",
    "Green Rewards Card",
    "Platinum Rewards Card",
    "Silver Rewards Card",
    "Silver Zoom Card",
)
"""The cards one may apply for, in the order tau2's error text lists them."""

REWARD_RATES: dict[str, dict[str, float]] = {
    "Bronze Rewards Card": {"default": 1.0},
    "Silver Rewards Card": {"Travel": 4.0, "Software": 4.0, "default": 1.0},
    "Gold Rewards Card": {"default": 2.5},
    "Platinum Rewards Card": {"default": 10.0},
    "Business Bronze Rewards Card": {"default": 1.0},
    "Business Silver Rewards Card": {"Travel": 10.0, "Software": 10.0, "default": 1.0},
    "Green Rewards Card": {"Sustainable": 3.0, "default": 1.0},
    "Business Gold Rewards Card": {"Operations": 2.5, "default": 1.0},
    "Business Platinum Rewards Card": {"Travel": 4.0, "Software": 4.0, "Media": 4.0, "default": 1.5},
    "Silver Zoom Card": {"Transportation": 3.0, "default": 1.0},
    "Diamond Elite Card": {"default": 5.0},
    "EcoCard": {"Green": 5.0, "default": 1.0},
    "Crypto-Cash Back": {"default": 2.0},
}
"""Reward percent per card and purchase category ("default" for the rest), in tau2's order (its error lists them)."""


def parse_balance(value: Any) -> float:
    """A balance stored as a number or as text like "$2,850.00"."""
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        return float(value.replace("$", "").replace(",", ""))
    return 0.0


def _arguments_text(args: dict[str, Any]) -> str:
    return json.dumps(args, indent=2)


@attrs.define
class BankingKnowledgeUserTools(HiddenToolsToolkit):
    """What the customer can do themselves: apply, refer, pay, ask for a human, and run tools the agent gives."""

    # ------------------------------------------------------------------ always offered

    @tool(ToolKind.WRITE)
    def apply_for_credit_card(self, card_type: str, customer_name: str, annual_income: float, rho_bank_subscription: bool = False) -> str:
        """Send an application for one of the bank's credit cards.

        Args:
            card_type (str): The card's exact product name.
            customer_name (str): The applicant's full legal name.
            annual_income (float): Yearly income in US dollars.
            rho_bank_subscription (bool): True when the applicant holds the bank's paid membership.
        """
        if card_type not in CARD_TYPES:
            return f"Error: Invalid card_type '{card_type}'. Must be one of: {list(CARD_TYPES)}"
        try:
            income = float(annual_income)
        except (TypeError, ValueError):
            return "Error: Invalid annual_income. Must be a number."
        record_id = ids.application_id(card_type, customer_name, income, rho_bank_subscription)
        record = {
            "application_id": record_id,
            "card_type": card_type,
            "customer_name": customer_name,
            "annual_income": income,
            "rho_bank_subscription": rho_bank_subscription,
            "status": "PENDING",
            "date": ids.TODAY,
        }
        if not self.db.add("credit_card_applications", record_id, record):
            return f"Failed to submit application: Record ID '{record_id}' may already exist."
        return (
            "Credit card application submitted:\nYour application has been successfully submitted. "
            "You will receive a decision within 5-7 business days via email."
        )

    @tool(ToolKind.WRITE)
    def submit_referral(self, user_id: str, account_type: str) -> str:
        """Refer someone else to open an account with the bank.

        Args:
            user_id (str): Your own customer id (you are the referrer).
            account_type (str): The kind of account you recommend they open.
        """
        record_id = ids.referral_id(user_id, account_type)
        record = {
            "referral_id": record_id,
            "referrer_id": user_id,
            "referred_account_type": account_type,
            "referral_status": "NO_PROGRESS",
            "date": ids.TODAY,
        }
        if not self.db.add("referrals", record_id, record):
            return f"Failed to submit referral: Record ID '{record_id}' may already exist."
        return (
            f"Referral request submitted successfully!\n  - Referral ID: {record_id}\n  - Referrer ID: {user_id}\n"
            f"  - Account Type: {account_type}\n  - Status: NO_PROGRESS\n  - Date: {ids.TODAY}\n\n"
            "Share your referral ID with the person you're referring. "
            "They will need to use this when applying for their account."
        )

    @tool(ToolKind.WRITE)
    def submit_transaction(self, user_id: str, credit_card_type: str, merchant_name: str, amount: float, category: str) -> str:
        """Make a purchase with one of your credit cards.

        Args:
            user_id (str): Your customer id.
            credit_card_type (str): The card's product name, such as "Gold Rewards Card".
            merchant_name (str): Where you bought it.
            amount (float): The price in US dollars.
            category (str): The purchase category, such as "Travel", "Dining" or "Groceries".
        """
        if credit_card_type not in REWARD_RATES:
            return f"Error: Unknown credit card type '{credit_card_type}'. Available types: {list(REWARD_RATES)}"
        record_id = ids.transaction_id(user_id, credit_card_type, merchant_name, amount, category)
        rates = REWARD_RATES[credit_card_type]
        rate = rates.get(category, rates["default"])
        points = int(amount * rate)
        record = {
            "transaction_id": record_id,
            "user_id": user_id,
            "credit_card_type": credit_card_type,
            "merchant_name": merchant_name,
            "transaction_amount": f"${amount:.2f}",
            "transaction_date": ids.TODAY,
            "category": category,
            "status": "COMPLETED",
            "rewards_earned": f"{points} points",
        }
        if not self.db.add("credit_card_transaction_history", record_id, record):
            return f"Failed to submit transaction: Record ID '{record_id}' may already exist."
        return (
            f"Transaction submitted successfully!\n  - Transaction ID: {record_id}\n  - User ID: {user_id}\n"
            f"  - Card Type: {credit_card_type}\n  - Merchant: {merchant_name}\n  - Amount: ${amount:.2f}\n"
            f"  - Category: {category}\n  - Date: {ids.TODAY}\n"
            f"  - Rewards Earned: {points} points ({rate}% cashback rate)\n"
        )

    @tool(ToolKind.WRITE)
    def call_discoverable_user_tool(self, discoverable_tool_name: str, arguments: str = "{}") -> str:
        """Run a tool the agent has given you, with the arguments the agent told you.

        Args:
            discoverable_tool_name (str): The tool's name, as the agent gave it.
            arguments (str): The arguments as a JSON object text, e.g. '{"account_id": "chk_1"}'.
        """
        hidden = self.discoverable()
        if discoverable_tool_name not in hidden:
            return f"Error: Unknown discoverable tool '{discoverable_tool_name}'."
        try:
            args = parse_arguments(arguments)
        except json.JSONDecodeError as exc:
            return f"Error: Invalid JSON in arguments: {exc}"
        method = hidden[discoverable_tool_name]
        problem = _signature_problem(method, args)
        if problem:
            return problem
        try:
            return str(getattr(self, discoverable_tool_name)(**args))
        except TypeError as exc:
            return f"Error: Invalid arguments for tool '{discoverable_tool_name}': {type_error_text(exc, method, USER_CLASS)}"

    @tool(ToolKind.READ)
    def list_discoverable_user_tools(self) -> str:
        """List the tools the agent has given you so far."""
        return f"Tools given to you by the agent:\n{self.db.query_text('user_discoverable_tools')}"

    @tool(ToolKind.WRITE)
    def request_human_agent_transfer(self) -> str:
        """Ask to speak with a human; every request is recorded and counted."""
        existing = self.db.query_text("human_transfer_requests")
        count = 1 if "No records found" in existing else existing.count("request_id") + 1
        record_id = f"transfer_request_{count}"
        record = {"request_id": record_id, "request_number": count, "requested_at": ids.TODAY, "status": "PENDING"}
        self.db.add("human_transfer_requests", record_id, record)
        return f"Transfer request #{count} submitted.\nThe agent will process your request."

    # ------------------------------------------------------------------ given by the agent

    def _not_given(self, name: str) -> str | None:
        if self.db.query("user_discoverable_tools", {"tool_name": name}):
            return None
        return (
            f"Error: Tool '{name}' has not been given to you by the agent. "
            "The agent must first use `give_discoverable_user_tool` to give this tool to you."
        )

    def _log_call(self, name: str, args: dict[str, Any]) -> None:
        record = {"tool_name": name, "arguments": args, "called_at": ids.TODAY, "status": "CALLED"}
        self.db.add("user_discoverable_tool_calls", ids.user_tool_call_id(name, args), record)

    @discoverable(ToolKind.WRITE)
    def submit_cash_back_dispute_0589(self, user_id: str, transaction_id: str) -> str:
        """Open a dispute about the cash back a purchase earned.

        Args:
            user_id (string): Your customer id
            transaction_id (string): The purchase whose cash back looks wrong

        Returns:
            Cash back dispute submitted successfully. Your case has been queued for review.
        """
        refused = self._not_given("submit_cash_back_dispute_0589")
        if refused:
            return refused
        args = {"user_id": user_id, "transaction_id": transaction_id}
        self._log_call("submit_cash_back_dispute_0589", args)
        record_id = ids.dispute_id(user_id, transaction_id)
        record: dict[str, Any] = {"dispute_id": record_id, "user_id": user_id, "transaction_id": transaction_id, "submitted_at": ids.TODAY}
        if self._auto_resolve_disputes():
            record |= {"status": "RESOLVED", "resolution": "APPROVED"}
            status = "Status: RESOLVED - The dispute has been reviewed and approved. The transaction rewards need to be updated."
        else:
            record["status"] = "SUBMITTED"
            status = "Status: SUBMITTED - Your dispute has been queued for review."
        added = self.db.add("cash_back_disputes", record_id, record)
        text = (
            "Cash back dispute submitted successfully. Your case has been queued for review.\n\n"
            f"Executed: submit_cash_back_dispute_0589\nArguments: {_arguments_text(args)}\n"
        )
        if added:
            return text + f"Dispute ID: {record_id}\n{status}"
        return text + "Note: Dispute may have already been submitted for this transaction."

    def _auto_resolve_disputes(self) -> bool:
        rows = self.db.table_items("task_config")
        if not rows:
            return False
        settings = dict(rows).get("dispute_settings", {})
        return bool(settings.get("auto_resolve_disputes", False))

    @discoverable(ToolKind.WRITE)
    def get_referral_link(self, user_id: str, card_name: str) -> str:
        """Create a link that refers a friend to one of the bank's credit cards.

        Args:
            user_id (string): Your customer id (the referrer)
            card_name (string): The card you recommend, e.g. 'Gold Rewards Card'

        Returns:
            Referral link generated successfully. Share this link with the person you want to refer.
        """
        refused = self._not_given("get_referral_link")
        if refused:
            return refused
        args = {"user_id": user_id, "card_name": card_name}
        self._log_call("get_referral_link", args)
        record_id = ids.referral_link_id(user_id, card_name)
        record = {
            "referral_id": record_id,
            "referrer_id": user_id,
            "referred_account_type": card_name,
            "referral_status": "NO_PROGRESS",
            "date": ids.TODAY,
        }
        added = self.db.add("referrals", record_id, record)
        text = (
            "Referral link generated successfully. Share this link with the person you want to refer.\n\n"
            f"Executed: get_referral_link\nArguments: {_arguments_text(args)}\n"
        )
        if added:
            return text + f"Referral ID: {record_id}\nReferral link: https://rhobank.com/refer/{record_id}"
        return text + "Note: A referral link for this card may have already been generated."

    @discoverable(ToolKind.READ)
    def get_card_last_4_digits(self, credit_card_account_id: str) -> str:
        """Read the last four digits printed on one of your credit cards.

        Args:
            credit_card_account_id (string): The card account to look at, e.g. 'cc_123_gold'

        Returns:
            Card information retrieved successfully.
        """
        refused = self._not_given("get_card_last_4_digits")
        if refused:
            return refused
        args = {"credit_card_account_id": credit_card_account_id}
        self._log_call("get_card_last_4_digits", args)
        # tau2 splices the id into JSON text: an id with a quote gives an error text, which is not "not found"
        found = self.db.query_text("credit_card_accounts", f'{{"account_id": "{credit_card_account_id}"}}')
        if "No results found" in found or "No records found" in found:
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        return (
            "Card information retrieved successfully.\n\nExecuted: get_card_last_4_digits\n"
            f"Arguments: {_arguments_text(args)}\nLast 4 digits of card: {ids.credit_card_last_4(credit_card_account_id)}"
        )

    @discoverable(ToolKind.WRITE)
    def deposit_check_3847(self, account_id: str, check_amount: float) -> str:
        """Deposit a paper check into one of your accounts by photographing it in the mobile app.

        Args:
            account_id (string): The account that receives the money
            check_amount (number): The check's amount in US dollars

        Returns:
            Check deposited successfully. Funds will be available according to your account's deposit policy.
        """
        refused = self._not_given("deposit_check_3847")
        if refused:
            return refused
        args = {"account_id": account_id, "check_amount": check_amount}
        self._log_call("deposit_check_3847", args)
        try:
            amount = float(check_amount)
        except (ValueError, TypeError):
            return f"Error: Invalid check amount '{check_amount}'. Must be a number."
        if amount <= 0:
            return "Error: Check amount must be positive."
        account = self.db.get("accounts", account_id)
        if account is None:
            return f"Error: Account '{account_id}' not found."
        if account.get("status") not in ("ACTIVE", "OPEN"):
            return f"Error: Account '{account_id}' is not active."
        before = parse_balance(account.get("current_holdings", account.get("balance", 0)))
        after = before + amount
        self.db.update("accounts", account_id, {"current_holdings": f"${after:.2f}"})
        return (
            "Check deposited successfully. Funds will be available according to your account's deposit policy.\n\n"
            f"Executed: deposit_check_3847\nArguments: {_arguments_text(args)}\nCheck deposit processed!\n"
            f"  - Account: {account_id}\n  - Check Amount: ${amount:.2f}\n  - Previous Balance: ${before:.2f}\n"
            f"  - New Balance: ${after:.2f}"
        )


def _signature_problem(method: Any, args: Any) -> str | None:
    """tau2's argument checks before a given tool runs: required parameters present, no unknown ones."""
    params = inspect.signature(method).parameters
    for name, param in params.items():
        if name != "self" and param.default is inspect.Parameter.empty and name not in args:
            return f"Error: Missing required parameter: {name}"
    for name in args:
        if name not in params:
            return f"Error: Unexpected parameter: {name}"
    return None
