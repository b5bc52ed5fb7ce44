"""The banking agent's 21 tools (AgentChangeBench's), with its two defects fixed unless compatibility is asked for.

- `file_dispute` files the dispute (AgentChangeBench sets a transaction status its model does not
  have, so every call fails with "DISPUTED"); `CompatBankingTools` keeps that failure.
- `get_transactions` filters by ISO date or datetime strings (AgentChangeBench compares them with
  datetimes and raises a TypeError); `CompatBankingTools` keeps that error.
New ids count per kind (`PY_00000001`), timestamps tick one second per call from 2025-08-21
08:00:00, both kept in the state so a replay gives the same ids and times.
"""

from __future__ import annotations

import datetime
from typing import Any

from bench_kernel import ToolError, ToolKind, Toolkit, tool

from .records import META, Account, Card, Customer, Dispute, Payee, PaymentRequest, Statement, Transaction

BASE_TIME = datetime.datetime(2025, 8, 21, 8, 0, 0)
PREFIXES = {"payees": "PY", "payment_requests": "PR", "transactions": "TX", "disputes": "DP"}


class BankingTools(Toolkit):
    """Customers, accounts, cards, statements, transactions, payees, bill payments, disputes and task parking."""

    compat_defects: bool = False

    # ------------------------------------------------------------------ customers and accounts

    @tool(ToolKind.READ)
    def get_customer_by_id(self, customer_id: str) -> Customer:
        """Get a customer by id.

        Args:
            customer_id: The customer id, such as "cust_001".
        """
        return self._customer(customer_id)

    @tool(ToolKind.READ)
    def get_customer_by_phone(self, phone_number: str) -> Customer:
        """Get a customer by their full registered phone number (written exactly as registered).

        Args:
            phone_number: The phone number, such as "+15551234567" or "555-123-7890".
        """
        found = next((c for c in self.state["customers"].values() if c.phone_number == phone_number), None)
        if found is None:
            raise ToolError(f"Customer with phone {phone_number} not found")
        return found

    @tool(ToolKind.READ)
    def get_customer_by_name(self, full_name: str, dob: str) -> list[Customer]:
        """Find customers by full name and date of birth (the list may be empty).

        Args:
            full_name: The full name (case does not matter).
            dob: The date of birth, as YYYY-MM-DD.
        """
        wanted = full_name.lower()
        return [c for c in self.state["customers"].values() if c.full_name.lower() == wanted and c.date_of_birth == dob]

    @tool(ToolKind.READ)
    def get_accounts(self, customer_id: str) -> list[Account]:
        """List a customer's accounts.

        Args:
            customer_id: The customer id.
        """
        return [self._get("accounts", a, "Account") for a in self._customer(customer_id).account_ids]

    @tool(ToolKind.READ)
    def get_account(self, account_id: str) -> Account:
        """Get one account: type, status and balances.

        Args:
            account_id: The account id, such as "acc_001".
        """
        return self._get("accounts", account_id, "Account")

    @tool(ToolKind.READ)
    def get_statements(self, account_id: str, limit: int = 12) -> list[Statement]:
        """List an account's statements, the newest first.

        Args:
            account_id: The account id.
            limit: How many statements at most.
        """
        found = [s for s in self.state["statements"].values() if s.account_id == account_id]
        return sorted(found, key=lambda s: s.issue_date, reverse=True)[:limit]

    @tool(ToolKind.READ)
    def get_transactions(self, account_id: str, start_time: str | None = None, end_time: str | None = None, limit: int = 100) -> list[Transaction]:
        """List an account's transactions, the newest first, optionally between two dates or times.

        Args:
            account_id: The account id.
            start_time: Only transactions at or after this date or time (ISO, e.g. "2025-06-01" or "2025-06-01T00:00:00").
            end_time: Only transactions at or before this date or time (ISO; a date means the whole day).
            limit: How many transactions at most.
        """
        found = [t for t in self.state["transactions"].values() if t.account_id == account_id]
        if start_time or end_time:
            if self.compat_defects:
                raise ToolError("'>=' not supported between instances of 'datetime.datetime' and 'str'")
            low, high = _moment(start_time, end=False), _moment(end_time, end=True)
            found = [t for t in found if _between(_moment(t.timestamp), low, high)]
        return sorted(found, key=lambda t: t.timestamp, reverse=True)[:limit]

    # ------------------------------------------------------------------ payees and bill payments

    @tool(ToolKind.WRITE)
    def add_payee(self, customer_id: str, name: str, deliver_type: str = "electronic") -> dict[str, Any]:
        """Add a bill-pay payee for a customer (new payees are verified at once).

        Args:
            customer_id: The customer id.
            name: The payee's name, such as "City Water".
            deliver_type: How payments are delivered: "electronic" or "check".
        """
        self._customer(customer_id)
        if deliver_type not in ("electronic", "check"):
            raise ToolError("deliver_type must be 'electronic' or 'check'")
        payee = Payee(
            payee_id=self._new_id("payees"),
            customer_id=customer_id,
            name=name,
            deliver_type=deliver_type,  # type: ignore[arg-type]
            verified=True,
        )
        self.state["payees"][payee.payee_id] = payee
        self._append(customer_id, "payee_ids", payee.payee_id)
        return {"payee_id": payee.payee_id, "verified": True}

    @tool(ToolKind.WRITE)
    def create_payment_request(
        self, customer_id: str, from_account_id: str, to_payee_id: str, amount: float, expires_at: str | None = None
    ) -> dict[str, Any]:
        """Start a bill payment (status Awaiting Payment); a customer can have one waiting at a time.

        Args:
            customer_id: The customer id.
            from_account_id: The customer's account to pay from.
            to_payee_id: The customer's payee to pay.
            amount: The amount in USD (more than zero).
            expires_at: When the request expires (ISO date or time), if it should.
        """
        customer = self._customer(customer_id)
        if from_account_id not in customer.account_ids:
            raise ToolError(f"Account {from_account_id} is not owned by customer {customer_id}")
        if to_payee_id not in customer.payee_ids:
            raise ToolError(f"Payee {to_payee_id} is not owned by customer {customer_id}")
        if self._get("accounts", from_account_id, "Account").status != "Active":
            raise ToolError("Source account must be Active")
        if amount <= 0:
            raise ToolError("Amount must be positive")
        if any(r.customer_id == customer_id and r.status == "Awaiting Payment" for r in self.state["payment_requests"].values()):
            raise ToolError("Another payment request is already Awaiting Payment for this customer")
        request = PaymentRequest(
            request_id=self._new_id("payment_requests"),
            origin="agent",
            customer_id=customer_id,
            from_account_id=from_account_id,
            to_payee_id=to_payee_id,
            amount=amount,
            status="Awaiting Payment",
            created_at=self._tick(),
            expires_at=expires_at,
        )
        self.state["payment_requests"][request.request_id] = request
        self._append(customer_id, "payment_request_ids", request.request_id)
        return {"request_id": request.request_id, "status": request.status}

    @tool(ToolKind.READ)
    def check_payment_request(self, request_id: str) -> PaymentRequest:
        """Get a payment request and its status.

        Args:
            request_id: The request id.
        """
        return self._get("payment_requests", request_id, "Payment request")

    @tool(ToolKind.WRITE)
    def authorize_payment_request(self, request_id: str) -> dict[str, Any]:
        """Record that the customer approved a waiting payment request (status Authorized).

        Args:
            request_id: The request id.
        """
        if self._get("payment_requests", request_id, "Payment request").status != "Awaiting Payment":
            raise ToolError(f"Request {request_id} is not Awaiting Payment")
        request = self.state["payment_requests"].edit(request_id)
        request.status = "Authorized"
        return {"request_id": request_id, "status": request.status}

    @tool(ToolKind.WRITE)
    def make_payment(self, request_id: str) -> dict[str, Any]:
        """Pay an authorized request: debit the account and record the payment (Failed when funds are short).

        Args:
            request_id: The request id.
        """
        if self._get("payment_requests", request_id, "Payment request").status != "Authorized":
            raise ToolError("Request must be AUTHORIZED before payment")
        request = self.state["payment_requests"].edit(request_id)
        if self._get("accounts", request.from_account_id, "Account").available_balance < request.amount:
            request.status = "Failed"
            return {"request_id": request_id, "status": request.status, "reason": "insufficient_funds"}
        account = self.state["accounts"].edit(request.from_account_id)
        account.available_balance -= request.amount
        account.current_balance -= request.amount
        payee = self._get("payees", request.to_payee_id, "Payee")
        tx = Transaction(
            tx_id=self._new_id("transactions"),
            account_id=account.account_id,
            timestamp=self._tick(),
            type="billpay",
            amount=-abs(request.amount),
            merchant_or_payee=payee.name,
            status="Posted",
            reference=request_id,
        )
        self.state["transactions"][tx.tx_id] = tx
        request.status = "Settled"
        return {"request_id": request_id, "status": request.status, "tx_id": tx.tx_id}

    @tool(ToolKind.WRITE)
    def cancel_payment_request(self, request_id: str) -> dict[str, Any]:
        """Cancel a payment request that has not been paid.

        Args:
            request_id: The request id.
        """
        status = self._get("payment_requests", request_id, "Payment request").status
        if status == "Settled":
            raise ToolError("Cannot cancel a settled payment")
        if status in ("Failed", "Canceled"):
            return {"request_id": request_id, "status": status}
        self.state["payment_requests"].edit(request_id).status = "Canceled"
        return {"request_id": request_id, "status": "Canceled"}

    # ------------------------------------------------------------------ cards and disputes

    @tool(ToolKind.WRITE)
    def lock_card(self, card_id: str, reason: str | None = None) -> dict[str, Any]:
        """Lock a card (nothing changes when it is locked already).

        Args:
            card_id: The card id, such as "card_001".
            reason: Why it is locked, e.g. "lost" or "suspected fraud".
        """
        return self._set_card(card_id, "Locked")

    @tool(ToolKind.WRITE)
    def unlock_card(self, card_id: str) -> dict[str, Any]:
        """Unlock a locked card (only after the policy's checks).

        Args:
            card_id: The card id.
        """
        return self._set_card(card_id, "Active")

    @tool(ToolKind.WRITE)
    def file_dispute(self, account_id: str, tx_id: str, reason_code: str) -> dict[str, Any]:
        """Dispute a transaction of an account (the dispute starts as Submitted).

        Args:
            account_id: The account the transaction is on.
            tx_id: The transaction id, such as "tx_101".
            reason_code: Why: e.g. "unauthorized", "incorrect_amount", "duplicate_charge", "goods_not_received".
        """
        self._get("accounts", account_id, "Account")
        tx = self.state["transactions"].get(tx_id)
        if tx is None or tx.account_id != account_id:
            raise ToolError(f"Transaction {tx_id} not found for account {account_id}")
        if self.compat_defects:
            raise ToolError("DISPUTED")
        self.state["transactions"].edit(tx_id).status = "Disputed"
        dispute = Dispute(
            dispute_id=self._new_id("disputes"),
            account_id=account_id,
            tx_id=tx_id,
            reason_code=reason_code,
            status="Submitted",
            opened_at=self._tick(),
        )
        self.state["disputes"][dispute.dispute_id] = dispute
        owner = self._get("accounts", account_id, "Account").customer_id
        if owner in self.state["customers"]:
            self._append(owner, "dispute_ids", dispute.dispute_id)
        return {"dispute_id": dispute.dispute_id, "status": dispute.status}

    @tool(ToolKind.READ)
    def get_dispute(self, dispute_id: str) -> Dispute:
        """Get a dispute and its status.

        Args:
            dispute_id: The dispute id.
        """
        return self._get("disputes", dispute_id, "Dispute")

    # ------------------------------------------------------------------ goal-shift instrumentation and hand-over

    @tool(ToolKind.GENERIC)
    def log_shift_event(self, turn_no: int, from_class: str, to_class: str, trigger_terms: list[str], requires_reauth: bool) -> dict[str, Any]:
        """Record that the customer moved to another goal (for evaluation).

        Args:
            turn_no: The turn at which the goal changed.
            from_class: The goal before, e.g. "payments".
            to_class: The goal after, e.g. "cards".
            trigger_terms: The customer's words that showed the change.
            requires_reauth: Whether the new goal needs the customer to authenticate again.
        """
        events = self._meta("shift_events")
        event = {
            "ts": self._tick(),
            "turn_no": turn_no,
            "from_class": from_class,
            "to_class": to_class,
            "trigger_terms": list(trigger_terms),
            "requires_reauth": requires_reauth,
        }
        self.state[META]["shift_events"] = [*events, event]
        return {"logged": True, "count": len(events) + 1}

    @tool(ToolKind.GENERIC)
    def park_task(self, current_task_id: str, resume_hint: str | None = None) -> dict[str, Any]:
        """Put the current request aside to come back to it later; returns the id to resume it with.

        Args:
            current_task_id: A short name for the request being parked.
            resume_hint: What is left to do when it is resumed.
        """
        parked = self._meta("parked")
        parked_id = f"PT_{len(parked) + 1:08x}"
        self.state[META]["parked"] = {**parked, parked_id: {"task_id": current_task_id, "resume_hint": resume_hint, "parked_at": self._tick()}}
        return {"parked_task_id": parked_id}

    @tool(ToolKind.GENERIC)
    def resume_task(self, parked_task_id: str) -> dict[str, Any]:
        """Come back to a parked request.

        Args:
            parked_task_id: The id park_task returned.
        """
        found = self._meta("parked").get(parked_task_id)
        if found is None:
            raise ToolError(f"Parked task {parked_task_id} not found")
        return {"status": "Resumed", "metadata": found}

    @tool(ToolKind.GENERIC)
    def transfer_to_human_agents(self, summary: str) -> str:
        """Hand the customer to a human agent, with a summary; only when the policy says so.

        Args:
            summary: A short summary of the customer's request.
        """
        return "Transfer successful"

    # ------------------------------------------------------------------ for task files (not tools)

    def assert_card_status(self, card_id: str, expected: str) -> bool:
        """True when the card has this status."""
        card = self.state["cards"].get(card_id)
        return card is not None and card.status == expected

    def assert_any_payment_request_with_status(
        self, customer_id: str, expected_status: str, min_amount: float | None = None, from_account_id: str | None = None
    ) -> bool:
        """True when some payment request of the customer has this status (and matches the optional filters)."""
        return any(
            r.customer_id == customer_id
            and r.status == expected_status
            and (min_amount is None or r.amount >= min_amount)
            and (from_account_id is None or r.from_account_id == from_account_id)
            for r in self.state["payment_requests"].values()
        )

    def assert_parked_task_exists(self, parked_task_id: str) -> bool:
        """True when this task (any, with "*") was parked."""
        parked = self._meta("parked")
        return bool(parked) if parked_task_id == "*" else parked_task_id in parked

    def assert_shift_event_count_at_least(self, n: int) -> bool:
        """True when at least n goal shifts were logged."""
        return len(self._meta("shift_events")) >= n

    # ------------------------------------------------------------------ helpers

    def _customer(self, customer_id: str) -> Customer:
        found = self.state["customers"].get(customer_id)
        if found is None:
            raise ToolError(f"Customer {customer_id} not found. Have you tried asking the customer for their id?")
        return found

    def _get(self, table: str, key: str, what: str) -> Any:
        found = self.state[table].get(key)
        if found is None:
            raise ToolError(f"{what} {key} not found")
        return found

    def _set_card(self, card_id: str, status: str) -> dict[str, Any]:
        card: Card = self._get("cards", card_id, "Card")
        if card.status != status:
            self.state["cards"].edit(card_id).status = status
        return {"card_id": card_id, "status": status}

    def _append(self, customer_id: str, field: str, value: str) -> None:
        customer = self.state["customers"].edit(customer_id)
        setattr(customer, field, [*getattr(customer, field), value])

    def _meta(self, key: str) -> Any:
        return self.state[META][key]

    def _tick(self) -> str:
        """The next deterministic timestamp (one second after the previous one)."""
        ticks = self._meta("clock")["ticks"] + 1
        self.state[META]["clock"] = {"ticks": ticks}
        return (BASE_TIME + datetime.timedelta(seconds=ticks)).isoformat()

    def _new_id(self, table: str) -> str:
        prefix = PREFIXES[table]
        count = sum(1 for key in self.state[table] if key.startswith(f"{prefix}_")) + 1
        return f"{prefix}_{count:08x}"


class CompatBankingTools(BankingTools):
    """AgentChangeBench's tools with its two defects: file_dispute always fails, time filters raise."""

    compat_defects = True


def _moment(text: str | None, *, end: bool = False) -> datetime.datetime | None:
    """An ISO date or datetime; a bare date is the start (or, with end, the end) of its day."""
    if text is None or text == "":
        return None
    try:
        if len(text) == 10:
            day = datetime.date.fromisoformat(text)
            return datetime.datetime.combine(day, datetime.time.max if end else datetime.time.min)
        return datetime.datetime.fromisoformat(text).replace(tzinfo=None)
    except ValueError:
        raise ToolError(f"invalid parameter: {text!r} is not an ISO date or date-time") from None


def _between(moment: datetime.datetime | None, low: datetime.datetime | None, high: datetime.datetime | None) -> bool:
    return moment is not None and (low is None or moment >= low) and (high is None or moment <= high)
