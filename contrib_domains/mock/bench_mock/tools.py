"""The mock domain's tools: the helpdesk agent's toolkit, the customer's router, and the sync between them.

Records are plain JSON dicts shared by every conversation of a run: never change one in place.
Build a new dict and assign it (`table[key] = {**old, ...}`), or take a private copy with
`table.edit(key)`. `State.verify_untouched()` catches a tool that forgets.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from bench_kernel import Environment, ToolError, ToolKind, Toolkit, tool

Category = Literal["slow_speed", "no_connection", "equipment", "billing"]
Resolution = Literal["fixed", "no_fault_found", "customer_withdrew"]
Light = Literal["green", "amber", "red"]

TRANSFER_REPLY = "Transfer successful. A human agent will take over this conversation."


def _check_choice(value: str, choices: Any, what: str) -> None:
    allowed = get_args(choices)
    if value not in allowed:
        raise ToolError(f"Unknown {what} '{value}'. Use one of: {', '.join(allowed)}.")


class HelpdeskTools(Toolkit):
    """The helpdesk agent's tools over the customers, plans and tickets tables."""

    # ------------------------------------------------------------------ tools

    @tool(ToolKind.READ)
    def find_customer_by_email(self, email: str) -> dict[str, Any]:
        """Find a customer account by its email address.

        Args:
            email: The email address on the account, for example "name@example.net".
        """
        wanted = email.strip().lower()
        for record in self.state["customers"].values():
            if record["email"].lower() == wanted:
                return dict(record)
        raise ToolError(f"No customer with email '{email}'.")

    @tool(ToolKind.READ)
    def get_customer(self, customer_id: str) -> dict[str, Any]:
        """Get a customer's account: name, email, plan, line status and balance due.

        Args:
            customer_id: The customer id, such as "C-1001".
        """
        return dict(self._customer(customer_id))

    @tool(ToolKind.READ)
    def list_plans(self) -> list[dict[str, Any]]:
        """List every internet plan with its monthly price and speed."""
        return [dict(plan) for plan in self.state["plans"].values()]

    @tool(ToolKind.READ)
    def list_tickets(self, customer_id: str) -> list[dict[str, Any]]:
        """List a customer's support tickets, open and closed.

        Args:
            customer_id: The customer id, such as "C-1001".
        """
        self._customer(customer_id)
        return [dict(t) for t in self.state["tickets"].values() if t["customer_id"] == customer_id]

    @tool(ToolKind.WRITE)
    def change_plan(self, customer_id: str, plan_id: str) -> dict[str, Any]:
        """Move a customer to another internet plan. The line must be active.

        Args:
            customer_id: The customer id, such as "C-1001".
            plan_id: The id of the new plan, as given by list_plans.
        """
        customer = self._customer(customer_id)
        if plan_id not in self.state["plans"]:
            raise ToolError(f"Unknown plan '{plan_id}'. Use list_plans to see the plan ids.")
        if customer["plan_id"] == plan_id:
            raise ToolError(f"Customer {customer_id} is already on plan '{plan_id}'.")
        if customer["line_status"] != "active":
            raise ToolError(f"The line of customer {customer_id} is {customer['line_status']}; plans can only change on an active line.")
        updated = {**customer, "plan_id": plan_id}
        self.state["customers"][customer_id] = updated
        return dict(updated)

    @tool(ToolKind.WRITE)
    def reactivate_line(self, customer_id: str) -> dict[str, Any]:
        """Reactivate a suspended line. The customer's router must be restarted to pick the line up.

        Args:
            customer_id: The customer id, such as "C-1001".
        """
        customer = self._customer(customer_id)
        if customer["line_status"] == "active":
            raise ToolError(f"The line of customer {customer_id} is already active.")
        updated = {**customer, "line_status": "active"}
        self.state["customers"][customer_id] = updated
        return dict(updated)

    @tool(ToolKind.WRITE)
    def open_ticket(self, customer_id: str, category: Category) -> dict[str, Any]:
        """Open a support ticket for a customer.

        Args:
            customer_id: The customer id, such as "C-1001".
            category: What the ticket is about.
        """
        self._customer(customer_id)
        _check_choice(category, Category, "category")
        tickets = self.state["tickets"]
        for ticket in tickets.values():
            if ticket["customer_id"] == customer_id and ticket["category"] == category and ticket["status"] == "open":
                raise ToolError(f"Customer {customer_id} already has an open {category} ticket: {ticket['id']}.")
        # Ids follow the table size so a replayed conversation gets the same ids as the gold one.
        ticket_id = f"T-{len(tickets) + 1}"
        record = {"id": ticket_id, "customer_id": customer_id, "category": category, "status": "open", "resolution": None}
        tickets[ticket_id] = record
        return dict(record)

    @tool(ToolKind.WRITE)
    def close_ticket(self, ticket_id: str, resolution: Resolution) -> dict[str, Any]:
        """Close an open support ticket.

        Args:
            ticket_id: The ticket id, such as "T-1".
            resolution: How the ticket ended.
        """
        tickets = self.state["tickets"]
        if ticket_id not in tickets:
            raise ToolError(f"No ticket with id '{ticket_id}'.")
        _check_choice(resolution, Resolution, "resolution")
        if tickets[ticket_id]["status"] == "closed":
            raise ToolError(f"Ticket {ticket_id} is already closed.")
        updated = {**tickets[ticket_id], "status": "closed", "resolution": resolution}
        tickets[ticket_id] = updated
        return dict(updated)

    @tool(ToolKind.GENERIC)
    def transfer_to_human_agents(self, summary: str) -> str:
        """Hand the conversation to a human agent, for requests this helpdesk cannot handle.

        Args:
            summary: A short summary of the customer's request for the human agent.
        """
        return TRANSFER_REPLY

    # ------------------------------------------------------------------ for task files (not tools)

    def assert_plan(self, customer_id: str, plan_id: str) -> bool:
        """True when the customer is on this plan."""
        return self._customer(customer_id)["plan_id"] == plan_id

    def assert_line_status(self, customer_id: str, status: str) -> bool:
        """True when the customer's line has this status ("active" or "suspended")."""
        return self._customer(customer_id)["line_status"] == status

    def assert_ticket_status(self, ticket_id: str, status: str) -> bool:
        """True when the ticket exists and has this status ("open" or "closed")."""
        ticket = self.state["tickets"].get(ticket_id)
        return ticket is not None and ticket["status"] == status

    def assert_open_ticket(self, customer_id: str, category: str) -> bool:
        """True when the customer has an open ticket of this category."""
        return any(t["customer_id"] == customer_id and t["category"] == category and t["status"] == "open" for t in self.state["tickets"].values())

    # ------------------------------------------------------------------ helpers

    def _customer(self, customer_id: str) -> dict[str, Any]:
        customer = self.state["customers"].get(customer_id)
        if customer is None:
            raise ToolError(f"No customer with id '{customer_id}'.")
        return customer


class RouterTools(Toolkit):
    """The customer's side: one home router, whose status light says what is wrong."""

    # ------------------------------------------------------------------ tools

    @tool(ToolKind.READ)
    def check_router_light(self) -> str:
        """Look at the status light on the front of the router."""
        return f"The status light is {self._router()['light']}."

    @tool(ToolKind.WRITE)
    def restart_router(self) -> str:
        """Switch the router off and on again. It reads its Wi-Fi setting and the line when it starts."""
        router = self._router()
        light = boot_light(wifi_enabled=router["wifi_enabled"], line_active=router["line_active"])
        self._update(light=light, restarts=router["restarts"] + 1)
        return f"The router restarted. The status light is now {light}."

    @tool(ToolKind.WRITE)
    def toggle_wifi(self) -> str:
        """Press the Wi-Fi button on the router, switching Wi-Fi on when it is off and off when it is on."""
        enabled = not self._router()["wifi_enabled"]
        self._update(wifi_enabled=enabled)
        return f"Wi-Fi is now {'on' if enabled else 'off'}. The router applies it at its next restart."

    # ------------------------------------------------------------------ for task files (not tools)

    def break_wifi(self) -> None:
        """Set up a router whose Wi-Fi was switched off (and which has restarted since)."""
        self._update(wifi_enabled=False, light="red")

    def assert_light(self, color: str) -> bool:
        """True when the router's light shows this color."""
        return self._router()["light"] == color

    def assert_restarted(self) -> bool:
        """True when the router was restarted at least once during the conversation."""
        return self._router()["restarts"] > 0

    # ------------------------------------------------------------------ helpers

    def _router(self) -> dict[str, Any]:
        return self.state["device"]["router"]

    def _update(self, **changes: Any) -> None:
        self.state["device"]["router"] = {**self._router(), **changes}


def boot_light(*, wifi_enabled: bool, line_active: bool) -> Light:
    """The light a router shows after it starts: amber without a line, red without Wi-Fi, else green."""
    if not line_active:
        return "amber"
    if not wifi_enabled:
        return "red"
    return "green"


def sync_line_status(env: Environment) -> None:
    """Copy the router owner's line status from the agent's database into the router's state.

    The kernel calls this after every successful tool call and after setting up a task, so a
    line the agent reactivates is what the router sees at its next restart.
    """
    if env.user_tools is None:
        return
    devices = env.user_tools.state["device"]
    router = devices["router"]
    customer = env.agent_tools.state["customers"].get(router["customer_id"])
    if customer is None:
        return
    active = customer["line_status"] == "active"
    if router["line_active"] != active:
        devices["router"] = {**router, "line_active": active}
