"""The phone simulation and the sync with the carrier's side, on a small hand-made carrier database."""

from __future__ import annotations

from typing import Any

import pytest
from bench_telecom.domain import sync_phone
from bench_telecom.phone import PhoneTools
from bench_telecom.records import agent_state_from, phone_reference_hash, phone_state_from
from bench_telecom.tools import TelecomTools

from bench_kernel import EnvFunctionCall, Environment, ToolCall

CARRIER: dict[str, Any] = {
    "plans": [{"plan_id": "P1", "name": "Ten", "data_limit_gb": 10, "price_per_month": 30, "data_refueling_price_per_gb": 2.5}],
    "devices": [{"device_id": "D1", "device_type": "phone", "model": "Fone", "is_esim_capable": True}],
    "lines": [
        {
            "line_id": "L1",
            "phone_number": "555-0100",
            "status": "Active",
            "plan_id": "P1",
            "device_id": "D1",
            "data_used_gb": 4.0,
            "roaming_enabled": True,
        }
    ],
    "customers": [
        {
            "customer_id": "C1",
            "full_name": "Ana Example",
            "date_of_birth": "1990-01-01",
            "email": "a@example.org",
            "phone_number": "555-0100",
            "address": {"street": "1 Way", "city": "Town", "state": "ST", "zip_code": "00001"},
            "account_status": "Active",
            "line_ids": ["L1"],
            "bill_ids": ["B1"],
            "created_at": "2024-01-01T10:00:00",
        }
    ],
    "bills": [
        {
            "bill_id": "B1",
            "customer_id": "C1",
            "period_start": "2025-01-01",
            "period_end": "2025-01-31",
            "issue_date": "2025-02-01",
            "total_due": 30,
            "due_date": "2025-02-15",
            "status": "Paid",
            "line_items": [{"description": "Plan", "amount": 30, "date": "2025-02-01", "item_type": "Charge"}],
        }
    ],
}


def make_env(**options: Any) -> Environment:
    env = Environment(agent_tools=TelecomTools(agent_state_from(CARRIER, "carrier")), user_tools=PhoneTools(phone_state_from({}, "phone")), **options)
    env.sync = sync_phone
    env.run_function(EnvFunctionCall(env_type="user", func_name="set_user_info", arguments={"name": "Ana Example", "phone_number": "555-0100"}))
    return env


def phone(env: Environment, name: str, **arguments: Any) -> str:
    result = env.execute(ToolCall(name=name, arguments=arguments, requestor="user"))
    assert not result.error, result.content
    return result.content or ""


def setup(env: Environment, name: str, **arguments: Any) -> Any:
    return env.run_function(EnvFunctionCall(env_type="user", func_name=name, arguments=arguments))


@pytest.fixture
def env() -> Environment:
    return make_env()


def test_a_healthy_phone(env: Environment) -> None:
    assert phone(env, "check_status_bar") == "Status Bar: 📶³ Good | 5G | 📱 Data Enabled | 🔋 80%"
    assert phone(env, "run_speed_test") == "Speed Test Result: 220.00 Mbps (Excellent). Connection is very fast."
    setup(env, "simulate_network_search")
    assert phone(env, "run_speed_test").startswith("Speed Test Result: 275.00 Mbps (Excellent)")
    assert phone(env, "can_send_mms") == "Your messaging app can send MMS messages."


def test_data_saver_and_a_slow_vpn_cut_the_speed(env: Environment) -> None:
    setup(env, "simulate_network_search")
    phone(env, "toggle_data_saver_mode")
    assert "55.00 Mbps (Good)" in phone(env, "run_speed_test")
    phone(env, "toggle_data_saver_mode")
    setup(env, "break_vpn")
    assert "27.50 Mbps (Good)" in phone(env, "run_speed_test")
    assert "'server_performance': <PerformanceLevel.POOR: 'poor'>" in phone(env, "check_vpn_status")
    assert phone(env, "disconnect_vpn").startswith("VPN disconnected successfully.")


def test_vpn_details_never_leak_between_conversations() -> None:
    """tau2 shares one VPN-details object per process; a broken VPN in one conversation must not slow another."""
    first, second = make_env(), make_env()
    setup(first, "break_vpn")
    phone(second, "connect_vpn")
    assert "<PerformanceLevel.EXCELLENT: 'excellent'>" in phone(second, "check_vpn_status")


def test_airplane_mode_drops_service_wifi_and_vpn(env: Environment) -> None:
    phone(env, "toggle_wifi")
    phone(env, "connect_vpn")
    assert phone(env, "toggle_airplane_mode") == "Airplane Mode is now ON.\nStatus Bar: ✈️ Airplane Mode | 🔋 80%"
    assert phone(env, "toggle_wifi").startswith("Cannot change Wi-Fi settings while Airplane Mode is ON.")
    assert phone(env, "check_vpn_status") == "VPN is turned OFF."
    assert phone(env, "toggle_airplane_mode").startswith("Airplane Mode is now OFF.\nStatus Bar: 📶⁴ Excellent | 5G")


def test_a_broken_apn_is_fixed_by_reset_then_reboot_only(env: Environment) -> None:
    setup(env, "break_apn_settings")
    assert "Cellular Connection: no_service" in phone(env, "check_network_status")
    phone(env, "reset_apn_settings")
    assert "Cellular Connection: no_service" in phone(env, "check_network_status")
    assert phone(env, "reboot_device").startswith("Resetting APN settings...\nRestarting network services...")
    assert "Cellular Connection: connected" in phone(env, "check_network_status")


def test_network_mode_preference(env: Environment) -> None:
    assert phone(env, "set_network_mode_preference", mode="3g").startswith("Failed to set network mode: '3g' is not a valid option")
    phone(env, "set_network_mode_preference", mode="2g_only")
    assert "0.05 Mbps (Very Poor)" in phone(env, "run_speed_test")
    assert phone(env, "can_send_mms") == "Your messaging app cannot send MMS messages."


def test_app_permissions(env: Environment) -> None:
    setup(env, "remove_app_permission", app_name="messaging", permission="sms")
    assert phone(env, "check_app_permissions", app_name="messaging") == "App 'messaging' has permission for: storage, phone."
    assert phone(env, "grant_app_permission", app_name="messaging", permission="SMS").startswith(
        "Success. Permission 'sms' granted to app 'messaging'."
    )
    assert phone(env, "grant_app_permission", app_name="camera", permission="sms").startswith("Error. App 'camera' not found.")
    assert "available permissions: ['sms', 'storage', 'phone', 'network']" in phone(
        env, "grant_app_permission", app_name="messaging", permission="gps"
    )


def test_abroad_needs_roaming_on_the_phone_and_on_the_line(env: Environment) -> None:
    setup(env, "set_user_location", abroad=True)
    assert phone(env, "run_speed_test") == "Speed test failed: No Connection."
    phone(env, "toggle_roaming")
    assert "Excellent" in phone(env, "run_speed_test")
    env.execute(ToolCall(name="disable_roaming", arguments={"customer_id": "C1", "line_id": "L1"}))
    assert phone(env, "run_speed_test") == "Speed test failed: No Connection."


def test_the_sync_carries_usage_suspension_and_payment_requests(env: Environment) -> None:
    setup(env, "simulate_network_search")
    env.run_function(
        EnvFunctionCall(env_type="assistant", func_name="set_data_usage", arguments={"customer_id": "C1", "line_id": "L1", "data_used_gb": 10.0})
    )
    assert phone(env, "run_speed_test") == "Speed test failed: No Connection."
    env.run_function(
        EnvFunctionCall(
            env_type="assistant",
            func_name="suspend_line_for_overdue_bill",
            arguments={"customer_id": "C1", "line_id": "L1", "new_bill_id": "B9", "contract_ended": False},
        )
    )
    assert phone(env, "check_payment_request") == "No payment request has been made."
    env.execute(ToolCall(name="send_payment_request", arguments={"customer_id": "C1", "bill_id": "B9"}))
    assert phone(env, "check_payment_request") == "You have a payment request for bill B9 of 30.0 USD."
    assert phone(env, "make_payment") == "Payment of 30.0 USD has been made for bill B9."
    assert env.agent_tools.state["bills"]["B9"].status == "Paid"
    assert phone(env, "check_payment_request") == "No payment request has been made."


def test_the_phone_hash_follows_the_content_not_the_path(env: Environment) -> None:
    setup(env, "simulate_network_search")  # the first search moves the signal from good to what the surroundings give
    before = phone_reference_hash(env.user_tools.state)  # type: ignore[union-attr]
    phone(env, "toggle_data")
    assert phone_reference_hash(env.user_tools.state) != before  # type: ignore[union-attr]
    phone(env, "toggle_data")
    assert phone_reference_hash(env.user_tools.state) == before  # type: ignore[union-attr]
