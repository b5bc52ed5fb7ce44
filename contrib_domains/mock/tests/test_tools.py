"""Tool behaviour: schemas, refusals, deterministic ids, and the sync between account and router."""

from __future__ import annotations

from typing import Any

import pytest
from bench_mock.tools import TRANSFER_REPLY, HelpdeskTools, RouterTools

from bench_kernel import Environment, ToolCall


def call(env: Environment, name: str, requestor: str = "assistant", **arguments: Any):
    """Run one tool call the way a conversation does (errors become tool messages, then sync)."""
    return env.execute(ToolCall(id="t", name=name, arguments=arguments, requestor=requestor))  # type: ignore[arg-type]


@pytest.mark.parametrize("toolkit", [HelpdeskTools, RouterTools])
def test_every_tool_has_a_documented_schema(toolkit) -> None:
    specs = toolkit.specs()
    assert specs
    for name, spec in specs.items():
        function = spec.schema["function"]
        assert function["name"] == name
        assert function["description"] and function["description"] != name
        for param, schema in function["parameters"]["properties"].items():
            assert schema.get("description"), f"{name}.{param} has no description"


def test_tool_kinds_and_enums() -> None:
    specs = HelpdeskTools.specs()
    assert {n for n, s in specs.items() if s.mutates} == {"change_plan", "reactivate_line", "open_ticket", "close_ticket"}
    assert specs["transfer_to_human_agents"].kind.value == "generic"
    category = specs["open_ticket"].schema["function"]["parameters"]["properties"]["category"]
    assert category["enum"] == ["slow_speed", "no_connection", "equipment", "billing"]
    assert {n for n, s in RouterTools.specs().items() if s.mutates} == {"restart_router", "toggle_wifi"}


def test_agent_and_user_tool_names_do_not_clash() -> None:
    # In the no-user mode the agent reaches the router's tools by name.
    assert not set(HelpdeskTools.specs()) & set(RouterTools.specs())


def test_find_customer_ignores_case_and_spaces(make_env) -> None:
    result = call(make_env(), "find_customer_by_email", email="  Ada.Okafor@Example.NET ")
    assert not result.error and '"C-1001"' in result.content


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"customer_id": "C-9999", "plan_id": "home-300"}, "Error: No customer with id 'C-9999'."),
        ({"customer_id": "C-1001", "plan_id": "turbo"}, "Error: Unknown plan 'turbo'. Use list_plans to see the plan ids."),
        ({"customer_id": "C-1001", "plan_id": "home-300"}, "Error: Customer C-1001 is already on plan 'home-300'."),
        (
            {"customer_id": "C-1002", "plan_id": "home-300"},
            "Error: The line of customer C-1002 is suspended; plans can only change on an active line.",
        ),
    ],
)
def test_change_plan_refusals(make_env, arguments, message) -> None:
    env = make_env()
    result = call(env, "change_plan", **arguments)
    assert result.error and result.content == message
    assert env.agent_tools.state.content_hash() == make_env().agent_tools.state.content_hash()


def test_change_plan_changes_only_the_plan(make_env) -> None:
    env = make_env()
    assert not call(env, "change_plan", customer_id="C-1001", plan_id="basic-100").error
    assert env.agent_tools.assert_plan("C-1001", "basic-100")
    assert env.agent_tools.state["customers"]["C-1001"]["email"] == "ada.okafor@example.net"


def test_reactivate_refuses_an_active_line(make_env) -> None:
    result = call(make_env(), "reactivate_line", customer_id="C-1001")
    assert result.content == "Error: The line of customer C-1001 is already active."


def test_ticket_ids_follow_the_table_and_conversations_are_isolated(make_env) -> None:
    env = make_env()
    first = call(env, "open_ticket", customer_id="C-1004", category="billing")
    second = call(env, "open_ticket", customer_id="C-1004", category="equipment")
    assert '"id": "T-3"' in first.content and '"id": "T-4"' in second.content
    other = call(make_env(), "open_ticket", customer_id="C-1006", category="billing")
    assert '"id": "T-3"' in other.content


def test_ticket_refusals(make_env) -> None:
    env = make_env()
    assert (
        call(env, "open_ticket", customer_id="C-1003", category="slow_speed").content
        == "Error: Customer C-1003 already has an open slow_speed ticket: T-1."
    )
    assert call(env, "open_ticket", customer_id="C-1003", category="noise").content.startswith("Error: Unknown category 'noise'.")
    assert call(env, "close_ticket", ticket_id="T-9", resolution="fixed").content == "Error: No ticket with id 'T-9'."
    assert call(env, "close_ticket", ticket_id="T-2", resolution="fixed").content == "Error: Ticket T-2 is already closed."
    assert call(env, "close_ticket", ticket_id="T-1", resolution="done").error
    assert not call(env, "close_ticket", ticket_id="T-1", resolution="no_fault_found").error
    assert env.agent_tools.assert_ticket_status("T-1", "closed")


def test_transfer_returns_a_fixed_reply(make_env) -> None:
    assert call(make_env(), "transfer_to_human_agents", summary="anything").content == TRANSFER_REPLY


def test_bad_arguments_and_unknown_tools_become_error_messages(make_env) -> None:
    env = make_env()
    assert call(env, "get_customer").content.startswith("Error: invalid arguments:")
    assert call(env, "restart_router").content == "Error: Tool 'restart_router' not found."
    assert call(env, "change_plan", requestor="user", customer_id="C-1001", plan_id="basic-100").error


def test_wifi_fix_needs_a_restart(make_env) -> None:
    env = make_env("wifi_switched_off")
    assert call(env, "check_router_light", "user").content == "The status light is red."
    assert call(env, "toggle_wifi", "user").content.startswith("Wi-Fi is now on.")
    assert env.user_tools.assert_light("red")
    assert call(env, "restart_router", "user").content == "The router restarted. The status light is now green."


def test_sync_lets_a_restart_pick_up_a_reactivated_line(make_env) -> None:
    env = make_env("reactivate_and_restart")
    router = env.user_tools.state["device"]["router"]
    assert router["customer_id"] == "C-1002" and router["line_active"] is False
    assert call(env, "restart_router", "user").content.endswith("now amber.")
    call(env, "reactivate_line", customer_id="C-1002")
    assert env.user_tools.state["device"]["router"]["line_active"] is True
    assert call(env, "restart_router", "user").content.endswith("now green.")


def test_without_sync_the_router_never_sees_the_line(make_env) -> None:
    env = make_env("reactivate_and_restart")
    env.execute(ToolCall(name="reactivate_line", arguments={"customer_id": "C-1002"}), sync=False)
    result = env.execute(ToolCall(name="restart_router", requestor="user"), sync=False)
    assert result.content.endswith("now amber.")


def test_sync_ignores_other_customers(make_env) -> None:
    env = make_env()
    before = env.user_tools.state.content_hash()
    call(env, "reactivate_line", customer_id="C-1002")
    assert env.user_tools.state.content_hash() == before


def test_solo_agents_reach_the_router(make_env) -> None:
    env = make_env("wifi_switched_off", solo=True)
    assert call(env, "toggle_wifi").content.startswith("Wi-Fi is now on.")
    assert "restart_router" in {s["function"]["name"] for s in env.agent_schemas()}
