"""Scripted model replies for the mock domain's `upgrade_by_email` task, for tests and benchmarks over real HTTP.

`upgrade_world(body)` answers a chat-completion request body with the assistant message a model would send
(plain OpenAI JSON, so `bench_kernel.testing.FakeOpenAIServer` can serve it as its responder): the agent (the
request that offers the domain's tools) looks the customer up, changes the plan and says so; the customer
asks once and then stops. Five model requests per conversation, reward 1.0 for a correct agent.
"""

from __future__ import annotations

import json
from typing import Any

UPGRADE_TASK = "upgrade_by_email"


def _says(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _calls(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def upgrade_world(body: dict[str, Any]) -> dict[str, Any]:
    """A competent agent and a brief customer for the upgrade task."""
    tools = [t["function"]["name"] for t in body.get("tools") or []]
    if "change_plan" in tools:
        results = sum(m["role"] == "tool" for m in body["messages"])
        if results == 0:
            return _calls("find_customer_by_email", {"email": "ada.okafor@example.net"}, "call_find")
        if results == 1:
            return _calls("change_plan", {"customer_id": "C-1001", "plan_id": "fiber-1000"}, "call_change")
        return _says("Done: you are now on Fiber 1000.")
    if not any(m["role"] == "assistant" for m in body["messages"]):
        return _says("Please move me to Fiber 1000; my email is ada.okafor@example.net.")
    return _says("Thanks. ###STOP###")
