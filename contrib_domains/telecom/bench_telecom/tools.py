"""The carrier agent's tools: customers, lines, plans, bills, data refuelling, roaming, suspension.

Semantics follow tau2-bench's telecom toolkit, quirks included where they change a score (see the
README): arguments reach the database with the JSON types the model sent, `send_payment_request`
does not look at the bill's status, `refuel_data` does not look at the line's status.
"""

from __future__ import annotations

import hashlib
from typing import Any

from bench_kernel import ToolError, ToolKind, Toolkit, tool

from .records import Bill, Customer, Device, Line, LineItem, Plan

TODAY = "2025-02-25"
CYCLE_END = "2025-02-28"
LAST_MONTH = ("2025-01-01", "2025-01-31", "2025-01-15")
"""First day, last day and due date of last month's bill (relative to TODAY)."""
NEXT_MONTH = ("2025-03-01", "2025-03-31", "2025-03-15")
"""First day, last day and due date of next month's bill (relative to TODAY)."""


class TelecomTools(Toolkit):
    """The carrier agent's tools over plans, customers, lines, bills and devices."""

    # ------------------------------------------------------------------ lookups

    @tool(ToolKind.READ)
    def get_customer_by_phone(self, phone_number: str) -> Customer:
        """Find the customer who owns a phone number, as their contact number or as one of their lines.

        Args:
            phone_number: The phone number, for example "555-123-4567".
        """
        for customer in self.state["customers"].values():
            if customer.phone_number == phone_number:
                return customer
            if any(self._line(line_id).phone_number == phone_number for line_id in customer.line_ids):
                return customer
        raise ToolError(f"Customer with phone number {phone_number} not found")

    @tool(ToolKind.READ)
    def get_customer_by_id(self, customer_id: str) -> Customer:
        """Get a customer's account by its id.

        Args:
            customer_id: The customer id, for example "C1001".
        """
        customer = self.state["customers"].get(customer_id)
        if customer is None:
            raise ToolError(f"Customer with ID {customer_id} not found")
        return customer

    @tool(ToolKind.READ)
    def get_customer_by_name(self, full_name: str, dob: str) -> list[Customer]:
        """Find customers by full name and date of birth; the list may be empty.

        Args:
            full_name: The customer's full name (case does not matter).
            dob: The date of birth, as YYYY-MM-DD.
        """
        wanted = full_name.lower()
        return [c for c in self.state["customers"].values() if c.full_name.lower() == wanted and c.date_of_birth == dob]

    @tool(ToolKind.READ)
    def get_details_by_id(self, id: str) -> Any:
        """Get the record behind an id: a line (L...), device (D...), bill (B...), customer (C...) or plan (P...).

        Args:
            id: The id to look up.
        """
        kinds = {"L": self._line, "D": self._device, "B": self._bill, "C": self.get_customer_by_id, "P": self._plan}
        lookup = kinds.get(id[:1])
        if lookup is None:
            raise ToolError(f"Unknown ID format or type: {id}")
        return lookup(id)

    @tool(ToolKind.READ)
    def get_bills_for_customer(self, customer_id: str, limit: int = 12) -> list[Bill]:
        """List a customer's bills, the most recently issued first.

        Args:
            customer_id: The customer id.
            limit: How many bills to return at most.
        """
        customer = self.get_customer_by_id(customer_id)
        bills = [self._bill(bill_id) for bill_id in customer.bill_ids]
        return sorted(bills, key=lambda bill: bill.issue_date, reverse=True)[:limit]

    @tool(ToolKind.READ)
    def get_data_usage(self, customer_id: str, line_id: str) -> dict[str, Any]:
        """Show a line's data use this billing cycle: used, plan allowance, extra data bought, cycle end.

        Args:
            customer_id: The id of the customer who owns the line.
            line_id: The line id, for example "L1001".
        """
        line = self._target_line(customer_id, line_id)
        plan = self._plan(line.plan_id)
        return {
            "line_id": line_id,
            "data_used_gb": line.data_used_gb,
            "data_limit_gb": plan.data_limit_gb,
            "data_refueling_gb": line.data_refueling_gb,
            "cycle_end_date": CYCLE_END,
        }

    # ------------------------------------------------------------------ changes

    @tool(ToolKind.WRITE)
    def suspend_line(self, customer_id: str, line_id: str, reason: str) -> dict[str, Any]:
        """Suspend an active line (for up to six months; a monthly holding fee applies).

        Args:
            customer_id: The id of the customer who owns the line.
            line_id: The line to suspend.
            reason: Why the customer wants the line suspended.
        """
        self._target_line(customer_id, line_id)
        line = self._edit("lines", line_id)
        if line.status != "Active":
            raise ToolError("Line must be active to suspend")
        line.status, line.suspension_start_date = "Suspended", TODAY
        return {"message": "Line suspended successfully. $5/month holding fee will apply.", "line": line}

    @tool(ToolKind.WRITE)
    def resume_line(self, customer_id: str, line_id: str) -> dict[str, Any]:
        """Resume a suspended (or pending) line.

        Args:
            customer_id: The id of the customer who owns the line.
            line_id: The line to resume.
        """
        self._target_line(customer_id, line_id)
        if self._line(line_id).status not in ("Suspended", "Pending Activation"):
            raise ToolError("Line must be suspended to resume")
        line = self._edit("lines", line_id)
        line.status, line.suspension_start_date = "Active", None
        return {"message": "Line resumed successfully", "line": line}

    @tool(ToolKind.WRITE)
    def send_payment_request(self, customer_id: str, bill_id: str) -> str:
        """Ask the customer to pay a bill; they see the request on their phone. Check the bill's status first.

        Args:
            customer_id: The customer id.
            bill_id: The bill to be paid.
        """
        customer = self.get_customer_by_id(customer_id)
        if self.bills_awaiting_payment(customer):
            raise ToolError("A bill is already awaiting payment for this customer")
        if bill_id not in customer.bill_ids:
            raise ToolError(f"Bill {bill_id} not found for customer {customer_id}")
        self._bill(bill_id)
        self._edit("bills", bill_id).status = "Awaiting Payment"
        return f"Payment request sent to the customer for bill {bill_id}"

    @tool(ToolKind.WRITE)
    def enable_roaming(self, customer_id: str, line_id: str) -> str:
        """Allow a line to use partner networks abroad.

        Args:
            customer_id: The id of the customer who owns the line.
            line_id: The line.
        """
        return self._set_roaming(customer_id, line_id, enabled=True)

    @tool(ToolKind.WRITE)
    def disable_roaming(self, customer_id: str, line_id: str) -> str:
        """Stop a line from using partner networks abroad.

        Args:
            customer_id: The id of the customer who owns the line.
            line_id: The line.
        """
        return self._set_roaming(customer_id, line_id, enabled=False)

    @tool(ToolKind.WRITE)
    def refuel_data(self, customer_id: str, line_id: str, gb_amount: float) -> dict[str, Any]:
        """Add extra data to a line for this cycle, charged on the customer's next bill at the plan's price per GB.

        Args:
            customer_id: The id of the customer who owns the line.
            line_id: The line.
            gb_amount: How many GB to add (more than zero).
        """
        self._target_line(customer_id, line_id)
        if gb_amount <= 0:
            raise ToolError("Refuel amount must be positive")
        plan = self._plan(self._line(line_id).plan_id)
        charge = gb_amount * plan.data_refueling_price_per_gb
        line = self._edit("lines", line_id)
        line.data_refueling_gb += gb_amount
        # The raw argument goes into the text, as in tau2: 2 and 2.0 write different bills.
        self._charge(customer_id, charge, f"Data refueling: {gb_amount} GB at ${plan.data_refueling_price_per_gb}/GB")
        return {
            "message": f"Successfully added {gb_amount} GB of data for line {line_id} for ${charge:.2f}",
            "new_data_refueling_gb": line.data_refueling_gb,
            "charge": charge,
        }

    @tool(ToolKind.GENERIC)
    def transfer_to_human_agents(self, summary: str) -> str:
        """Hand the customer to a human agent: only when they ask for one, or when policy and tools cannot solve the issue.

        Args:
            summary: A short summary of the customer's issue for the human agent.
        """
        return "Transfer successful"

    # ------------------------------------------------------------------ for task files (not tools)

    def set_data_usage(self, customer_id: str, line_id: str, data_used_gb: float) -> str:
        """Set a line's data used this cycle (an initialization action)."""
        self._target_line(customer_id, line_id)
        self._edit("lines", line_id).data_used_gb = data_used_gb
        return f"Data usage set to {data_used_gb} GB for line {line_id}"

    def suspend_line_for_overdue_bill(self, customer_id: str, line_id: str, new_bill_id: str, contract_ended: bool) -> str:
        """Give the customer an overdue bill for last month's plan price and suspend the line (an initialization action)."""
        line = self._line(line_id)
        if line.status != "Active":
            raise ToolError("Line must be active to suspend for unpaid bill")
        amount = self._plan(line.plan_id).price_per_month
        if amount <= 0:
            raise ToolError("Amount must be positive for overdue bill")
        customer = self.get_customer_by_id(customer_id)
        if any(self._bill(b).status == "Overdue" for b in customer.bill_ids):
            raise ToolError("Customer already has an overdue bill")
        start, end, due = LAST_MONTH
        item = LineItem(description=f"Charge for line {line_id}", amount=amount, date=TODAY, item_type="Charge" if amount > 0 else "Credit")
        self._add_bill(
            customer_id,
            Bill(
                bill_id=new_bill_id,
                customer_id=customer_id,
                period_start=start,
                period_end=end,
                issue_date=start,
                total_due=0.0 + amount,
                due_date=due,
                line_items=[item],
                status="Overdue",
            ),
        )
        line = self._edit("lines", line_id)
        line.status, line.suspension_start_date = "Suspended", TODAY
        if contract_ended:
            line.contract_end_date = end
        return f"Line {line_id} suspended for unpaid bill {new_bill_id}. Contract ended: {contract_ended}"

    def get_available_plan_ids(self) -> list[str]:
        """Every plan id."""
        return list(self.state["plans"])

    def assert_data_refueling_amount(self, customer_id: str, line_id: str, expected_amount: float) -> bool:
        """True when the line's extra data this cycle is expected_amount."""
        return abs(self._target_line(customer_id, line_id).data_refueling_gb - expected_amount) < 1e-6

    def assert_line_status(self, customer_id: str, line_id: str, expected_status: str) -> bool:
        """True when the line has this status."""
        return self._target_line(customer_id, line_id).status == expected_status

    def assert_overdue_bill_exists(self, customer_id: str, overdue_bill_id: str) -> bool:
        """True when the customer has this bill and it is overdue (raises otherwise, as tau2 does)."""
        customer = self.get_customer_by_id(customer_id)
        if overdue_bill_id not in customer.bill_ids:
            raise ToolError(f"Overdue bill {overdue_bill_id} not found")
        if self._bill(overdue_bill_id).status != "Overdue":
            raise ToolError(f"Overdue bill {overdue_bill_id} is not overdue")
        return True

    def assert_no_overdue_bill(self, overdue_bill_id: str) -> bool:
        """True when the bill does not exist or is paid."""
        bill = self.state["bills"].get(overdue_bill_id)
        return bill is None or bill.status == "Paid"

    # ------------------------------------------------------------------ for the sync

    def line_by_phone(self, phone_number: str) -> Line:
        """The first line with this number."""
        for line in self.state["lines"].values():
            if line.phone_number == phone_number:
                return line
        raise ToolError(f"Line with phone number {phone_number} not found")

    def plan_of(self, line: Line) -> Plan:
        """The plan a line is on."""
        return self._plan(line.plan_id)

    def bills_awaiting_payment(self, customer: Customer) -> list[Bill]:
        """The customer's bills with status Awaiting Payment, in bill_ids order."""
        return [bill for bill in map(self._bill, customer.bill_ids) if bill.status == "Awaiting Payment"]

    def mark_paid(self, bill_id: str) -> None:
        """Record a bill as paid."""
        self._bill(bill_id)
        self._edit("bills", bill_id).status = "Paid"

    # ------------------------------------------------------------------ helpers

    def _edit(self, table: str, key: str) -> Any:
        return self.state[table].edit(key)

    def _get(self, table: str, key: str, what: str) -> Any:
        record = self.state[table].get(key)
        if record is None:
            raise ToolError(f"{what} with ID {key} not found")
        return record

    def _line(self, line_id: str) -> Line:
        return self._get("lines", line_id, "Line")

    def _plan(self, plan_id: str) -> Plan:
        return self._get("plans", plan_id, "Plan")

    def _bill(self, bill_id: str) -> Bill:
        return self._get("bills", bill_id, "Bill")

    def _device(self, device_id: str) -> Device:
        return self._get("devices", device_id, "Device")

    def _target_line(self, customer_id: str, line_id: str) -> Line:
        customer = self.get_customer_by_id(customer_id)
        if line_id not in customer.line_ids:
            raise ToolError(f"Line {line_id} not found for customer {customer_id}")
        return self._line(line_id)

    def _set_roaming(self, customer_id: str, line_id: str, *, enabled: bool) -> str:
        word = "enabled" if enabled else "disabled"
        if self._target_line(customer_id, line_id).roaming_enabled == enabled:
            return f"Roaming was already {word}"
        self._edit("lines", line_id).roaming_enabled = enabled
        return f"Roaming {word} successfully"

    def _charge(self, customer_id: str, amount: float, description: str) -> None:
        """Add a line item to the customer's first draft bill, opening next month's bill when there is none."""
        customer = self.get_customer_by_id(customer_id)
        draft = next((b for b in customer.bill_ids if self._bill(b).status == "Draft"), None)
        if draft is None:
            draft = self._new_draft_bill(customer)
        bill = self._edit("bills", draft)
        bill.line_items = [
            *bill.line_items,
            LineItem(description=description, amount=amount, date=TODAY, item_type="Credit" if amount < 0 else "Charge"),
        ]
        bill.total_due += amount

    def _new_draft_bill(self, customer: Customer) -> str:
        # tau2 draws this id from uuid4; ours derives from the customer and its bill count, so replays agree.
        digest = hashlib.sha256(f"{customer.customer_id}:{len(customer.bill_ids)}".encode()).hexdigest()
        start, end, due = NEXT_MONTH
        bill = Bill(
            bill_id=f"B{digest[:8]}",
            customer_id=customer.customer_id,
            period_start=start,
            period_end=end,
            issue_date=start,
            total_due=0.0,
            due_date=due,
            status="Draft",
        )
        self._add_bill(customer.customer_id, bill)
        return bill.bill_id

    def _add_bill(self, customer_id: str, bill: Bill) -> None:
        self.state["bills"][bill.bill_id] = bill
        customer = self._edit("customers", customer_id)
        customer.bill_ids = [*customer.bill_ids, bill.bill_id]
