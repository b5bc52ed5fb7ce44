"""Scripted model replies for the mock domain's `upgrade_by_email` task, for tests and benchmarks over real HTTP.

Serve `upgrade_world` from `bench_kernel.testing.FakeOpenAIServer`: the agent (the request that offers the
domain's tools) looks the customer up, changes the plan and says so; the customer asks once and then stops.
Five model requests per conversation, reward 1.0 for a correct agent.
"""

from __future__ import annotations

from typing import Any

from bench_kernel.testing import Reply

UPGRADE_TASK = "upgrade_by_email"


def upgrade_world(body: dict[str, Any]) -> Reply:
    """A competent agent and a brief customer for the upgrade task."""
    tools = [t["function"]["name"] for t in body.get("tools") or []]
    if "change_plan" in tools:
        results = sum(m["role"] == "tool" for m in body["messages"])
        if results == 0:
            return Reply.tool_call("find_customer_by_email", {"email": "ada.okafor@example.net"})
        if results == 1:
            return Reply.tool_call("change_plan", {"customer_id": "C-1001", "plan_id": "fiber-1000"})
        return Reply.text("Done: you are now on Fiber 1000.")
    if not any(m["role"] == "assistant" for m in body["messages"]):
        return Reply.text("Please move me to Fiber 1000; my email is ada.okafor@example.net.")
    return Reply.text("Thanks. ###STOP###")
