"""The services agent's tools: search, book, status, pay, banking, weather, reminders and calendar.

Bookings are asynchronous. `book` records a booking as `pending`; the world processes it
`confirm_delay` clock ticks later (the item's own delay), when it becomes `confirmed`, or `failed`
for an item that cannot be confirmed. The world's clock moves on by one with every tool call and
with every step of a conversation (`advance`), so a gold replay, which has no steps, needs enough
calls (status checks) for its bookings to settle. The agent learns the outcome only by asking
(`get_booking_status`, `list_bookings`). Paying for a booking needs it confirmed: dependent goals
are enforced here.

Records are shared by every conversation of a run: never change one in place (assign a new dict).
"""

from __future__ import annotations

from typing import Any

import attrs

from bench_kernel import ToolError, ToolKind, Toolkit, tool

from .world import ATTRACTIONS, SERVICES


@attrs.define
class ServicesTools(Toolkit):
    """The agent's tools over the catalogue, bookings, payments, accounts, weather, reminders and calendar."""

    clock: int = 0
    """The world's clock: one tick per tool call and per conversation step (not part of the database)."""
    due: dict[str, int] = attrs.field(factory=dict)
    """When each pending booking is processed, by booking id."""
    calls: list[dict[str, Any]] = attrs.field(factory=list)
    """Every tool call: name, arguments, whether it succeeded and its result (what goals are tracked from)."""
    observed: set[str] = attrs.field(factory=set)
    """Bookings whose final status a status tool has shown the agent."""
    goals: list[dict[str, Any]] = attrs.field(factory=list)
    reported: dict[str, str] = attrs.field(factory=dict)
    """The last status the domain reported per goal."""

    def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        """Tick the clock, process due bookings, run the tool and remember the call."""
        self.tick()
        entry: dict[str, Any] = {"name": name, "arguments": dict(arguments), "ok": False, "result": None}
        self.calls.append(entry)
        result = super().call_tool(name, arguments)
        entry.update(ok=True, result=result)
        return result

    def tick(self) -> None:
        """One tick of the world's clock: pending bookings whose time has come are confirmed or fail."""
        self.clock += 1
        for booking_id, due in sorted(self.due.items()):
            if due <= self.clock:
                del self.due[booking_id]
                booking = self.state["bookings"][booking_id]
                item = self.state["catalog"][booking["item_id"]]
                self.state["bookings"][booking_id] = {**booking, "status": "confirmed" if item["confirms"] else "failed"}

    # ------------------------------------------------------------------ catalogue and bookings

    @tool(ToolKind.READ)
    def search(self, service: str, city: str, date: str = "") -> list[dict[str, Any]]:
        """Search the catalogue of one service in a city, optionally on one date.

        Args:
            service: One of restaurants, hotels, flights, events, movies, buses, trains, cars, homes, salons, rides, attractions.
            city: The city, for example "Lisbon" (for flights, buses and trains: the destination).
            date: A date as YYYY-MM-DD; empty for every date.
        """
        if service not in (*SERVICES, ATTRACTIONS):
            raise ToolError(f"Unknown service '{service}'. Use one of: {', '.join([*SERVICES, ATTRACTIONS])}.")
        wanted = city.strip().lower()
        found = [
            _offer(i)
            for i in self.state["catalog"].values()
            if i["service"] == service and i["city"].lower() == wanted and (not date or i["date"] == date)
        ]
        return sorted(found, key=lambda i: (i["date"], i["time"], i["item_id"]))

    @tool(ToolKind.WRITE)
    def book(self, item_id: str, quantity: int, customer_id: str) -> dict[str, Any]:
        """Book a catalogue item for a customer. The booking starts as pending and is processed later.

        Args:
            item_id: The item id, as given by search.
            quantity: How many: guests, nights, passengers, tickets, days, visitors or riders (at least 1).
            customer_id: The customer's id, such as "cust_01".
        """
        item = self.state["catalog"].get(item_id)
        if item is None or item["service"] == ATTRACTIONS:
            raise ToolError(f"No bookable item '{item_id}'. Use search to find item ids.")
        self._customer(customer_id)
        if quantity < 1:
            raise ToolError("The quantity must be at least 1.")
        booking_id = f"BK{len(self.state['bookings']) + 1:04d}"
        booking = {
            "booking_id": booking_id,
            "item_id": item_id,
            "service": item["service"],
            "customer_id": customer_id,
            "quantity": quantity,
            "total": round(item["price"] * quantity, 2),
            "status": "pending",
            "paid": False,
        }
        self.state["bookings"][booking_id] = booking
        self.due[booking_id] = self.clock + item["confirm_delay"]
        return dict(booking)

    @tool(ToolKind.READ)
    def get_booking_status(self, booking_id: str) -> dict[str, Any]:
        """Get a booking's current status: pending, confirmed, failed or cancelled, and whether it is paid.

        Args:
            booking_id: The booking id, such as "BK0001".
        """
        booking = self._booking(booking_id)
        if booking["status"] != "pending":
            self.observed.add(booking_id)
        return dict(booking)

    @tool(ToolKind.READ)
    def list_bookings(self, customer_id: str) -> list[dict[str, Any]]:
        """List a customer's bookings with their current status.

        Args:
            customer_id: The customer's id, such as "cust_01".
        """
        self._customer(customer_id)
        found = [dict(b) for b in self.state["bookings"].values() if b["customer_id"] == customer_id]
        self.observed.update(b["booking_id"] for b in found if b["status"] != "pending")
        return found

    @tool(ToolKind.WRITE)
    def cancel_booking(self, booking_id: str) -> dict[str, Any]:
        """Cancel a booking that is not paid yet.

        Args:
            booking_id: The booking id, such as "BK0001".
        """
        booking = self._booking(booking_id)
        if booking["paid"] or booking["status"] in ("failed", "cancelled"):
            raise ToolError(f"Booking {booking_id} is {'paid' if booking['paid'] else booking['status']} and cannot be cancelled.")
        self.due.pop(booking_id, None)
        self.state["bookings"][booking_id] = {**booking, "status": "cancelled"}
        return dict(self.state["bookings"][booking_id])

    @tool(ToolKind.WRITE)
    def pay_booking(self, booking_id: str, account_id: str) -> dict[str, Any]:
        """Pay a confirmed booking from one of the customer's accounts.

        Args:
            booking_id: The booking id, such as "BK0001".
            account_id: The paying account, such as "acc_01_chk".
        """
        booking = self._booking(booking_id)
        if booking["status"] != "confirmed":
            raise ToolError(f"Booking {booking_id} is {booking['status']}: only a confirmed booking can be paid.")
        if booking["paid"]:
            raise ToolError(f"Booking {booking_id} is already paid.")
        account = self._account(account_id)
        if account["customer_id"] != booking["customer_id"]:
            raise ToolError(f"Account {account_id} does not belong to the customer of booking {booking_id}.")
        self._debit(account, booking["total"])
        payment_id = f"PM{len(self.state['payments']) + 1:04d}"
        self.state["payments"][payment_id] = {
            "payment_id": payment_id,
            "booking_id": booking_id,
            "account_id": account_id,
            "amount": booking["total"],
        }
        self.state["bookings"][booking_id] = {**booking, "paid": True}
        return {"payment_id": payment_id, "booking_id": booking_id, "amount": booking["total"]}

    # ------------------------------------------------------------------ banking

    @tool(ToolKind.READ)
    def get_balance(self, account_id: str) -> dict[str, Any]:
        """Get an account's type and balance.

        Args:
            account_id: The account id, such as "acc_01_chk".
        """
        return dict(self._account(account_id))

    @tool(ToolKind.WRITE)
    def transfer_money(self, from_account: str, to_account: str, amount: float) -> dict[str, Any]:
        """Move money between two accounts of the same customer.

        Args:
            from_account: The account the money leaves, such as "acc_01_chk".
            to_account: The account the money goes to, such as "acc_01_sav".
            amount: The amount, more than 0.
        """
        source, target = self._account(from_account), self._account(to_account)
        if from_account == to_account or source["customer_id"] != target["customer_id"]:
            raise ToolError("Transfers go between two different accounts of the same customer.")
        if amount <= 0:
            raise ToolError("The amount must be more than 0.")
        self._debit(source, amount)
        target = self._account(to_account)
        self.state["accounts"][to_account] = {**target, "balance": round(target["balance"] + amount, 2)}
        transfer_id = f"TR{len(self.state['transfers']) + 1:04d}"
        record = {"transfer_id": transfer_id, "from_account": from_account, "to_account": to_account, "amount": round(amount, 2)}
        self.state["transfers"][transfer_id] = record
        return dict(record)

    @tool(ToolKind.WRITE)
    def request_payment(self, customer_id: str, contact: str, amount: float) -> dict[str, Any]:
        """Ask a contact to pay the customer an amount.

        Args:
            customer_id: The customer's id, such as "cust_01".
            contact: The contact's first name.
            amount: The amount requested, more than 0.
        """
        self._customer(customer_id)
        if amount <= 0:
            raise ToolError("The amount must be more than 0.")
        request_id = f"RQ{len(self.state['payment_requests']) + 1:04d}"
        record = {"request_id": request_id, "customer_id": customer_id, "contact": contact.strip(), "amount": round(amount, 2)}
        self.state["payment_requests"][request_id] = record
        return dict(record)

    # ------------------------------------------------------------------ weather, reminders, calendar

    @tool(ToolKind.READ)
    def get_weather(self, city: str, date: str) -> dict[str, Any]:
        """Get the forecast for a city on a date.

        Args:
            city: The city, for example "Osaka".
            date: The date as YYYY-MM-DD.
        """
        for record in self.state["weather"].values():
            if record["city"].lower() == city.strip().lower() and record["date"] == date:
                return dict(record)
        raise ToolError(f"No forecast for {city} on {date}.")

    @tool(ToolKind.WRITE)
    def add_reminder(self, customer_id: str, title: str, date: str, time: str) -> dict[str, Any]:
        """Set a reminder for a customer.

        Args:
            customer_id: The customer's id, such as "cust_01".
            title: What to be reminded of.
            date: The date as YYYY-MM-DD.
            time: The time as HH:MM.
        """
        return self._add("reminders", "R", customer_id, title, date, time)

    @tool(ToolKind.READ)
    def list_reminders(self, customer_id: str) -> list[dict[str, Any]]:
        """List a customer's reminders.

        Args:
            customer_id: The customer's id, such as "cust_01".
        """
        self._customer(customer_id)
        return [dict(r) for r in self.state["reminders"].values() if r["customer_id"] == customer_id]

    @tool(ToolKind.WRITE)
    def add_calendar_entry(self, customer_id: str, title: str, date: str, time: str) -> dict[str, Any]:
        """Add an entry to a customer's calendar.

        Args:
            customer_id: The customer's id, such as "cust_01".
            title: The entry's title.
            date: The date as YYYY-MM-DD.
            time: The time as HH:MM.
        """
        return self._add("calendar", "C", customer_id, title, date, time)

    @tool(ToolKind.READ)
    def get_calendar(self, customer_id: str, date: str) -> list[dict[str, Any]]:
        """List a customer's calendar entries on a date.

        Args:
            customer_id: The customer's id, such as "cust_01".
            date: The date as YYYY-MM-DD.
        """
        self._customer(customer_id)
        return [dict(r) for r in self.state["calendar"].values() if r["customer_id"] == customer_id and r["date"] == date]

    # ------------------------------------------------------------------ set-up (not tools)

    def track_goals(self, goals: list[dict[str, Any]]) -> None:
        """Remember the task's goals so the domain can report their status (an initialization action)."""
        self.goals = [dict(g) for g in goals]

    # ------------------------------------------------------------------ helpers

    def _add(self, table: str, prefix: str, customer_id: str, title: str, date: str, time: str) -> dict[str, Any]:
        self._customer(customer_id)
        if not title.strip():
            raise ToolError("The title must not be empty.")
        key = f"{prefix}{len(self.state[table]) + 1:03d}"
        id_field = "reminder_id" if table == "reminders" else "entry_id"
        record = {id_field: key, "customer_id": customer_id, "title": title.strip(), "date": date, "time": time}
        self.state[table][key] = record
        return dict(record)

    def _customer(self, customer_id: str) -> dict[str, Any]:
        customer = self.state["customers"].get(customer_id)
        if customer is None:
            raise ToolError(f"No customer '{customer_id}'.")
        return customer

    def _booking(self, booking_id: str) -> dict[str, Any]:
        booking = self.state["bookings"].get(booking_id)
        if booking is None:
            raise ToolError(f"No booking '{booking_id}'.")
        return booking

    def _account(self, account_id: str) -> dict[str, Any]:
        account = self.state["accounts"].get(account_id)
        if account is None:
            raise ToolError(f"No account '{account_id}'.")
        return account

    def _debit(self, account: dict[str, Any], amount: float) -> None:
        if account["balance"] < amount:
            raise ToolError(f"Account {account['account_id']} has {account['balance']:.2f}, not enough for {amount:.2f}.")
        self.state["accounts"][account["account_id"]] = {**account, "balance": round(account["balance"] - amount, 2)}


def _offer(item: dict[str, Any]) -> dict[str, Any]:
    """What a search shows of an item (not how it will be processed)."""
    return {k: v for k, v in item.items() if k not in ("confirm_delay", "confirms")}
