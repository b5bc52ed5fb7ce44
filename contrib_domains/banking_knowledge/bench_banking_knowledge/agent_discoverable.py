# ruff: noqa: E501  (tool docstrings keep one line per argument, whatever its length: the unlock output parses them)
"""The agent's hidden tools: 44 bank operations the agent unlocks after finding their names in the documents.

They are tau2-bench 1.0.1's discoverable `KnowledgeTools` methods, with the same names, parameters,
validation order, records and result texts. tau2 re-grades a conversation by replaying every
`call_discoverable_agent_tool` call (a write tool, whatever the tool behind it) and comparing each
output with the recorded one, so results and error texts are kept byte for byte. Failures are
returned as `Error: ...` texts, as tau2 returns them; an argument of the wrong JSON type fails
where Python fails on it in tau2's code (the call wrapper reports a TypeError as invalid arguments).
Our own wording: the canned prose of the three transfer-protocol tools (under a profile dumped from
tau2 they answer with the line its texts carry for them, tau2's) and the ATM envelope scans (so a
re-grade by tau2 of a conversation that fetched one of the three scanned deposits would differ there).

tau2's quirks, kept because they change the database hash or a replayed output:
- balances are written as "123.45" by some tools and "$123.45" by others;
- `open_bank_account_4821` writes `account_type`/`account_class` where seeded accounts have `class`/`level`,
  so the tools that read `class` do not recognise an account it opened;
- the savings early-closure fees are keyed on class "savings", seeded savings accounts say "saving";
- `order_debit_card_5739` does not strip "$" from a balance, so an account a transfer wrote reads as $0.00;
- `submit_interest_discrepancy_report_7294` reports success and stores nothing;
- `approve_credit_limit_increase_5847` does not count ORDERED replacement orders as pending;
- `get_payment_history_6183` sorts MM/DD/YYYY dates as text;
- `set_debit_card_recurring_block_7382` upper-cases the card's status before checking it, the other card tools do not;
- lookups built by pasting an id into a JSON text (tau2's) answer "Invalid JSON" for an id with a quote.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from bench_kernel import ToolKind

from . import ids
from .discovery import DEFAULT_RETURNS, discoverable, tool_info

if TYPE_CHECKING:
    from .db import BankDB, Record

CC_ACCOUNTS = "credit_card_accounts"
CC_TRANSACTIONS = "credit_card_transaction_history"
BANK_TRANSACTIONS = "bank_account_transaction_history"
CLI_REQUESTS = "credit_limit_increase_requests"

CREDIT_CARD_ACTIONS = ("keep_active", "cancel_and_reissue")
CREDIT_DISPUTE_REASONS = (
    "unauthorized_fraudulent_charge",
    "duplicate_charge",
    "incorrect_amount",
    "goods_services_not_received",
    "goods_services_not_as_described",
    "canceled_subscription_still_charging",
    "refund_never_processed",
)
RESOLUTIONS = ("full_refund", "partial_refund")
DEBIT_DISPUTE_CATEGORIES = (
    "unauthorized_transaction",
    "atm_cash_discrepancy",
    "atm_deposit_not_credited",
    "duplicate_charge",
    "incorrect_amount",
    "goods_services_not_received",
    "recurring_charge_after_cancellation",
    "card_present_fraud",
    "card_not_present_fraud",
)
FRAUD_CATEGORIES = ("unauthorized_transaction", "card_present_fraud", "card_not_present_fraud")
DEBIT_TRANSACTION_TYPES = (
    "pin_purchase",
    "signature_purchase",
    "online_purchase",
    "atm_withdrawal",
    "atm_deposit",
    "recurring_payment",
    "person_to_person",
)
PIN_COMPROMISE = ("yes_shared", "yes_observed", "no", "unknown")
DEBIT_CARD_ACTIONS = ("keep_active", "freeze_pending_investigation", "close_and_reissue")
REPLACEMENT_REASONS = ("fraud_suspected", "lost", "stolen", "damaged", "expired", "other")
CLOSURE_REASONS = (
    "annual_fee",
    "not_using_card",
    "found_better_card",
    "unhappy_with_rewards",
    "simplifying_finances",
    "negative_experience",
    "other",
)
STATEMENT_CREDIT_REASONS = (
    "goodwill_adjustment",
    "promotional_credit",
    "annual_fee_reversal",
    "late_fee_reversal",
    "interest_charge_reversal",
    "dispute_resolution",
    "price_match",
    "retention_offer",
    "error_correction",
    "other",
)
FLAG_TYPES = ("annual_fee_waived", "promotional_apr", "rewards_bonus", "other")
FLAG_REASONS = ("retention_offer", "loyalty_benefit", "promotional", "error_correction", "other")
DENIAL_REASONS = (
    "insufficient_account_age",
    "cooldown_period_active",
    "pending_disputes",
    "pending_replacement_card",
    "past_due_balance",
    "high_utilization",
    "insufficient_payment_history",
    "requested_amount_exceeds_limit",
    "other",
)
BANK_ACCOUNT_TYPES = ("checking", "savings", "business_checking", "business_savings")
PERSONAL_CHECKING = ("checking", "personal_checking")
LIVE_STATUSES = ("OPEN", "ACTIVE")
CHECKING_CREDIT_TYPES = ("rebate_credit", "fee_refund")
SAVINGS_CREDIT_TYPES = ("interest_correction", "fee_refund", "goodwill_credit")
CREDIT_DESCRIPTIONS = {
    "rebate_credit": "REBATE CREDIT - CUSTOMER SERVICE",
    "fee_refund": "FEE REFUND - CUSTOMER SERVICE",
    "interest_correction": "INTEREST CORRECTION - CUSTOMER SERVICE",
    "goodwill_credit": "GOODWILL CREDIT - CUSTOMER SERVICE",
}
DELIVERY_TIMES = {"STANDARD": "7-10 business days", "EXPEDITED": "3-5 business days", "RUSH": "1-2 business days"}
CARD_DESIGNS = ("CLASSIC", "PREMIUM", "CUSTOM")
DEBIT_CLOSURE_REASONS = ("lost", "stolen", "fraud_suspected", "damaged", "no_longer_needed", "account_closing")
ALERT_CLEAR_REASONS = ("customer_verified", "velocity_clear")
SEQUENTIAL_PINS = (
    "0123",
    "1234",
    "2345",
    "3456",
    "4567",
    "5678",
    "6789",
    "9876",
    "8765",
    "7654",
    "6543",
    "5432",
    "4321",
    "3210",
)
ACTIVATION_TOOL_BY_REASON = {
    "new_account": "activate_debit_card_8291",
    "first_card": "activate_debit_card_8291",
    "lost": "activate_debit_card_8292",
    "stolen": "activate_debit_card_8292",
    "fraud": "activate_debit_card_8292",
    "expired": "activate_debit_card_8293",
    "damaged": "activate_debit_card_8293",
    "upgrade": "activate_debit_card_8293",
    "bank_reissue": "activate_debit_card_8293",
}
CHECKING_EARLY_CLOSURE = {
    "Light Blue Account": (15, 30),
    "Light Green Account": (15, 30),
    "Green Fee-Free Account": (15, 30),
    "Blue Account": (25, 60),
    "Green Account": (25, 60),
    "Evergreen Account": (50, 90),
    "Bluest Account": (100, 180),
}
"""Personal checking: level -> (early-closure fee in dollars, window in days since opening)."""
SAVINGS_EARLY_CLOSURE = {
    "Bronze Account": (20, 60),
    "Silver Account": (35, 90),
    "Silver Plus Account": (35, 90),
    "Gold Account": (75, 180),
    "Gold Plus Account": (75, 180),
    "Gold Years Account": (75, 180),
    "Platinum Account": (150, 270),
    "Platinum Plus Account": (150, 270),
    "Diamond Elite Account": (150, 270),
}
"""Personal savings: level -> (fee, window); applies to class "savings" only (seeded rows say "saving")."""
DEFAULT_ATM_LIMITS = {
    "blue account": 500,
    "green account": 600,
    "light blue account": 400,
    "green fee-free account": 500,
    "evergreen account": 750,
    "bluest account": 1500,
    "dark green account": 300,
    "gold years account": 600,
    "purple account": 1000,
}
"""The daily ATM limit of a card without its own, by the lower-cased level of its account."""

_ATM_SCANS: dict[str, tuple[str, str, str]] = {
    "btxn_834027370c20": (
        "ATM #3921",
        "Envelope ENV-2025-3921-00923, deposited at 3:47 PM CST\n"
        "Machine: Rho-Bank ATM #3921, Cedar Lane Branch, Austin, TX\n"
        "\n"
        "In the envelope:\n"
        "  1. Personal check no. 7284 drawn on First Texas Bank, payable to Derek Yamamoto, $875.00,\n"
        '     dated 11/03/2025, memo "October rent refund", signed\n'
        "  2. Cash $260.00: two $100 bills and three $20 bills\n"
        "\n"
        "Envelope total: $1,135.00 (check $875.00, cash $260.00)\n"
        "The ATM recorded $385.00, which is $750.00 less than the envelope held.\n"
        "\n"
        'Image quality: envelope, check front and cash all legible; check back legible, endorsed "For Deposit Only - Derek Yamamoto"',
        "The images show $1,135.00 deposited against $385.00 recorded by the machine: a $750.00 discrepancy, confirmed.",
    ),
    "btxn_test_deposit_001": (
        "ATM #3921",
        "Envelope ENV-2025-3921-00847, deposited at 2:34 PM EST\n"
        "Machine: Rho-Bank ATM #3921, 742 Oak Avenue, Portland, OR\n"
        "\n"
        "In the envelope:\n"
        "  1. Personal check no. 4821 drawn on First National Bank, payable to Linda Patterson, $875.00,\n"
        '     dated 11/05/2025, memo "October rent refund", signed\n'
        "  2. Cash $260.00: two $100 bills and three $20 bills\n"
        "\n"
        "Envelope total: $1,135.00 (check $875.00, cash $260.00)\n"
        "The ATM recorded $385.00, which is $750.00 less than the envelope held.\n"
        "\n"
        'Image quality: envelope, check front and cash all legible; check back legible, endorsed "For Deposit Only - Linda Patterson"',
        "The images show $1,135.00 deposited against $385.00 recorded by the machine: a $750.00 discrepancy, confirmed.",
    ),
    "btxn_test_atm_dep_partial": (
        "ATM #5847",
        "Envelope ENV-2025-5847-00293, deposited at 10:15 AM EST\n"
        "\n"
        "In the envelope:\n"
        "  1. Personal check no. 7392, $500.00\n"
        "\n"
        "Envelope total: $500.00 (check $500.00, cash $0.00)\n"
        "The ATM recorded $500.00, the same amount.",
        "The images agree with the recorded amount; there is no discrepancy.",
    ),
}
"""The three deposits whose envelope images exist: (ATM, scan description, reviewer's note), in our words."""


def _title(code: str) -> str:
    """An enum value for display: underscores as spaces, each word capitalised."""
    return code.replace("_", " ").title()


def _not_one_of(field: str, value: Any, allowed: tuple[str, ...]) -> str | None:
    """tau2's error for a value outside an enum (the allowed values as a Python list), or None."""
    return None if value in allowed else f"Error: Invalid {field}. Must be one of: {list(allowed)}"


def _parse_balance(value: Any) -> float:
    """A balance as a number, from a number or a text such as '$2,850.00' (anything else counts as 0)."""
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        return float(value.replace("$", "").replace(",", ""))
    return 0.0


def _holdings(account: Mapping[str, Any]) -> float:
    """A bank account's balance: `current_holdings`, else `balance`, else 0."""
    return _parse_balance(account.get("current_holdings", account.get("balance", 0)))


def _dollars(value: Any) -> float:
    """A '$1,234.56' amount field as a number; 0.0 when it does not parse."""
    try:
        return float(str(value).replace("$", "").replace(",", ""))
    except (ValueError, TypeError):
        return 0.0


def _has_records(text: str) -> bool:
    """True when a query text lists records (tau2 tests the text, not the rows)."""
    return "No records found" not in text and "No results found" not in text


def _age_days(date_opened: str, today: datetime) -> int:
    """Whole days from an MM/DD/YYYY date to today (raises ValueError on another format)."""
    return (today - datetime.strptime(date_opened, "%m/%d/%Y")).days


def _pin_problem(pin: Any) -> str | None:
    """Why a PIN is refused (4 digits, not a run such as 1234 or 4321, not one repeated digit), or None."""
    if not pin or not pin.isdigit() or len(pin) != 4:
        return "PIN must be exactly 4 digits."
    if pin in SEQUENTIAL_PINS:
        return "PIN cannot be sequential (e.g., 1234). Please choose a more secure PIN."
    if len(set(pin)) == 1:
        return "PIN cannot be all the same digit (e.g., 1111). Please choose a more secure PIN."
    return None


def _expiration_date(issue_date: str) -> str:
    """A new card's expiry: the issue month four years on, on that month's last day (February: the 28th)."""
    try:
        month, _, year = issue_date.split("/")
        day = "31" if month in ("01", "03", "05", "07", "08", "10", "12") else "28" if month == "02" else "30"
        return f"{month}/{day}/{int(year) + 4}"
    except (ValueError, IndexError):
        return "12/31/2029"


def _transaction_time(record: Mapping[str, Any]) -> datetime:
    """A bank transaction's date for sorting (with or without a time); undated ones sort last."""
    text = str(record.get("date", ""))
    for layout in ("%m/%d/%Y %H:%M:%S", "%m/%d/%Y"):
        try:
            return datetime.strptime(text, layout)
        except ValueError:
            continue
    return datetime.min


class AgentDiscoverableTools:
    """The 44 discoverable agent tools; the concrete toolkit supplies `db` (a `BankDB`) and `context`."""

    @property
    def db(self) -> BankDB:
        """The bank's tables in this conversation's state (the concrete toolkit overrides this)."""
        raise NotImplementedError("the toolkit that mixes these tools in provides `db`")

    # ------------------------------------------------------------------ shared helpers

    def _lookup_text(self, table: str, field: str, value: Any) -> str:
        """tau2's query of one field, with the value pasted into a JSON text (a quote in it breaks the JSON)."""
        return self.db.query_text(table, f'{{"{field}": "{value}"}}')

    def _report(self, tool: str, head: str, title: str, found: str, empty: str) -> str:
        """A read tool's answer: success line, the tool's name, a title, then the records or the empty text."""
        body = found if _has_records(found) else f"\n{empty}"
        return "\n".join([head, "", f"Executed: {tool}", title, body])

    def _success_line(self, name: str) -> str:
        """A tool's success line: the run's profile's (tau2's text under tau2's profile), else our docstring's."""
        profile = getattr(getattr(self, "context", None), "profile", None)
        texts = None if profile is None else profile.discoverable_tools("banking_knowledge", "agent")
        info = tool_info(getattr(type(self), name), texts)
        if info.returns != DEFAULT_RETURNS:
            return info.returns
        # tau2's parser keeps the Returns section of an argument-less tool inside its description
        # and reports the default success line, so tau2's texts carry the line there.
        _, found, after = info.description.partition("Returns:")
        lines = [line.strip() for line in after.splitlines() if line.strip()]
        return lines[0] if found and lines else info.returns

    def _protocol_step(self, name: str) -> str:
        """The answer of an argument-less transfer-protocol tool: its success line, then what ran."""
        return f"{self._success_line(name)}\n\nExecuted: {name}\nArguments: (no arguments)"

    def _put(self, table: str, record_id: str, record: Record) -> None:
        """Store a record, replacing one with the same id (tau2 assigns here rather than refusing a duplicate)."""
        if not self.db.add(table, record_id, record):
            self.db.update(table, record_id, record)

    # ------------------------------------------------------------------ placeholders and transfer protocol

    @discoverable(ToolKind.WRITE)
    def example_agent_tool_0000(self) -> str:
        """A do-nothing tool that shows how hidden tools are unlocked and called.

        Returns:
            A fixed confirmation.
        """
        return "Example tool executed successfully."

    @discoverable(ToolKind.GENERIC)
    def initial_transfer_to_human_agent_0218(self) -> str:
        """Ask for a transfer to a human agent, as one step of the special transfer protocol some situations call for.

        Returns:
            Transfer started. Tell the customer that all lines are busy right now.
        """
        return self._protocol_step("initial_transfer_to_human_agent_0218")

    @discoverable(ToolKind.GENERIC)
    def initial_transfer_to_human_agent_1822(self) -> str:
        """Ask for a transfer to a human agent, as one step of the special transfer protocol some situations call for.

        Returns:
            Do not say this to the customer: the conversation is not yet at the stage where a transfer to a person is possible. Keep helping by asking about the usual situations that could settle their request.
        """
        return self._protocol_step("initial_transfer_to_human_agent_1822")

    @discoverable(ToolKind.GENERIC)
    def emergency_credit_bureau_incident_transfer_1114(self) -> str:
        """Escalate a case of the 11/14 credit bureau reporting incident, marking it for priority handling by the credit bureau correction team.

        Returns:
            The emergency escalation is recorded and the case is marked for priority handling by the credit bureau correction team. Go straight on to transfer_to_human_agents to finish the transfer.
        """
        return self._protocol_step("emergency_credit_bureau_incident_transfer_1114")

    # ------------------------------------------------------------------ credit card transactions and disputes

    @discoverable(ToolKind.WRITE)
    def update_transaction_rewards_3847(self, transaction_id: str, new_rewards_earned: str) -> str:
        """Correct the rewards recorded for a credit card transaction.

        Args:
            transaction_id (string): The credit card transaction to correct
            new_rewards_earned (string): The corrected rewards text, for example '6300 points'

        Returns:
            A confirmation naming the transaction and its new rewards.
        """
        if not transaction_id or not new_rewards_earned:
            return "Error: Missing required parameters."
        if not self.db.update(CC_TRANSACTIONS, transaction_id, {"rewards_earned": new_rewards_earned}):
            return f"Error: Transaction '{transaction_id}' not found."
        arguments = json.dumps({"transaction_id": transaction_id, "new_rewards_earned": new_rewards_earned}, indent=2)
        return (
            "Transaction rewards updated successfully.\n\n"
            "Executed: update_transaction_rewards_3847\n"
            f"Arguments: {arguments}\n"
            "Transaction updated:\n"
            f"  - Transaction ID: {transaction_id}\n"
            f"  - New Rewards: {new_rewards_earned}"
        )

    @discoverable(ToolKind.WRITE)
    def file_credit_card_transaction_dispute_4829(
        self,
        transaction_id: str,
        card_action: str,
        card_last_4_digits: str,
        full_name: str,
        user_id: str,
        phone: str,
        email: str,
        address: str,
        contacted_merchant: bool,
        purchase_date: str,
        issue_noticed_date: str,
        dispute_reason: str,
        resolution_requested: str,
        eligible_for_provisional_credit: bool,
        partial_refund_amount: float | None = None,
    ) -> str:
        """Open a formal dispute on a credit card transaction, recording whether provisional credit is given.

        Args:
            transaction_id (string): The disputed credit card transaction
            card_action (string): What happens to the card, for the record only (no replacement is ordered): 'keep_active' when the card stays in use and only the charge is disputed, 'cancel_and_reissue' when the card is being cancelled and replaced
            card_last_4_digits (string): The card's last four digits
            full_name (string): The cardholder's full legal name
            user_id (string): The customer's user id
            phone (string): A phone number to reach the customer
            email (string): An email address to reach the customer
            address (string): The customer's mailing address
            contacted_merchant (boolean): Whether the customer first tried to settle it with the merchant
            purchase_date (string): The purchase date, MM/DD/YYYY
            issue_noticed_date (string): The date the customer noticed the problem, MM/DD/YYYY
            dispute_reason (string): The reason, one of 'unauthorized_fraudulent_charge', 'duplicate_charge', 'incorrect_amount', 'goods_services_not_received', 'goods_services_not_as_described', 'canceled_subscription_still_charging', 'refund_never_processed'
            resolution_requested (string): What the customer asks for, 'full_refund' or 'partial_refund'
            eligible_for_provisional_credit (boolean): Whether the customer qualifies for provisional credit
            partial_refund_amount (number, optional): The amount asked back; needed only with 'partial_refund'

        Returns:
            The new dispute's id, reason, requested resolution and provisional credit decision.
        """
        if not transaction_id or not user_id:
            return "Error: Missing required parameters."
        problem = (
            _not_one_of("card_action", card_action, CREDIT_CARD_ACTIONS)
            or _not_one_of("dispute_reason", dispute_reason, CREDIT_DISPUTE_REASONS)
            or _not_one_of("resolution_requested", resolution_requested, RESOLUTIONS)
        )
        if problem:
            return problem
        if resolution_requested == "partial_refund" and partial_refund_amount is None:
            return "Error: partial_refund_amount is required when resolution_requested is 'partial_refund'."
        dispute_id = ids.dispute_id(user_id, transaction_id)
        record = {
            "dispute_id": dispute_id,
            "transaction_id": transaction_id,
            "user_id": user_id,
            "card_action": card_action,
            "card_last_4_digits": card_last_4_digits,
            "full_name": full_name,
            "phone": phone,
            "email": email,
            "address": address,
            "contacted_merchant": contacted_merchant,
            "purchase_date": purchase_date,
            "issue_noticed_date": issue_noticed_date,
            "dispute_reason": dispute_reason,
            "resolution_requested": resolution_requested,
            "partial_refund_amount": partial_refund_amount,
            "eligible_for_provisional_credit": eligible_for_provisional_credit,
            "provisional_credit_given": eligible_for_provisional_credit,
            "submitted_at": ids.TODAY,
            "status": "SUBMITTED",
        }
        if not self.db.add("transaction_disputes", dispute_id, record):
            return "Error: Dispute may have already been filed for this transaction."
        lines = [
            "Credit card transaction dispute filed successfully. A case has been opened and will be reviewed within 10 business days.",
            "",
            "Executed: file_credit_card_transaction_dispute_4829",
            f"Dispute ID: {dispute_id}",
            f"Transaction: {transaction_id}",
            f"Reason: {_title(dispute_reason)}",
            f"Resolution Requested: {_title(resolution_requested)}",
        ]
        if partial_refund_amount:
            lines.append(f"Partial Refund Amount: ${partial_refund_amount:.2f}")
        if eligible_for_provisional_credit:
            lines.append("Provisional Credit: ELIGIBLE - Credit will be applied within 2 business days.")
        else:
            lines.append("Provisional Credit: Not eligible at this time.")
        return "\n".join(lines)

    @discoverable(ToolKind.READ)
    def get_user_dispute_history_7291(self, user_id: str) -> str:
        """List every credit card transaction dispute a customer has filed: dispute and transaction ids, reasons, statuses and dates.

        Args:
            user_id (string): The customer's user id

        Returns:
            The customer's credit card disputes, one block per dispute.
        """
        if not user_id:
            return "Error: Missing required parameter: user_id"
        found = self._lookup_text("transaction_disputes", "user_id", user_id)
        return self._report(
            "get_user_dispute_history_7291",
            "User transaction dispute history retrieved successfully.",
            f"Transaction dispute history for user {user_id}:",
            found,
            "No transaction disputes found for this user.",
        )

    # ------------------------------------------------------------------ debit card disputes

    @discoverable(ToolKind.WRITE)
    def file_debit_card_transaction_dispute_6281(
        self,
        transaction_id: str,
        account_id: str,
        card_id: str,
        user_id: str,
        dispute_category: str,
        transaction_date: str,
        discovery_date: str,
        disputed_amount: float,
        transaction_type: str,
        card_in_possession: bool,
        pin_compromised: str,
        contacted_merchant: bool,
        police_report_filed: bool,
        written_statement_provided: bool,
        provisional_credit_eligible: bool,
        customer_max_liability_amount: float,
        card_action: str,
    ) -> str:
        """Open a Regulation E dispute on a debit card transaction; debit disputes concern the customer's own money, and liability depends on how soon it is reported. No money moves.

        Args:
            transaction_id (string): The disputed transaction
            account_id (string): The checking account the debit card draws on
            card_id (string): The debit card
            user_id (string): The customer's user id
            dispute_category (string): The kind of dispute, one of 'unauthorized_transaction', 'atm_cash_discrepancy', 'atm_deposit_not_credited', 'duplicate_charge', 'incorrect_amount', 'goods_services_not_received', 'recurring_charge_after_cancellation', 'card_present_fraud', 'card_not_present_fraud'
            transaction_date (string): The transaction date, MM/DD/YYYY
            discovery_date (string): The date the customer first noticed the problem, MM/DD/YYYY
            disputed_amount (number): The disputed amount in dollars
            transaction_type (string): How the money moved, one of 'pin_purchase', 'signature_purchase', 'online_purchase', 'atm_withdrawal', 'atm_deposit', 'recurring_payment', 'person_to_person'
            card_in_possession (boolean): Whether the customer still holds the physical card
            pin_compromised (string): Whether the PIN may be known to someone else, one of 'yes_shared', 'yes_observed', 'no', 'unknown'
            contacted_merchant (boolean): Whether the customer first tried to settle it with the merchant
            police_report_filed (boolean): Whether a police report was filed (advised for fraud above $500)
            written_statement_provided (boolean): Whether the customer gave a written account of what happened (Regulation E provisional credit requires one)
            provisional_credit_eligible (boolean): Whether the Debit Card Provisional Credit Guidelines make the customer eligible for provisional credit
            customer_max_liability_amount (number): The most the customer can be held liable for, from the Regulation E reporting-time rules and the disputed amount; -1 means unlimited
            card_action (string): What to do with the card, one of 'keep_active', 'freeze_pending_investigation', 'close_and_reissue'

        Returns:
            The new dispute's id, category, amount, card action and provisional credit decision.
        """
        required = [
            transaction_id,
            account_id,
            card_id,
            user_id,
            dispute_category,
            transaction_date,
            discovery_date,
            disputed_amount,
            transaction_type,
            pin_compromised,
            card_action,
        ]
        if not all(required):
            return "Error: Missing required parameters."
        if customer_max_liability_amount is None:
            return "Error: customer_max_liability_amount is required."
        if any(flag is None for flag in (card_in_possession, contacted_merchant, police_report_filed, written_statement_provided)):
            return "Error: card_in_possession, contacted_merchant, police_report_filed, and written_statement_provided are required boolean fields."
        problem = (
            _not_one_of("dispute_category", dispute_category, DEBIT_DISPUTE_CATEGORIES)
            or _not_one_of("transaction_type", transaction_type, DEBIT_TRANSACTION_TYPES)
            or _not_one_of("pin_compromised", pin_compromised, PIN_COMPROMISE)
            or _not_one_of("card_action", card_action, DEBIT_CARD_ACTIONS)
        )
        if problem:
            return problem
        if disputed_amount <= 0:
            return "Error: disputed_amount must be a positive number."
        dispute_id = ids.dispute_id(user_id, transaction_id)
        is_fraud = dispute_category in FRAUD_CATEGORIES
        pin_shared = pin_compromised == "yes_shared"
        record = {
            "dispute_id": dispute_id,
            "transaction_id": transaction_id,
            "account_id": account_id,
            "card_id": card_id,
            "user_id": user_id,
            "dispute_category": dispute_category,
            "transaction_date": transaction_date,
            "discovery_date": discovery_date,
            "disputed_amount": disputed_amount,
            "transaction_type": transaction_type,
            "card_in_possession": card_in_possession,
            "pin_compromised": pin_compromised,
            "contacted_merchant": contacted_merchant,
            "police_report_filed": police_report_filed,
            "written_statement_provided": written_statement_provided,
            "provisional_credit_eligible": provisional_credit_eligible,
            "provisional_credit_issued": provisional_credit_eligible,
            "provisional_credit_amount": disputed_amount if provisional_credit_eligible else None,
            "customer_max_liability_amount": customer_max_liability_amount,
            "card_action": card_action,
            "is_fraud_category": is_fraud,
            "pin_shared_voluntarily": pin_shared,
            "submitted_at": ids.TODAY,
            "status": "OPEN",
        }
        if not self.db.add("debit_card_disputes", dispute_id, record):
            return "Error: Dispute may have already been filed for this transaction."
        lines = [
            f"Dispute ID: {dispute_id}",
            f"Transaction: {transaction_id}",
            f"Account: {account_id}",
            f"Category: {_title(dispute_category)}",
            f"Disputed Amount: ${disputed_amount:.2f}",
            f"Card Action: {_title(card_action)}",
        ]
        if provisional_credit_eligible:
            lines.append(f"Provisional Credit: ISSUED - ${disputed_amount:.2f} credited within 10 business days per Regulation E.")
        else:
            lines.append("Provisional Credit: Not eligible - see Debit Card Provisional Credit Guidelines for details.")
        if pin_shared:
            lines.append("WARNING: Customer indicated PIN was shared voluntarily. This may affect liability determination.")
        if is_fraud and not police_report_filed and disputed_amount > 500:
            lines.append("RECOMMENDATION: For fraud disputes over $500, filing a police report is recommended.")
        return "\n".join(lines)

    @discoverable(ToolKind.READ)
    def get_debit_dispute_status_7483(self, user_id: str) -> str:
        """List every debit card dispute a customer has filed: dispute ids, categories, amounts, statuses and provisional credit.

        Args:
            user_id (string): The customer's user id

        Returns:
            The customer's debit card disputes, one block per dispute.
        """
        if not user_id:
            return "Error: Missing required parameter: user_id"
        found = self._lookup_text("debit_card_disputes", "user_id", user_id)
        return self._report(
            "get_debit_dispute_status_7483",
            "Debit card dispute history retrieved successfully.",
            f"Debit card dispute history for user {user_id}:",
            found,
            "No debit card disputes found for this user.",
        )

    @discoverable(ToolKind.READ)
    def get_atm_deposit_images_8473(self, transaction_id: str) -> str:
        """Show the envelope and check images the ATM captured for a deposit (Rho-Bank ATMs only).

        Args:
            transaction_id (string): The ATM deposit transaction

        Returns:
            What the deposit images show, or that none are available.
        """
        if not transaction_id:
            return "Error: Missing required parameter: transaction_id"
        txn = self.db.get(BANK_TRANSACTIONS, transaction_id)
        if txn is None:
            return f"Error: Transaction '{transaction_id}' not found."
        if txn.get("type") != "atm_deposit":
            return f"Error: Transaction '{transaction_id}' is not an ATM deposit. This tool only works for ATM deposit transactions."
        description = txn.get("description", "")
        if "RHO-BANK" not in description.upper() and "RHOBANK" not in description.upper():
            return f"Error: Transaction '{transaction_id}' is from a third-party ATM. Deposit images are only available for Rho-Bank ATM deposits. For third-party ATM disputes, a chargeback request must be submitted to the ATM network."
        head = f"ATM Deposit Image Retrieval Results\n=====================================\nTransaction ID: {transaction_id}\n"
        scan = _ATM_SCANS.get(transaction_id)
        if scan is not None:
            atm, contents, notes = scan
            return f"{head}ATM: {atm}\nDeposit Date: {txn.get('date', 'Unknown')}\n\n{contents}\n\n--- VERIFICATION NOTES ---\n{notes}\n"
        return (
            f"{head}ATM: {description}\nDeposit Date: {txn.get('date', 'Unknown')}\n"
            f"Amount Recorded: ${abs(txn.get('amount', 0)):.2f}\n\n"
            "--- IMAGE STATUS ---\nStatus: IMAGES NOT AVAILABLE\n"
            "Reason: the ATM did not capture images of this deposit, or they were older than 90 days and have been deleted.\n\n"
            "Without images, the dispute is investigated from the customer's statement and the ATM's journal alone, "
            "which can take longer.\n"
        )

    # ------------------------------------------------------------------ credit card accounts

    @discoverable(ToolKind.WRITE)
    def order_replacement_credit_card_7291(
        self,
        credit_card_account_id: str,
        user_id: str,
        shipping_address: str,
        reason: str,
        expedited_shipping: bool = False,
    ) -> str:
        """Order a replacement credit card; ordering it cancels the current card at once.

        Args:
            credit_card_account_id (string): The credit card account whose card is replaced
            user_id (string): The customer's user id
            shipping_address (string): The full address the new card is sent to
            reason (string): Why, one of 'fraud_suspected', 'lost', 'stolen', 'damaged', 'expired', 'other'
            expedited_shipping (boolean, optional): Ship in 2-3 business days instead of 7-10

        Returns:
            The order's id, shipping method and expected delivery.
        """
        if not credit_card_account_id or not user_id or not shipping_address or not reason:
            return "Error: Missing required parameters (credit_card_account_id, user_id, shipping_address, reason)."
        problem = _not_one_of("reason", reason, REPLACEMENT_REASONS)
        if problem:
            return problem
        if not _has_records(self._lookup_text(CC_ACCOUNTS, "account_id", credit_card_account_id)):
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        order_id = ids.credit_card_order_id(credit_card_account_id, user_id, reason)
        record = {
            "order_id": order_id,
            "credit_card_account_id": credit_card_account_id,
            "user_id": user_id,
            "shipping_address": shipping_address,
            "reason": reason,
            "expedited_shipping": expedited_shipping,
            "order_date": ids.TODAY,
            "status": "ORDERED",
            "old_card_cancelled": True,
        }
        if not self.db.add("credit_card_orders", order_id, record):
            return "Error: Order may have already been placed for this card replacement."
        self.db.update(CC_ACCOUNTS, credit_card_account_id, {"status": "CLOSED", "closed_date": ids.TODAY})
        return "\n".join(
            [
                f"Order ID: {order_id}",
                f"Card Account: {credit_card_account_id}",
                f"Reason: {_title(reason)}",
                f"Shipping Address: {shipping_address}",
                f"Shipping Method: {'Expedited' if expedited_shipping else 'Standard'}",
                f"Expected Delivery: {'2-3 business days' if expedited_shipping else '7-10 business days'}",
                "",
                "The old card has been cancelled for security. The new card will have the same account number but a new card number and CVV.",
            ]
        )

    @discoverable(ToolKind.READ)
    def get_pending_replacement_orders_5765(self, credit_card_account_id: str) -> str:
        """List the replacement card orders of a credit card account, to see whether one is still on its way.

        Args:
            credit_card_account_id (string): The credit card account to check

        Returns:
            The account's replacement orders, one block per order.
        """
        if not credit_card_account_id:
            return "Error: Missing required parameter: credit_card_account_id"
        found = self._lookup_text("credit_card_orders", "credit_card_account_id", credit_card_account_id)
        return self._report(
            "get_pending_replacement_orders_5765",
            "Pending replacement orders check completed.",
            f"Replacement orders for credit card account {credit_card_account_id}:",
            found,
            "No pending replacement orders found for this credit card account.",
        )

    @discoverable(ToolKind.WRITE)
    def log_credit_card_closure_reason_4521(self, credit_card_account_id: str, user_id: str, closure_reason: str) -> str:
        """Record why a customer wants to close a credit card account.

        Args:
            credit_card_account_id (string): The credit card account the customer wants closed
            user_id (string): The customer's user id
            closure_reason (string): The reason, one of 'annual_fee', 'not_using_card', 'found_better_card', 'unhappy_with_rewards', 'simplifying_finances', 'negative_experience', 'other'

        Returns:
            A confirmation of the recorded reason.
        """
        if not credit_card_account_id or not user_id or not closure_reason:
            return "Error: Missing required parameters."
        problem = _not_one_of("closure_reason", closure_reason, CLOSURE_REASONS)
        if problem:
            return problem
        record_id = ids.closure_reason_id(credit_card_account_id, user_id)
        self.db.add(
            "credit_card_closure_reasons",
            record_id,
            {
                "record_id": record_id,
                "credit_card_account_id": credit_card_account_id,
                "user_id": user_id,
                "closure_reason": closure_reason,
                "logged_at": ids.TODAY,
                "status": "LOGGED",
            },
        )
        arguments = {"credit_card_account_id": credit_card_account_id, "user_id": user_id, "closure_reason": closure_reason}
        return (
            "Closure reason logged successfully.\n\n"
            "Executed: log_credit_card_closure_reason_4521\n"
            f"Arguments: {json.dumps(arguments, indent=2)}\n"
            f"Closure reason '{closure_reason}' logged for account {credit_card_account_id}."
        )

    @discoverable(ToolKind.READ)
    def get_closure_reason_history_8293(self, credit_card_account_id: str) -> str:
        """List the closure reasons recorded for a credit card account, to see earlier attempts to close it.

        Args:
            credit_card_account_id (string): The credit card account to check

        Returns:
            The recorded closure reasons, one block per record.
        """
        if not credit_card_account_id:
            return "Error: Missing required parameter: credit_card_account_id"
        found = self._lookup_text("credit_card_closure_reasons", "credit_card_account_id", credit_card_account_id)
        return self._report(
            "get_closure_reason_history_8293",
            "Closure reason history retrieved successfully.",
            f"Closure reason history for credit card account {credit_card_account_id}:",
            found,
            "No closure reason records found for this credit card account.",
        )

    @discoverable(ToolKind.WRITE)
    def apply_statement_credit_8472(self, user_id: str, credit_card_account_id: str, amount: float, reason: str) -> str:
        """Credit an amount to a credit card account's statement.

        Args:
            user_id (string): The customer's user id
            credit_card_account_id (string): The credit card account to credit
            amount (number): The credit in dollars, for example 25.00
            reason (string): Why, one of 'goodwill_adjustment', 'promotional_credit', 'annual_fee_reversal', 'late_fee_reversal', 'interest_charge_reversal', 'dispute_resolution', 'price_match', 'retention_offer', 'error_correction', 'other'

        Returns:
            The credit transaction's id, amount and reason.
        """
        if not user_id or not credit_card_account_id or amount is None or not reason:
            return "Error: Missing required parameters (user_id, credit_card_account_id, amount, reason)."
        if amount <= 0:
            return "Error: Credit amount must be positive."
        problem = _not_one_of("reason", reason, STATEMENT_CREDIT_REASONS)
        if problem:
            return problem
        if not _has_records(self._lookup_text(CC_ACCOUNTS, "account_id", credit_card_account_id)):
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        # tau2 seeds the id with the reason where a merchant goes.
        transaction_id = ids.transaction_id(user_id, "STATEMENT_CREDIT", reason, amount, "Statement Credit")
        record = {
            "transaction_id": transaction_id,
            "user_id": user_id,
            "credit_card_account_id": credit_card_account_id,
            "credit_card_type": "N/A",
            "merchant_name": "Rho-Bank Statement Credit",
            "transaction_amount": f"-${amount:.2f}",
            "transaction_date": ids.TODAY,
            "category": "Statement Credit",
            "status": "COMPLETED",
            "rewards_earned": "0 points",
            "credit_reason": reason,
        }
        if not self.db.add(CC_TRANSACTIONS, transaction_id, record):
            return f"Error: Failed to apply statement credit. Transaction ID '{transaction_id}' may already exist."
        return (
            "Statement credit applied successfully.\n\n"
            "Executed: apply_statement_credit_8472\n"
            f"  - Transaction ID: {transaction_id}\n"
            f"  - User ID: {user_id}\n"
            f"  - Account: {credit_card_account_id}\n"
            f"  - Credit Amount: ${amount:.2f}\n"
            f"  - Reason: {_title(reason)}\n"
            f"  - Date: {ids.TODAY}"
        )

    @discoverable(ToolKind.WRITE)
    def apply_credit_card_account_flag_6147(
        self,
        credit_card_account_id: str,
        user_id: str,
        flag_type: str,
        expiration_date: str,
        reason: str,
    ) -> str:
        """Put a flag on a credit card account (a waived annual fee, a promotional APR, a rewards bonus or another modifier), in force from today until its expiry date.

        Args:
            credit_card_account_id (string): The credit card account to flag
            user_id (string): The customer's user id
            flag_type (string): The flag, one of 'annual_fee_waived', 'promotional_apr', 'rewards_bonus', 'other'
            expiration_date (string): The day the flag ends, MM/DD/YYYY
            reason (string): Why, one of 'retention_offer', 'loyalty_benefit', 'promotional', 'error_correction', 'other'

        Returns:
            The flag's id, type, dates and reason.
        """
        if not credit_card_account_id or not user_id or not flag_type or not expiration_date or not reason:
            return "Error: Missing required parameters (credit_card_account_id, user_id, flag_type, expiration_date, reason)."
        problem = _not_one_of("flag_type", flag_type, FLAG_TYPES) or _not_one_of("reason", reason, FLAG_REASONS)
        if problem:
            return problem
        if not _has_records(self._lookup_text(CC_ACCOUNTS, "account_id", credit_card_account_id)):
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        flag_id = ids.account_flag_id(credit_card_account_id, flag_type, expiration_date)
        record = {
            "flag_id": flag_id,
            "credit_card_account_id": credit_card_account_id,
            "user_id": user_id,
            "flag_type": flag_type,
            "effective_date": ids.TODAY,
            "expiration_date": expiration_date,
            "reason": reason,
            "applied_at": ids.TODAY,
            "status": "ACTIVE",
        }
        if not self.db.add("credit_card_account_flags", flag_id, record):
            return f"Error: Failed to apply account flag. Flag ID '{flag_id}' may already exist."
        return (
            "Account flag applied successfully!\n"
            f"  - Flag ID: {flag_id}\n"
            f"  - Account: {credit_card_account_id}\n"
            f"  - User ID: {user_id}\n"
            f"  - Flag Type: {_title(flag_type)}\n"
            f"  - Effective Date: {ids.TODAY}\n"
            f"  - Expiration Date: {expiration_date}\n"
            f"  - Reason: {_title(reason)}"
        )

    @discoverable(ToolKind.WRITE)
    def close_credit_card_account_7834(self, credit_card_account_id: str, user_id: str) -> str:
        """Close a credit card account for good.

        Args:
            credit_card_account_id (string): The credit card account to close
            user_id (string): The customer's user id

        Returns:
            A confirmation that the account is closed.
        """
        if not credit_card_account_id or not user_id:
            return "Error: Missing required parameters (credit_card_account_id, user_id)."
        if not _has_records(self._lookup_text(CC_ACCOUNTS, "account_id", credit_card_account_id)):
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        changes = {"status": "CLOSED", "closed_date": ids.TODAY, "closed_by": user_id}
        if not self.db.update(CC_ACCOUNTS, credit_card_account_id, changes):
            return f"Error: Failed to close credit card account '{credit_card_account_id}'."
        arguments = {"credit_card_account_id": credit_card_account_id, "user_id": user_id}
        return (
            "Credit card account closed successfully.\n\n"
            "Executed: close_credit_card_account_7834\n"
            f"Arguments: {json.dumps(arguments, indent=2)}\n"
            f"Account {credit_card_account_id} has been closed."
        )

    @discoverable(ToolKind.WRITE)
    def pay_credit_card_from_checking_9182(
        self,
        user_id: str,
        checking_account_id: str,
        credit_card_account_id: str,
        amount: float,
    ) -> str:
        """Pay down a credit card balance from the customer's Rho-Bank checking account: the checking account is debited and the card balance reduced by the same amount.

        Args:
            user_id (string): The customer's user id
            checking_account_id (string): The Rho-Bank checking account the money comes from
            credit_card_account_id (string): The credit card account the payment goes to
            amount (number): The payment in dollars, more than zero

        Returns:
            The payment and both new balances.
        """
        if not user_id or not checking_account_id or not credit_card_account_id or amount is None:
            return "Error: Missing required parameters (user_id, checking_account_id, credit_card_account_id, amount)."
        try:
            payment = float(amount)
            if payment <= 0:
                return "Error: Payment amount must be a positive number."
        except (ValueError, TypeError):
            return "Error: Invalid payment amount. Must be a positive number."
        checking = self.db.get("accounts", checking_account_id)
        if checking is None:
            return f"Error: Checking account '{checking_account_id}' not found."
        if checking.get("user_id") != user_id:
            return f"Error: Checking account '{checking_account_id}' does not belong to user '{user_id}'."
        if checking.get("class") != "checking":
            return f"Error: Account '{checking_account_id}' is not a checking account."
        available = _holdings(checking)
        if payment > available:
            return f"Error: Insufficient funds in checking account. Available balance: ${available:.2f}, requested payment: ${payment:.2f}."
        card = self.db.get(CC_ACCOUNTS, credit_card_account_id)
        if card is None:
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        if card.get("user_id") != user_id:
            return f"Error: Credit card account '{credit_card_account_id}' does not belong to user '{user_id}'."
        owed = _dollars(card.get("current_balance", "$0.00"))
        if payment > owed:
            return f"Error: Payment amount (${payment:.2f}) exceeds credit card balance (${owed:.2f}). Please specify an amount up to the outstanding balance."
        new_checking, new_owed = available - payment, owed - payment
        self.db.update("accounts", checking_account_id, {"current_holdings": f"{new_checking:.2f}"})
        self.db.update(CC_ACCOUNTS, credit_card_account_id, {"current_balance": f"${new_owed:.2f}"})
        return (
            "Payment processed successfully!\n"
            f"  - Payment Amount: ${payment:.2f}\n"
            f"  - From Checking Account: {checking_account_id}\n"
            f"  - To Credit Card Account: {credit_card_account_id}\n"
            f"  - New Checking Balance: ${new_checking:.2f}\n"
            f"  - New Credit Card Balance: ${new_owed:.2f}\n"
            "The payment has been applied immediately."
        )

    # ------------------------------------------------------------------ credit limits

    @discoverable(ToolKind.WRITE)
    def submit_credit_limit_increase_request_7392(
        self,
        credit_card_account_id: str,
        user_id: str,
        requested_increase_amount: int,
    ) -> str:
        """File a customer's request to raise a credit card's limit, for review.

        Args:
            credit_card_account_id (string): The credit card account whose limit should rise
            user_id (string): The customer's user id
            requested_increase_amount (integer): By how many whole dollars to raise the limit, for example 2500

        Returns:
            The request's id and the increase asked for.
        """
        if not credit_card_account_id or not user_id or requested_increase_amount is None:
            return "Error: Missing required parameters."
        try:
            asked = float(requested_increase_amount)
        except (TypeError, ValueError):
            return "Error: Invalid requested_increase_amount. Must be a whole number."
        if not asked.is_integer():
            return "Error: Invalid requested_increase_amount. Must be a whole number of dollars."
        increase = int(asked)
        if increase <= 0:
            return "Error: Requested increase amount must be positive."
        card = self.db.get(CC_ACCOUNTS, credit_card_account_id)
        if card is None:
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        if card.get("user_id") != user_id:
            return f"Error: Credit card account '{credit_card_account_id}' does not belong to user '{user_id}'."
        request_id = ids.credit_limit_request_id(credit_card_account_id, user_id, increase)
        record = {
            "request_id": request_id,
            "credit_card_account_id": credit_card_account_id,
            "user_id": user_id,
            "requested_increase_amount": increase,
            "submitted_at": ids.TODAY,
            "status": "PENDING",
        }
        if not self.db.add(CLI_REQUESTS, request_id, record):
            return "Error: A similar request may already exist."
        return (
            "Credit limit increase request submitted successfully.\n\n"
            "Executed: submit_credit_limit_increase_request_7392\n"
            f"  - Request ID: {request_id}\n"
            f"  - Account: {credit_card_account_id}\n"
            f"  - Requested Increase: ${increase:,}\n"
            "  - Status: PENDING"
        )

    @discoverable(ToolKind.READ)
    def get_credit_limit_increase_history_4829(self, credit_card_account_id: str) -> str:
        """List a credit card account's earlier credit limit increase requests, with their dates, amounts and outcomes.

        Args:
            credit_card_account_id (string): The credit card account to check

        Returns:
            The account's limit increase requests, one block per request.
        """
        if not credit_card_account_id:
            return "Error: Missing required parameter: credit_card_account_id"
        found = self._lookup_text(CLI_REQUESTS, "credit_card_account_id", credit_card_account_id)
        return self._report(
            "get_credit_limit_increase_history_4829",
            "Credit limit increase history retrieved.",
            f"Credit limit increase history for account {credit_card_account_id}:",
            found,
            "No credit limit increase requests found for this account.",
        )

    @discoverable(ToolKind.READ)
    def get_payment_history_6183(self, credit_card_account_id: str, months: int) -> str:
        """Show a credit card account's latest payments and how many in a row were on time.

        Args:
            credit_card_account_id (string): The credit card account to check
            months (integer): How many months of payments to show

        Returns:
            The payments, newest first, with the count of consecutive on-time ones.
        """
        if not credit_card_account_id or months is None:
            return "Error: Missing required parameters (credit_card_account_id, months)."
        try:
            count = int(months)
            if count <= 0:
                return "Error: months must be a positive integer."
        except (ValueError, TypeError):
            return "Error: Invalid months value. Must be a positive integer."
        payments = [p for _, p in self.db.table_items("payment_history") if p.get("credit_card_account_id") == credit_card_account_id]
        if not payments:
            return f"No payment history found for account '{credit_card_account_id}'."
        # Dates are MM/DD/YYYY compared as text, as tau2 compares them.
        latest = sorted(payments, key=lambda p: p.get("payment_date") or "", reverse=True)[:count]
        on_time = 0
        for payment in latest:
            if payment.get("status") != "ON_TIME":
                break
            on_time += 1
        lines = [f"Payment history for account '{credit_card_account_id}' (last {count} months):", f"Consecutive on-time payments: {on_time}"]
        lines += [f"\n  - Payment Date: {p.get('payment_date')}\n    Amount: {p.get('amount')}\n    Status: {p.get('status')}" for p in latest]
        return "\n".join(lines)

    @discoverable(ToolKind.WRITE)
    def approve_credit_limit_increase_5847(self, credit_card_account_id: str, user_id: str, new_credit_limit: int) -> str:
        """Approve a credit limit increase and set the card's new limit at once.

        Args:
            credit_card_account_id (string): The credit card account
            user_id (string): The customer's user id
            new_credit_limit (integer): The new total limit in dollars, for example 7500

        Returns:
            The previous and new limits.
        """
        if not credit_card_account_id or not user_id or new_credit_limit is None:
            return "Error: Missing required parameters."
        card = self.db.get(CC_ACCOUNTS, credit_card_account_id)
        if card is None:
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        if card.get("user_id") != user_id:
            return f"Error: Credit card account '{credit_card_account_id}' does not belong to user '{user_id}'."
        if self._open_dispute(user_id) or self._replacement_under_way(credit_card_account_id) or _not_in_good_standing(card):
            return "Error: Credit limit increase request cannot be approved at this time."
        previous = _dollars(card.get("credit_limit", "$0.00"))
        new_limit = float(new_credit_limit)
        self.db.update(CC_ACCOUNTS, credit_card_account_id, {"credit_limit": f"${new_limit:.2f}"})
        request_id = ids.credit_limit_request_id(credit_card_account_id, user_id, new_limit - previous)
        self.db.add(
            CLI_REQUESTS,
            request_id,
            {
                "request_id": request_id,
                "credit_card_account_id": credit_card_account_id,
                "user_id": user_id,
                "previous_limit": f"${previous:.2f}",
                "new_limit": f"${new_limit:.2f}",
                "increase_amount": f"${new_limit - previous:.2f}",
                "decision_date": ids.TODAY,
                "status": "APPROVED",
            },
        )
        return (
            "Credit limit increase approved!\n"
            f"  - Account: {credit_card_account_id}\n"
            f"  - Previous Limit: ${previous:.2f}\n"
            f"  - New Limit: ${new_limit:.2f}\n"
            f"  - Increase: ${new_limit - previous:.2f}\n"
            f"  - Effective Date: {ids.TODAY}\n"
            "The customer will receive a confirmation email."
        )

    def _open_dispute(self, user_id: str) -> bool:
        """True when the user has a credit card dispute still SUBMITTED, UNDER_REVIEW or PENDING."""
        return any(
            d.get("user_id") == user_id and d.get("status") in ("SUBMITTED", "UNDER_REVIEW", "PENDING")
            for _, d in self.db.table_items("transaction_disputes")
        )

    def _replacement_under_way(self, credit_card_account_id: str) -> bool:
        """True when a replacement card of the account is PENDING, PROCESSING or SHIPPED (ORDERED is not counted)."""
        return any(
            o.get("credit_card_account_id") == credit_card_account_id and o.get("status") in ("PENDING", "PROCESSING", "SHIPPED")
            for _, o in self.db.table_items("credit_card_orders")
        )

    @discoverable(ToolKind.WRITE)
    def deny_credit_limit_increase_5848(self, credit_card_account_id: str, user_id: str, denial_reason: str) -> str:
        """Turn down a customer's credit limit increase request.

        Args:
            credit_card_account_id (string): The credit card account
            user_id (string): The customer's user id
            denial_reason (string): Why, one of 'insufficient_account_age', 'cooldown_period_active', 'pending_disputes', 'pending_replacement_card', 'past_due_balance', 'high_utilization', 'insufficient_payment_history', 'requested_amount_exceeds_limit', 'other'

        Returns:
            A confirmation of the denial and its reason.
        """
        if not credit_card_account_id or not user_id or not denial_reason:
            return "Error: Missing required parameters."
        if denial_reason not in DENIAL_REASONS:
            return f"Error: Invalid denial_reason. Must be one of: {', '.join(DENIAL_REASONS)}"
        if self.db.get(CC_ACCOUNTS, credit_card_account_id) is None:
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        request_id = ids.credit_limit_request_id(credit_card_account_id, user_id, 0.0)
        self.db.add(
            CLI_REQUESTS,
            request_id,
            {
                "request_id": request_id,
                "credit_card_account_id": credit_card_account_id,
                "user_id": user_id,
                "denial_reason": denial_reason,
                "decision_date": ids.TODAY,
                "status": "DENIED",
            },
        )
        return (
            "Credit limit increase request denied.\n"
            f"  - Account: {credit_card_account_id}\n"
            f"  - Denial Reason: {denial_reason}\n"
            f"  - Date: {ids.TODAY}\n"
            "The customer will receive a notification explaining the denial."
        )

    # ------------------------------------------------------------------ bank accounts

    @discoverable(ToolKind.WRITE)
    def open_bank_account_4821(self, user_id: str, account_type: str, account_class: str) -> str:
        """Open a new bank account for a customer who meets its eligibility rules.

        Args:
            user_id (string): The customer's user id
            account_type (string): The kind of account, one of 'checking' (personal), 'savings' (personal), 'business_checking', 'business_savings'
            account_class (string): The account's full official class name

        Returns:
            The new account's id, type, class and opening date.
        """
        if not user_id or not account_type or not account_class:
            return "Error: Missing required parameters."
        problem = _not_one_of("account_type", account_type, BANK_ACCOUNT_TYPES)
        if problem:
            return problem
        owned = [acc for _, acc in self.db.table_items("accounts") if acc.get("user_id") == user_id]
        if not _eligible_for(account_type, owned):
            return "Error: Account eligibility requirements not met."
        account_id = ids.bank_account_id(user_id, account_type, account_class)
        record = {
            "account_id": account_id,
            "user_id": user_id,
            "account_type": account_type,
            "account_class": account_class,
            "current_holdings": "0.00",
            "status": "OPEN",
            "date_opened": ids.TODAY,
        }
        if not self.db.add("accounts", account_id, record):
            return f"Failed to open account: Account ID '{account_id}' may already exist."
        return (
            "Bank account opened successfully!\n"
            f"  - Account ID: {account_id}\n"
            f"  - User ID: {user_id}\n"
            f"  - Account Type: {account_type}\n"
            f"  - Account Class: {account_class}\n"
            "  - Status: OPEN\n"
            "  - Initial Balance: $0.00\n"
            f"  - Date Opened: {ids.TODAY}"
        )

    @discoverable(ToolKind.WRITE)
    def close_bank_account_7392(
        self,
        account_id: str,
        reason: str = "Customer requested closure",
        waive_early_closure_fee: bool = False,
    ) -> str:
        """Close a checking or savings account; its balance must come to zero once any early-closure fee is taken.

        Args:
            account_id (string): The bank account to close
            reason (string, optional): Why the account is closed
            waive_early_closure_fee (boolean, optional): Waive the fee for closing an account soon after opening it

        Returns:
            A confirmation with the closing date and reason.
        """
        if not account_id:
            return "Error: Missing required parameter (account_id)."
        account = self.db.get("accounts", account_id)
        if account is None:
            return f"Error: Account '{account_id}' not found."
        if account.get("status") == "CLOSED":
            return f"Error: Account '{account_id}' is already closed."
        balance = _holdings(account)
        fee = 0.0 if waive_early_closure_fee else _early_closure_fee(account)
        if fee and balance < fee:
            return "Error: Account unable to be closed."
        if balance - fee != 0:
            return f"Error: Account balance must be $0.00 before closing. Current balance: ${balance:.2f}"
        self.db.update(
            "accounts",
            account_id,
            {
                "status": "CLOSED",
                "date_closed": ids.TODAY,
                "closure_reason": reason,
                "early_closure_fee_waived": waive_early_closure_fee,
            },
        )
        return (
            "Bank account closed successfully!\n"
            f"  - Account ID: {account_id}\n"
            f"  - Account Type: {account.get('account_type', 'N/A')}\n"
            f"  - Account Class: {account.get('account_class', 'N/A')}\n"
            "  - Status: CLOSED\n"
            f"  - Date Closed: {ids.TODAY}\n"
            f"  - Reason: {reason}\n"
            f"  - Early Closure Fee Waived: {'Yes' if waive_early_closure_fee else 'No'}"
        )

    @discoverable(ToolKind.READ)
    def get_all_user_accounts_by_user_id_3847(self, user_id: str) -> str:
        """List all of a customer's accounts: checking, savings and credit cards.

        Args:
            user_id (string): The customer's user id

        Returns:
            The customer's bank accounts, then their credit card accounts.
        """
        if not user_id:
            return "Error: Missing required parameter: user_id"
        bank = self._lookup_text("accounts", "user_id", user_id)
        cards = self._lookup_text(CC_ACCOUNTS, "user_id", user_id)
        return "\n".join(
            [
                "User accounts retrieved successfully.",
                "",
                "Executed: get_all_user_accounts_by_user_id_3847",
                f"Accounts for user {user_id}:",
                "",
                "Bank Accounts:",
                bank if _has_records(bank) else "  No bank accounts found.",
                "\nCredit Card Accounts:",
                cards if _has_records(cards) else "  No credit card accounts found.",
            ]
        )

    @discoverable(ToolKind.WRITE)
    def transfer_funds_between_bank_accounts_7291(self, source_account_id: str, destination_account_id: str, amount: float) -> str:
        """Move money from one bank account to another.

        Args:
            source_account_id (string): The account the money leaves
            destination_account_id (string): The account the money goes to
            amount (number): The amount in US dollars

        Returns:
            The amount moved and both new balances.
        """
        if not source_account_id or not destination_account_id or amount is None:
            return "Error: Missing required parameters (source_account_id, destination_account_id, amount)."
        try:
            value = float(amount)
        except (ValueError, TypeError):
            return f"Error: Invalid amount '{amount}'. Must be a number."
        if value <= 0:
            return "Error: Transfer amount must be positive."
        if source_account_id == destination_account_id:
            return "Error: Source and destination accounts cannot be the same."
        source = self.db.get("accounts", source_account_id)
        if source is None:
            return f"Error: Source account '{source_account_id}' not found."
        target = self.db.get("accounts", destination_account_id)
        if target is None:
            return f"Error: Destination account '{destination_account_id}' not found."
        if source.get("status") not in LIVE_STATUSES:
            return f"Error: Source account '{source_account_id}' is not active."
        if target.get("status") not in LIVE_STATUSES:
            return f"Error: Destination account '{destination_account_id}' is not active."
        available = _holdings(source)
        if available < value:
            return f"Error: Insufficient funds. Source account balance is ${available:.2f}, but transfer amount is ${value:.2f}."
        new_source, new_target = available - value, _holdings(target) + value
        self.db.update("accounts", source_account_id, {"current_holdings": f"${new_source:.2f}"})
        self.db.update("accounts", destination_account_id, {"current_holdings": f"${new_target:.2f}"})
        return (
            "Transfer completed successfully!\n"
            f"  - Amount: ${value:.2f}\n"
            f"  - From: {source_account_id} (new balance: ${new_source:.2f})\n"
            f"  - To: {destination_account_id} (new balance: ${new_target:.2f})"
        )

    @discoverable(ToolKind.WRITE)
    def apply_checking_account_credit_5829(self, account_id: str, amount: float, credit_type: str) -> str:
        """Credit money to a customer's checking account, for a missing rebate or a fee charged by mistake.

        Args:
            account_id (string): The checking account to credit
            amount (number): The credit in dollars, more than zero
            credit_type (string): 'rebate_credit' for a rebate that never arrived, 'fee_refund' for a wrongly charged fee

        Returns:
            The credit transaction's id and the new balance.
        """
        return self._credit_account(account_id, amount, credit_type, checking=True)

    @discoverable(ToolKind.WRITE)
    def apply_savings_account_credit_6831(self, account_id: str, amount: float, credit_type: str) -> str:
        """Credit money to a customer's savings account, to correct interest, refund a fee or as a goodwill gesture.

        Args:
            account_id (string): The savings account to credit
            amount (number): The credit in dollars, more than zero
            credit_type (string): 'interest_correction' for a wrong APY or interest calculation, 'fee_refund' for a wrongly charged fee, 'goodwill_credit' for a customer service gesture

        Returns:
            The credit transaction's id and the new balance.
        """
        return self._credit_account(account_id, amount, credit_type, checking=False)

    def _credit_account(self, account_id: str, amount: Any, credit_type: str, *, checking: bool) -> str:
        """Both credit tools: checking writes the balance with '$' and savings without, as tau2 does."""
        if not account_id or amount is None or not credit_type:
            return "Error: Missing required parameters."
        try:
            value = float(amount)
        except (TypeError, ValueError):
            return "Error: Invalid credit amount. Must be a number."
        if value <= 0:
            return "Error: Credit amount must be positive."
        problem = _not_one_of("credit_type", credit_type, CHECKING_CREDIT_TYPES if checking else SAVINGS_CREDIT_TYPES)
        if problem:
            return problem
        account = self.db.get("accounts", account_id)
        if account is None:
            return f"Error: Account '{account_id}' not found."
        if checking and account.get("class", "").lower() != "checking":
            return f"Error: Account '{account_id}' is not a checking account. Credits can only be applied to checking accounts."
        if not checking and account.get("class", "").lower() not in ("saving", "savings"):
            return f"Error: Account '{account_id}' is not a savings account. This tool only applies to savings accounts."
        if account.get("status") not in LIVE_STATUSES:
            return f"Error: Account '{account_id}' is not active."
        previous = _holdings(account)
        new_balance = previous + value
        self.db.update("accounts", account_id, {"current_holdings": f"${new_balance:.2f}" if checking else f"{new_balance:.2f}"})
        make_id = ids.checking_credit_transaction_id if checking else ids.savings_credit_transaction_id
        transaction_id = make_id(account_id, credit_type, value)
        self._put(
            BANK_TRANSACTIONS,
            transaction_id,
            {
                "transaction_id": transaction_id,
                "account_id": account_id,
                "date": ids.TODAY,
                "description": CREDIT_DESCRIPTIONS[credit_type],
                "amount": value,
                "type": credit_type,
                "status": "posted",
            },
        )
        return (
            "\nCredit applied successfully!\n"
            f"  - Transaction ID: {transaction_id}\n"
            f"  - Account: {account_id}\n"
            f"  - Credit Type: {credit_type}\n"
            f"  - Amount: ${value:.2f}\n"
            f"  - Previous Balance: ${previous:.2f}\n"
            f"  - New Balance: ${new_balance:.2f}"
        )

    @discoverable(ToolKind.WRITE)
    def submit_interest_discrepancy_report_7294(
        self,
        account_id: str,
        user_id: str,
        expected_apy: float,
        actual_apy: float,
        amount_difference: float,
    ) -> str:
        """Send the backend team a report that the interest credited to an account does not match the APY it should earn, for investigation.

        Args:
            account_id (string): The savings account with the discrepancy
            user_id (string): The customer's user id
            expected_apy (number): The APY in percent the customer should have earned, for example 2.775
            actual_apy (number): The APY in percent actually applied, for example 2.5
            amount_difference (number): The difference in dollars between the interest due and the interest credited

        Returns:
            The report's id and the figures reported.
        """
        if not account_id or not user_id or expected_apy is None or actual_apy is None or amount_difference is None:
            return "Error: Missing required parameters."
        try:
            expected, actual, difference = float(expected_apy), float(actual_apy), float(amount_difference)
        except (ValueError, TypeError):
            return "Error: expected_apy, actual_apy, and amount_difference must be numbers."
        account = self.db.get("accounts", account_id)
        if account is None:
            return f"Error: Account '{account_id}' not found."
        user = self.db.get("users", user_id)
        if user is None:
            return f"Error: User '{user_id}' not found."
        # tau2 writes the report to a table its database does not have, so nothing is stored.
        report_id = ids.interest_report_id(account_id, user_id, expected, actual)
        return (
            "\nInterest Discrepancy Report Submitted Successfully!\n"
            f"  - Report ID: {report_id}\n"
            f"  - Account: {account_id} ({account.get('level', 'Unknown')})\n"
            f"  - Customer: {user.get('name', 'Unknown')}\n"
            f"  - Expected APY: {expected}%\n"
            f"  - Actual APY: {actual}%\n"
            f"  - APY Difference: {round(expected - actual, 4)}%\n"
            f"  - Amount Difference: ${difference:.2f}\n"
            "  - Status: PENDING_REVIEW\n"
            "\nThe backend team will investigate this discrepancy and ensure correct APY calculations are applied going forward."
        )

    @discoverable(ToolKind.READ)
    def get_bank_account_transactions_9173(self, account_id: str) -> str:
        """List a bank account's transactions, newest first (transactions of the same day keep their stored order).

        Args:
            account_id (string): The bank account

        Returns:
            The account's transactions, one block per transaction.
        """
        if not account_id:
            return "Error: Missing required parameter: account_id"
        if self.db.get("accounts", account_id) is None:
            return f"Error: Account '{account_id}' not found."
        rows = self.db.query(BANK_TRANSACTIONS, {"account_id": account_id})
        rows = sorted(rows, key=lambda row: _transaction_time(row[1]), reverse=True)
        body = self.db.format_records(BANK_TRANSACTIONS, rows) if rows else "\nNo transactions found for this account."
        return "\n".join(
            [
                "Bank account transactions retrieved successfully.",
                "",
                "Executed: get_bank_account_transactions_9173",
                f"Transactions for account {account_id}:",
                body,
            ]
        )

    # ------------------------------------------------------------------ debit cards

    @discoverable(ToolKind.WRITE)
    def order_debit_card_5739(
        self,
        account_id: str,
        user_id: str,
        delivery_option: str,
        delivery_fee: float,
        card_design: str,
        design_fee: float,
        shipping_address: str,
        excess_replacement_fee: float | None = None,
    ) -> str:
        """Order a debit card for a customer's checking account; the fees are taken from that account and the card arrives inactive.

        Args:
            account_id (string): The checking account the card draws on
            user_id (string): The customer's user id
            delivery_option (string): How fast to ship: STANDARD, EXPEDITED or RUSH
            delivery_fee (number): The delivery fee to charge, in dollars
            card_design (string): The design: CLASSIC, PREMIUM or CUSTOM
            design_fee (number): The design fee to charge, in dollars
            shipping_address (string): The full address the card is sent to
            excess_replacement_fee (number, optional): The fee for going over the replacement allowance, when it applies

        Returns:
            The order's and the new card's ids, delivery details and fees charged.
        """
        fees = _debit_order_fees(delivery_fee, design_fee, excess_replacement_fee)
        if isinstance(fees, str):
            return fees
        delivery, design, excess = fees
        if delivery is None or design is None or not all([account_id, user_id, delivery_option, card_design, shipping_address]):
            return "Error: Missing required parameters. Required: account_id, user_id, delivery_option, delivery_fee, card_design, design_fee, shipping_address."
        if delivery_option.upper() not in DELIVERY_TIMES:
            return f"Error: Invalid delivery_option. Must be one of: {list(DELIVERY_TIMES)}"
        if card_design.upper() not in CARD_DESIGNS:
            return f"Error: Invalid card_design. Must be one of: {list(CARD_DESIGNS)}"
        option, style = delivery_option.upper(), card_design.upper()
        account = self.db.get("accounts", account_id)
        if account is None:
            return f"Error: Account '{account_id}' not found."
        balance = _plain_balance(account)
        total = delivery + design + excess
        problem = self._debit_order_problem(account_id, account, user_id, balance) or _fees_problem(total, balance)
        if problem:
            return problem
        order_id = ids.debit_card_order_id(account_id, user_id, option)
        order = {
            "order_id": order_id,
            "account_id": account_id,
            "user_id": user_id,
            "delivery_option": option,
            "card_design": style,
            "shipping_address": shipping_address,
            "delivery_fee": delivery,
            "design_fee": design,
            "excess_replacement_fee": excess,
            "total_fee": total,
            "order_date": ids.TODAY,
            "expected_delivery": DELIVERY_TIMES[option],
            "status": "PENDING",
        }
        if not self.db.add("debit_card_orders", order_id, order):
            return "Error: Failed to create debit card order. Order may already exist."
        fee_parts = _fee_parts(delivery, design, excess)
        if total > 0:
            self._charge_order_fees(account_id, order_id, balance - total, total, fee_parts)
        card_id = self._issue_debit_card(account_id, user_id, style)
        lines = [
            "Debit Card Order Confirmed",
            f"Order ID: {order_id}",
            f"Card ID: {card_id}",
            f"Linked Account: {account_id}",
            f"Delivery Option: {option}",
            f"Card Design: {style}",
            f"Shipping Address: {shipping_address}",
            f"Expected Delivery: {DELIVERY_TIMES[option]}",
            "",
            "Note: Card will arrive with status PENDING. Customer must call to activate after receiving the card.",
        ]
        if total > 0:
            charged = ", ".join(f"{label}: ${amount}" for label, amount in fee_parts)
            lines.append(f"Total Fees: ${total:.2f} ({charged}) - CHARGED to account {account_id}")
            lines.append(f"New Account Balance: ${balance - total:.2f}")
        else:
            lines.append("Total Fees: $0 (No additional charges)")
        return "\n".join(lines)

    def _debit_order_problem(self, account_id: str, account: Record, user_id: str, balance: float) -> str | None:
        """Why a debit card cannot be ordered on this account (kind, status, owner, balance, pending order, active card)."""
        if account.get("class") != "checking":
            return f"Error: Debit cards can only be ordered for checking accounts. Account '{account_id}' is a {account.get('class')} account."
        if account.get("status") != "OPEN":
            return f"Error: Account must be OPEN. Account '{account_id}' has status: {account.get('status')}"
        if account.get("user_id") != user_id:
            return f"Error: Account '{account_id}' does not belong to user '{user_id}'."
        if balance < 25.0:
            return f"Error: Account must have a minimum balance of $25. Current balance: ${balance:.2f}"
        if any(o.get("account_id") == account_id and o.get("status") == "PENDING" for _, o in self.db.table_items("debit_card_orders")):
            return f"Error: There is already a pending debit card order for account '{account_id}'."
        if any(c.get("account_id") == account_id and c.get("status") == "ACTIVE" for _, c in self.db.table_items("debit_cards")):
            return f"Error: Account '{account_id}' already has an active debit card. Maximum 1 active card per checking account."
        return None

    def _charge_order_fees(self, account_id: str, order_id: str, new_balance: float, total: float, fee_parts: list[tuple[str, str]]) -> None:
        """Take a debit card order's fees from the account and post them as one transaction."""
        self.db.update("accounts", account_id, {"current_holdings": f"{new_balance:.2f}"})
        fee_id = ids.debit_card_fee_transaction_id(order_id)
        self.db.add(
            BANK_TRANSACTIONS,
            fee_id,
            {
                "transaction_id": fee_id,
                "account_id": account_id,
                "date": ids.TODAY,
                "description": "DEBIT CARD ORDER FEE - " + ", ".join(f"{label} ${amount}" for label, amount in fee_parts),
                "amount": -total,
                "type": "debit_card_fee",
                "status": "posted",
            },
        )

    def _issue_debit_card(self, account_id: str, user_id: str, card_design: str) -> str:
        """Add the ordered card, PENDING until activated, and return its id (an existing id is left as it is)."""
        card_id = ids.debit_card_id(account_id, user_id, ids.TODAY)
        last_4, cvv = ids.debit_card_numbers(card_id)
        user = self.db.get("users", user_id)
        holder = "CARDHOLDER" if user is None else user.get("name", "CARDHOLDER").upper()
        self.db.add(
            "debit_cards",
            card_id,
            {
                "card_id": card_id,
                "account_id": account_id,
                "user_id": user_id,
                "cardholder_name": holder,
                "last_4_digits": last_4,
                "cvv": cvv,
                "status": "PENDING",
                "issue_date": ids.TODAY,
                "expiration_date": _expiration_date(ids.TODAY),
                "card_design": card_design,
                "issue_reason": self._next_issue_reason(account_id),
            },
        )
        return card_id

    def _next_issue_reason(self, account_id: str) -> str:
        """Why a new card is issued: the first CLOSED card's loss, theft or fraud, else first_card (new_account with no card yet)."""
        cards = [c for _, c in self.db.table_items("debit_cards") if c.get("account_id") == account_id]
        closed = next((c for c in cards if c.get("status") == "CLOSED"), None)
        if closed is not None:
            reason = closed.get("closure_reason", "first_card")
            if reason in ("lost", "stolen", "fraud", "fraud_suspected"):
                return "fraud" if reason == "fraud_suspected" else reason
            return "first_card"
        return "first_card" if cards else "new_account"

    @discoverable(ToolKind.WRITE)
    def activate_debit_card_8291(self, card_id: str, last_4_digits: str, expiration_date: str, cvv: str, pin: str) -> str:
        """Activate a customer's FIRST debit card on a checking account (issue reason 'new_account' or 'first_card'); replacement and reissued cards have their own activation tools.

        Args:
            card_id (string): The debit card to activate
            last_4_digits (string): The card number's last four digits, to verify the card
            expiration_date (string): The expiry date printed on the card, MM/YY
            cvv (string): The 3-digit security code on the back
            pin (string): The 4-digit PIN the customer chooses

        Returns:
            A confirmation that the new card is active.
        """
        error, card = self._activation_problem(card_id, last_4_digits, expiration_date, cvv, pin, "activate_debit_card_8291")
        if error or card is None:
            return error or ""
        retired = self._activate(card_id, card, {"status": "DEACTIVATED", "deactivated_date": ids.TODAY, "deactivation_reason": "New card activated"})
        lines = [
            "New Debit Card Activation Successful",
            f"Card ID: {card_id}",
            "Status: ACTIVE",
            f"Activation Date: {ids.TODAY}",
            "",
            "Your card is now ready to use at any ATM or point of sale terminal.",
            "For security, please sign the back of your card.",
        ]
        if retired:
            lines.append(f"\nNote: Previous card(s) have been deactivated: {', '.join(retired)}")
        return "\n".join(lines)

    @discoverable(ToolKind.WRITE)
    def activate_debit_card_8292(self, card_id: str, last_4_digits: str, expiration_date: str, cvv: str, pin: str) -> str:
        """Activate a REPLACEMENT debit card, one that replaces a card lost, stolen or suspected of fraud (issue reason 'lost', 'stolen' or 'fraud'); new and reissued cards have their own activation tools.

        Args:
            card_id (string): The debit card to activate
            last_4_digits (string): The card number's last four digits, to verify the card
            expiration_date (string): The expiry date printed on the card, MM/YY
            cvv (string): The 3-digit security code on the back
            pin (string): The 4-digit PIN the customer chooses

        Returns:
            A confirmation that the replacement card is active.
        """
        error, card = self._activation_problem(card_id, last_4_digits, expiration_date, cvv, pin, "activate_debit_card_8292")
        if error or card is None:
            return error or ""
        reason = card.get("issue_reason", "lost")
        retired = self._activate(
            card_id, card, {"status": "DEACTIVATED", "deactivated_date": ids.TODAY, "deactivation_reason": f"Replacement card activated ({reason})"}
        )
        lines = [
            "Replacement Debit Card Activation Successful",
            f"Card ID: {card_id}",
            f"Replacement Reason: {_title(reason)}",
            "Status: ACTIVE",
            f"Activation Date: {ids.TODAY}",
            "",
            "Your replacement card is now ready to use.",
            "",
            "IMPORTANT SECURITY REMINDERS:",
            "- Please review your recent transactions for any unauthorized charges",
            "- Report any suspicious activity immediately",
        ]
        if reason == "fraud":
            lines.append("- Since fraud was suspected, we recommend changing your online banking password")
        if retired:
            lines.append(f"\nPrevious card(s) have been deactivated for security: {', '.join(retired)}")
        return "\n".join(lines)

    @discoverable(ToolKind.WRITE)
    def activate_debit_card_8293(self, card_id: str, last_4_digits: str, expiration_date: str, cvv: str, pin: str) -> str:
        """Activate a REISSUED debit card, one sent because the old card expired or was damaged, for a design upgrade or on the bank's initiative (issue reason 'expired', 'damaged', 'upgrade' or 'bank_reissue'); new and replacement cards have their own activation tools.

        Args:
            card_id (string): The debit card to activate
            last_4_digits (string): The card number's last four digits, to verify the card
            expiration_date (string): The expiry date printed on the card, MM/YY
            cvv (string): The 3-digit security code on the back
            pin (string): The 4-digit PIN the customer chooses

        Returns:
            A confirmation that the reissued card is active.
        """
        error, card = self._activation_problem(card_id, last_4_digits, expiration_date, cvv, pin, "activate_debit_card_8293")
        if error or card is None:
            return error or ""
        reason = card.get("issue_reason", "expired")
        kept = self._activate(
            card_id, card, {"status": "GRACE_PERIOD", "grace_period_ends": ids.TODAY, "deactivation_reason": f"Reissued card activated ({reason})"}
        )
        lines = [
            "Reissued Debit Card Activation Successful",
            f"Card ID: {card_id}",
            f"Reissue Reason: {_title(reason)}",
            "Status: ACTIVE",
            f"Activation Date: {ids.TODAY}",
            "",
            "Your reissued card is now ready to use.",
        ]
        if kept:
            lines.append(f"\nNote: Your previous card(s) ({', '.join(kept)}) will remain active for 24 hours as a grace period.")
            lines.append("After 24 hours, the old card(s) will be automatically deactivated.")
        if reason in ("expired", "bank_reissue"):
            lines.append("\nReminder: If your card number changed, please update any recurring payments with your new card details.")
        return "\n".join(lines)

    def _activation_problem(
        self, card_id: str, last_4_digits: str, expiration_date: str, cvv: str, pin: str, tool: str
    ) -> tuple[str | None, Record | None]:
        """The three activation tools' checks, in tau2's order: (error text, None) or (None, the card)."""
        if not all([card_id, last_4_digits, expiration_date, cvv, pin]):
            return "Error: Missing required parameters. Required: card_id, last_4_digits, expiration_date, cvv, pin.", None
        pin_error = _pin_problem(pin)
        if pin_error:
            return f"Error: {pin_error}", None
        if not cvv.isdigit() or len(cvv) != 3:
            return "Error: CVV must be exactly 3 digits.", None
        if not last_4_digits.isdigit() or len(last_4_digits) != 4:
            return "Error: Last 4 digits must be exactly 4 digits.", None
        card = self.db.get("debit_cards", card_id)
        if card is None:
            return f"Error: Debit card '{card_id}' not found.", None
        return self._card_activation_problem(card_id, card, last_4_digits, tool), card

    def _card_activation_problem(self, card_id: str, card: Record, last_4_digits: str, tool: str) -> str | None:
        """Why this card cannot be activated by this tool (issue reason, status, digits, linked account), or None."""
        reason = card.get("issue_reason", "new_account")
        if ACTIVATION_TOOL_BY_REASON.get(reason, "unknown") != tool:
            right = ACTIVATION_TOOL_BY_REASON.get(reason, "unknown")
            return f"Error: Wrong activation tool. This card has issue_reason='{reason}'. Please use {right} instead of {tool}."
        if card.get("status") == "ACTIVE":
            return f"Error: Debit card '{card_id}' is already active."
        if card.get("status") != "PENDING":
            return f"Error: Debit card '{card_id}' cannot be activated. Current status: {card.get('status')}. Only PENDING cards can be activated."
        if card.get("last_4_digits") != last_4_digits:
            return "Error: Card verification failed. The last 4 digits do not match our records."
        account_id = card.get("account_id")
        account = self.db.get("accounts", account_id) if account_id else None
        if account is not None and account.get("status") != "OPEN":
            return f"Error: The linked checking account '{account_id}' is no longer open. Card cannot be activated."
        return None

    def _activate(self, card_id: str, card: Record, retire: dict[str, Any]) -> list[str]:
        """Make the card ACTIVE and apply `retire` to the account's other ACTIVE cards; their ids, in stored order."""
        self.db.update("debit_cards", card_id, {"status": "ACTIVE", "activated_date": ids.TODAY})
        account_id = card.get("account_id")
        others = [
            other_id
            for other_id, other in self.db.table_items("debit_cards")
            if other_id != card_id and other.get("account_id") == account_id and other.get("status") == "ACTIVE"
        ]
        for other_id in others:
            self.db.update("debit_cards", other_id, retire)
        return others

    @discoverable(ToolKind.WRITE)
    def close_debit_card_4721(self, card_id: str, reason: str) -> str:
        """Close (cancel) a debit card for good; a closed card cannot be reactivated.

        Args:
            card_id (string): The debit card to close
            reason (string): Why: lost, stolen, fraud_suspected, damaged, no_longer_needed or account_closing

        Returns:
            A confirmation of the closure, with advice for the customer.
        """
        if not card_id or not reason:
            return "Error: Missing required parameters. Required: card_id, reason."
        if reason.lower() not in DEBIT_CLOSURE_REASONS:
            return f"Error: Invalid reason. Must be one of: {list(DEBIT_CLOSURE_REASONS)}"
        reason = reason.lower()
        card = self.db.get("debit_cards", card_id)
        if card is None:
            return f"Error: Debit card '{card_id}' not found."
        previous = card.get("status")
        if previous not in ("ACTIVE", "PENDING"):
            return f"Error: Debit card '{card_id}' cannot be closed. Current status: {previous}. Only ACTIVE or PENDING cards can be closed."
        self.db.update("debit_cards", card_id, {"status": "CLOSED", "closed_date": ids.TODAY, "closure_reason": reason})
        lines = [
            "Debit Card Closed Successfully",
            f"Card ID: {card_id}",
            f"Previous Status: {previous}",
            "New Status: CLOSED",
            f"Closure Reason: {_title(reason)}",
            f"Closure Date: {ids.TODAY}",
            "",
        ]
        if reason in ("lost", "stolen", "fraud_suspected"):
            lines += ["IMPORTANT: This card has been immediately deactivated for security.", "Any pending transactions may still be processed."]
        if reason == "fraud_suspected":
            lines += [
                "Please advise the customer to review recent transactions and file disputes for any unauthorized charges.",
                "Also recommend changing their online banking password.",
            ]
        lines += [
            "",
            "Note: This card cannot be reactivated. If the customer needs a new card, they can order one through the standard ordering process.",
            "Any recurring payments linked to this card will need to be updated with new payment information.",
        ]
        return "\n".join(lines)

    @discoverable(ToolKind.WRITE)
    def freeze_debit_card_3892(self, card_id: str) -> str:
        """Freeze a debit card for now; it can be unfrozen later.

        Args:
            card_id (string): The debit card to freeze

        Returns:
            A confirmation of the freeze and what it blocks.
        """
        if not card_id:
            return "Error: Missing required parameter: card_id."
        card = self.db.get("debit_cards", card_id)
        if card is None:
            return f"Error: Debit card '{card_id}' not found."
        if card.get("status") == "FROZEN":
            return f"Error: Debit card '{card_id}' is already frozen."
        if card.get("status") != "ACTIVE":
            return f"Error: Debit card '{card_id}' cannot be frozen. Current status: {card.get('status')}. Only ACTIVE cards can be frozen."
        self.db.update("debit_cards", card_id, {"status": "FROZEN", "frozen_date": ids.TODAY})
        return "\n".join(
            [
                "Debit Card Frozen Successfully",
                f"Card ID: {card_id}",
                "Status: FROZEN",
                f"Frozen Date: {ids.TODAY}",
                "",
                "While frozen:",
                "- All new purchase transactions will be declined",
                "- Recurring payments and subscriptions will be declined",
                "- Pending transactions already authorized may still process",
                "",
                "To unfreeze, the customer can call customer service or use the mobile app.",
                "If the card is confirmed lost or stolen, recommend closing the card permanently instead.",
            ]
        )

    @discoverable(ToolKind.WRITE)
    def unfreeze_debit_card_3893(self, card_id: str) -> str:
        """Unfreeze a frozen debit card so that it works again.

        Args:
            card_id (string): The debit card to unfreeze

        Returns:
            A confirmation that the card is active again.
        """
        if not card_id:
            return "Error: Missing required parameter: card_id."
        card = self.db.get("debit_cards", card_id)
        if card is None:
            return f"Error: Debit card '{card_id}' not found."
        if card.get("status") == "ACTIVE":
            return f"Error: Debit card '{card_id}' is already active."
        if card.get("status") != "FROZEN":
            return f"Error: Debit card '{card_id}' cannot be unfrozen. Current status: {card.get('status')}. Only FROZEN cards can be unfrozen."
        account_id = card.get("account_id")
        account = self.db.get("accounts", account_id) if account_id else None
        if account is not None and account.get("status") != "OPEN":
            return f"Error: The linked checking account '{account_id}' is no longer open. Card cannot be unfrozen."
        self.db.update("debit_cards", card_id, {"status": "ACTIVE", "unfrozen_date": ids.TODAY})
        return "\n".join(
            [
                "Debit Card Unfrozen Successfully",
                f"Card ID: {card_id}",
                "Status: ACTIVE",
                f"Unfrozen Date: {ids.TODAY}",
                "",
                "The card is now active and ready to use immediately.",
                "All transactions will process normally.",
            ]
        )

    @discoverable(ToolKind.WRITE)
    def clear_debit_card_fraud_alert_4892(self, card_id: str, reason: str) -> str:
        """Lift a fraud alert or a velocity block from a debit card.

        Args:
            card_id (string): The debit card whose alert or block is lifted
            reason (string): 'customer_verified' to lift a fraud alert once the customer is verified, 'velocity_clear' to lift a velocity block once their identity is verified

        Returns:
            A confirmation that the alert or block is lifted.
        """
        if not card_id:
            return "Error: Missing required parameter: card_id."
        if not reason:
            return "Error: Missing required parameter: reason."
        if reason not in ALERT_CLEAR_REASONS:
            return f"Error: Invalid reason '{reason}'. Must be one of: {', '.join(ALERT_CLEAR_REASONS)}"
        card = self.db.get("debit_cards", card_id)
        if card is None:
            return f"Error: Debit card '{card_id}' not found."
        if reason == "velocity_clear":
            return self._clear_velocity_block(card_id, card)
        if not card.get("fraud_alert_active", False):
            return f"Error: Debit card '{card_id}' does not have an active fraud alert."
        if card.get("alert_source") == "bank_initiated":
            return "Error: BANK_INITIATED_ALERT - This fraud alert was initiated by the bank's fraud detection system and cannot be cleared by customer service agents. Please transfer the customer to the security team using transfer_to_human_agents."
        self.db.update("debit_cards", card_id, {"fraud_alert_active": False, "alert_source": None, "fraud_alert_cleared_date": ids.TODAY})
        return "\n".join(
            [
                "Fraud Alert Cleared Successfully",
                f"Card ID: {card_id}",
                f"Cleared Date: {ids.TODAY}",
                "",
                "The fraud alert has been removed from the card.",
                "All transactions will process normally.",
                "",
                "Remind the customer to review recent transactions and report any unauthorized charges.",
            ]
        )

    def _clear_velocity_block(self, card_id: str, card: Record) -> str:
        """Lift a card's velocity block, or say it has none."""
        if not card.get("velocity_blocked", False):
            return f"Error: Debit card '{card_id}' does not have an active velocity block."
        self.db.update("debit_cards", card_id, {"velocity_blocked": False, "velocity_cleared_date": ids.TODAY})
        return "\n".join(
            [
                "Velocity Block Cleared Successfully",
                f"Card ID: {card_id}",
                f"Cleared Date: {ids.TODAY}",
                "",
                "The card is now unblocked and ready for normal use.",
                "The velocity monitoring will continue - if the same unusual patterns recur,",
                "the card may be blocked again automatically.",
            ]
        )

    @discoverable(ToolKind.WRITE)
    def reset_debit_card_pin_6284(self, card_id: str, last_4_digits: str, new_pin: str) -> str:
        """Set a new PIN on a debit card whose PIN the customer has forgotten; this also unlocks a card locked by wrong PINs.

        Args:
            card_id (string): The debit card
            last_4_digits (string): The card number's last four digits, to verify the card
            new_pin (string): The new 4-digit PIN the customer chooses

        Returns:
            A confirmation that the new PIN works.
        """
        if not all([card_id, last_4_digits, new_pin]):
            return "Error: Missing required parameters. Required: card_id, last_4_digits, new_pin."
        if not last_4_digits.isdigit() or len(last_4_digits) != 4:
            return "Error: Last 4 digits must be exactly 4 digits."
        pin_error = _pin_problem(new_pin)
        if pin_error:
            return f"Error: {pin_error}"
        card = self.db.get("debit_cards", card_id)
        if card is None:
            return f"Error: Debit card '{card_id}' not found."
        if card.get("last_4_digits") != last_4_digits:
            return "Error: Card verification failed. The last 4 digits do not match our records."
        if card.get("status") != "ACTIVE":
            return f"Error: Cannot reset PIN. Card status is {card.get('status')}. Only ACTIVE cards can have their PIN reset."
        self.db.update("debit_cards", card_id, {"pin_last_changed": ids.TODAY, "pin_locked": False, "pin_attempts_remaining": 3})
        return "\n".join(
            [
                "Debit Card PIN Reset Successfully",
                f"Card ID: {card_id}",
                f"PIN Changed: {ids.TODAY}",
                "",
                "The new PIN is effective immediately.",
                "Your card has been unlocked and is ready to use.",
                "Customer can use the new PIN for ATM withdrawals and point-of-sale transactions.",
                "",
                "Security reminder: Never share your PIN with anyone.",
            ]
        )

    @discoverable(ToolKind.WRITE)
    def change_debit_card_pin_6285(self, card_id: str, current_pin: str, new_pin: str) -> str:
        """Change a debit card's PIN for a customer who knows the current one.

        Args:
            card_id (string): The debit card
            current_pin (string): The customer's current 4-digit PIN
            new_pin (string): The new 4-digit PIN the customer chooses

        Returns:
            A confirmation that the new PIN works.
        """
        if not all([card_id, current_pin, new_pin]):
            return "Error: Missing required parameters. Required: card_id, current_pin, new_pin."
        if not current_pin.isdigit() or len(current_pin) != 4:
            return "Error: Current PIN must be exactly 4 digits."
        pin_error = _pin_problem(new_pin)
        if pin_error:
            return f"Error: {pin_error}"
        if current_pin == new_pin:
            return "Error: New PIN must be different from current PIN."
        card = self.db.get("debit_cards", card_id)
        if card is None:
            return f"Error: Debit card '{card_id}' not found."
        if card.get("status") != "ACTIVE":
            return f"Error: Cannot change PIN. Card status is {card.get('status')}. Only ACTIVE cards can have their PIN changed."
        self.db.update("debit_cards", card_id, {"pin_last_changed": ids.TODAY})
        return "\n".join(
            [
                "Debit Card PIN Changed Successfully",
                f"Card ID: {card_id}",
                f"PIN Changed: {ids.TODAY}",
                "",
                "The new PIN is effective immediately.",
                "Customer can use the new PIN for ATM withdrawals and point-of-sale transactions.",
                "",
                "Security reminder: Never share your PIN with anyone.",
            ]
        )

    @discoverable(ToolKind.WRITE)
    def set_debit_card_recurring_block_7382(self, card_id: str, block_recurring: bool) -> str:
        """Block or allow every recurring payment on a debit card: while blocked, subscription and other recurring charges are declined; one-off purchases still go through.

        Args:
            card_id (string): The debit card
            block_recurring (boolean): True to decline all recurring payments, False to allow them again

        Returns:
            The card's new recurring payment setting.
        """
        if not card_id:
            return "Error: Missing required parameter: card_id"
        card = self.db.get("debit_cards", card_id)
        if not card:
            return f"Error: Debit card '{card_id}' not found."
        status = card.get("status", "").upper()
        if status != "ACTIVE":
            return f"Error: Cannot update recurring block settings for a card with status '{status}'. Card must be ACTIVE."
        self.db.update("debit_cards", card_id, {"recurring_blocked": block_recurring})
        if block_recurring:
            return (
                f"Recurring payments BLOCKED for debit card {card_id}.\nAll recurring/subscription charges will be declined.\n"
                "One-time purchases are not affected.\nThis change takes effect within 24 hours."
            )
        return (
            f"Recurring payments UNBLOCKED for debit card {card_id}.\nRecurring/subscription charges will now be allowed.\n"
            "This change takes effect within 24 hours."
        )

    @discoverable(ToolKind.READ)
    def get_debit_cards_by_account_id_7823(self, account_id: str) -> str:
        """List the debit cards of a checking account, newest first, with their status, issue reason and expiry date.

        Args:
            account_id (string): The checking account

        Returns:
            The account's debit cards as a JSON list.
        """
        if not account_id:
            return "Error: Missing required parameter 'account_id'."
        account = self.db.get("accounts", account_id)
        if account is None:
            return f"Error: Account '{account_id}' not found."
        if account.get("class", "").lower() not in ("checking", "business_checking"):
            return f"Error: Account '{account_id}' is not a checking account. Debit cards are only available for checking accounts."
        cards = [_card_view(card_id, card) for card_id, card in self.db.table_items("debit_cards") if card.get("account_id") == account_id]
        if not cards:
            return f"No debit cards found for account '{account_id}'."
        cards.sort(key=lambda card: card.get("date_issued") or "", reverse=True)
        return json.dumps(cards, indent=2)

    @discoverable(ToolKind.WRITE)
    def request_temporary_debit_card_limit_increase_8374(self, card_id: str, limit_type: str, new_limit: int) -> str:
        """Raise a debit card's daily ATM or purchase limit for 24 hours.

        Args:
            card_id (string): The debit card
            limit_type (string): 'atm' for the daily ATM withdrawal limit, 'purchase' for the daily purchase limit
            new_limit (integer): The temporary limit wanted, in whole dollars

        Returns:
            The previous and temporary limits.
        """
        problem = _limit_request_problem(card_id, limit_type, new_limit)
        if problem:
            return problem
        wanted = int(float(new_limit))
        card = self.db.get("debit_cards", card_id)
        if card is None:
            return f"Error: Debit card '{card_id}' not found."
        if card.get("status") != "ACTIVE":
            return f"Error: Debit card '{card_id}' is not active. Current status: {card.get('status')}. Only ACTIVE cards can have limit increases."
        account_id = card.get("account_id")
        account = self.db.get("accounts", account_id) if account_id else None
        if account is None:
            return f"Error: Could not find linked account for debit card '{card_id}'."
        found = _account_limit_problem(account_id, account) or _current_limit(card, account, limit_type)
        if isinstance(found, str):
            return found
        current, label = found
        ceiling = int(current * 1.5)
        if wanted > ceiling:
            return f"Error: Requested limit ${wanted} exceeds the maximum allowed temporary increase. Maximum temporary limit is ${ceiling} (150% of current ${current} limit)."
        if wanted <= current:
            return f"Error: Requested limit ${wanted} is not higher than the current limit of ${current}."
        self.db.update(
            "debit_cards",
            card_id,
            {
                f"daily_{limit_type}_limit": wanted,
                f"temporary_{limit_type}_limit_increase": True,
                f"original_{limit_type}_limit": current,
                f"temporary_{limit_type}_limit_expires": ids.TODAY,
            },
        )
        return "\n".join(
            [
                f"Temporary {label} Increase Granted Successfully",
                f"Card ID: {card_id}",
                f"Previous Limit: ${current}",
                f"New Temporary Limit: ${wanted}",
                f"Increase Amount: ${wanted - current}",
                "",
                "Important Information:",
                "- This temporary increase expires in 24 hours",
                f"- After expiration, the limit will revert to ${current}",
                "- Only one temporary increase is allowed per 24-hour period",
                "",
                "Note: If the customer is at a third-party (non-Rho-Bank) ATM, that ATM may have its own",
                "per-transaction or daily limits that Rho-Bank cannot override. The customer may need to",
                "use a Rho-Bank ATM or make multiple smaller withdrawals at third-party ATMs.",
            ]
        )


# ---------------------------------------------------------------------- helpers of single tools


def _not_in_good_standing(card: Mapping[str, Any]) -> bool:
    """True when a credit card account is PAST_DUE, DELINQUENT, in COLLECTIONS or CLOSED."""
    return card.get("account_status", "").upper() in ("PAST_DUE", "DELINQUENT", "COLLECTIONS", "CLOSED")


def _eligible_for(account_type: str, owned: list[Record]) -> bool:
    """tau2's opening rules, over the customer's accounts (type read from `account_type`, else `class`)."""
    kind = _account_kind
    live = [acc for acc in owned if acc.get("status", "") in LIVE_STATUSES]
    if account_type == "savings":
        return any(kind(acc) in PERSONAL_CHECKING and _age_or_zero(acc) >= 14 for acc in live)
    if account_type == "business_checking":
        return not any(acc.get("status") == "CLOSED" for acc in owned) and any(kind(acc) in PERSONAL_CHECKING for acc in live)
    if account_type == "business_savings":
        if any(_parse_balance(acc.get("current_holdings", acc.get("balance", 0))) < 0 for acc in owned):
            return False
        return any(kind(acc) == "business_checking" and _age_or_zero(acc) >= 30 for acc in live)
    return True


def _account_kind(account: Mapping[str, Any]) -> Any:
    """An account's type for the opening rules: `account_type` (accounts opened here), else `class` (seeded ones)."""
    return account.get("account_type", account.get("class", ""))


def _age_or_zero(account: Mapping[str, Any]) -> int:
    """An account's age in days at tau2's fixed clock; 0 when its opening date does not parse."""
    try:
        return _age_days(account.get("date_opened", ""), ids.NOW)
    except ValueError:
        return 0


def _early_closure_fee(account: Mapping[str, Any]) -> int | float:
    """The fee for closing an account inside its early-closure window (0 outside it or without a rule)."""
    level, kind, opened = account.get("level", ""), account.get("class", ""), account.get("date_opened", "")
    rule = CHECKING_EARLY_CLOSURE.get(level) if kind == "checking" else SAVINGS_EARLY_CLOSURE.get(level) if kind == "savings" else None
    if not rule or not opened:
        return 0.0
    try:
        return rule[0] if _age_days(opened, ids.NOW) < rule[1] else 0.0
    except ValueError:
        return 0.0


def _plain_balance(account: Mapping[str, Any]) -> float:
    """The balance as the debit card order reads it: commas dropped but not '$' (a '$' balance counts as 0)."""
    try:
        return float(str(account.get("current_holdings", "0")).replace(",", ""))
    except ValueError:
        return 0.0


def _debit_order_fees(delivery_fee: Any, design_fee: Any, excess_fee: Any) -> str | tuple[float | None, float | None, float]:
    """The three fees of a debit card order as numbers (a missing excess fee is 0), or the error text."""
    excess_fee = excess_fee or 0
    try:
        delivery = float(delivery_fee) if delivery_fee is not None else None
    except (TypeError, ValueError):
        return "Error: delivery_fee must be a number."
    try:
        design = float(design_fee) if design_fee is not None else None
    except (TypeError, ValueError):
        return "Error: design_fee must be a number."
    try:
        excess = float(excess_fee)
    except (TypeError, ValueError):
        excess = 0
    return delivery, design, excess


def _fees_problem(total: float, balance: float) -> str | None:
    """The error when the account cannot pay a debit card order's fees, or None."""
    if total > 0 and balance < total:
        return f"Error: Insufficient funds for fees. Total fees: ${total:.2f}. Current balance: ${balance:.2f}"
    return None


def _fee_parts(delivery: float, design: float, excess: float) -> list[tuple[str, str]]:
    """The charged fees as (label, amount text): delivery and design as Python prints them, the excess fee whole."""
    parts = []
    if delivery > 0:
        parts.append(("Delivery", f"{delivery}"))
    if design > 0:
        parts.append(("Design", f"{design}"))
    if excess > 0:
        parts.append(("Excess Replacement", f"{excess:.0f}"))
    return parts


def _card_view(card_id: str, card: Mapping[str, Any]) -> dict[str, Any]:
    """A debit card as the card listing shows it: its id first, the last four digits and issue date renamed."""
    view = {"card_id": card_id, **card}
    if "last_4_digits" in view and "card_number_last_4" not in view:
        view["card_number_last_4"] = view.pop("last_4_digits")
    if "issue_date" in view and "date_issued" not in view:
        view["date_issued"] = view.pop("issue_date")
    elif "created_date" in view and "date_issued" not in view:
        view["date_issued"] = view.pop("created_date")
    return view


def _limit_request_problem(card_id: str, limit_type: str, new_limit: Any) -> str | None:
    """The argument checks of a temporary limit increase, in tau2's order, or None."""
    if not card_id:
        return "Error: Missing required parameter: card_id."
    if not limit_type:
        return "Error: Missing required parameter: limit_type."
    if limit_type not in ("atm", "purchase"):
        return f"Error: Invalid limit_type '{limit_type}'. Must be 'atm' or 'purchase'."
    if new_limit is None:
        return "Error: Missing required parameter: new_limit."
    try:
        value = float(new_limit)
    except (ValueError, TypeError):
        return f"Error: new_limit must be an integer, got '{new_limit}'."
    if not value.is_integer():
        return f"Error: new_limit must be an integer, got '{value}'."
    if int(value) <= 0:
        return "Error: new_limit must be a positive amount."
    return None


def _account_limit_problem(account_id: Any, account: Mapping[str, Any]) -> str | None:
    """Why the card's account allows no temporary increase (not OPEN, under 60 days old), or None."""
    if account.get("status") != "OPEN":
        return f"Error: The linked account '{account_id}' is not in good standing. Account status: {account.get('status')}."
    opened = account.get("date_opened")
    if opened:
        try:
            age = _age_days(opened, datetime.strptime(ids.TODAY, "%m/%d/%Y"))
        except ValueError:
            return None
        if age < 60:
            return f"Error: Account must be at least 60 days old for a temporary limit increase. Account age: {age} days."
    return None


def _current_limit(card: Mapping[str, Any], account: Mapping[str, Any], limit_type: str) -> str | tuple[Any, str]:
    """The card's current limit of this type and its display name, or the error text when there is none."""
    if limit_type == "atm":
        label, current = "Daily ATM Withdrawal Limit", card.get("daily_atm_limit")
        if current is None:
            level = account.get("level", "").lower()
            if "light green" in level:
                return "Error: Light Green Account (teen checking) cards have policy-based limits that cannot be modified. The daily ATM withdrawal limit of $150 is fixed by account policy for safety reasons. The customer may request the parent/guardian to withdraw cash from their own account if needed."
            current = DEFAULT_ATM_LIMITS.get(level)
            if current is None:
                return f"Error: Could not determine the default ATM limit for account type '{account.get('level')}'. Please verify the account type."
    else:
        label, current = "Daily Purchase Limit", card.get("daily_purchase_limit")
    if current is None:
        return f"Error: The card does not have a {label.lower()} configured. This may be a restricted account type where limits are set by account policy and cannot be modified."
    return current, label
