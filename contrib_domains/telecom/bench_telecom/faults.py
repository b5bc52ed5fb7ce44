"""The telecom domain's atomic faults and the three intents they compose into.

Each fault is a `bench_compose.Subtask`: the set-up calls that cause it (with the checks that the
set-up worked, which are run at generation time and not kept in the task), the calls that fix it
(`None` when only a human can) and any extra checks. The faults, their selection sets, the order
of the sets and the validators are tau2-bench's telecom generator's (research notes §4.9), so that
composed ids and personas come out the same and tau2's split files select the same tasks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs
from bench_compose import Subtask

from bench_kernel import EnvAssertion, EnvFunctionCall, Environment, ToolCall

REFUEL_GB = 2.0
EXPECTED_SPEED = 200
EXPECTED_SPEED_DESC = "excellent"


@attrs.frozen(kw_only=True)
class Subject:
    """Whose phone the tasks are about, and the overdue bill a suspension fault creates."""

    name: str
    phone_number: str
    overdue_bill_id: str


def user(func: str, **arguments: Any) -> EnvFunctionCall:
    """A set-up call on the phone."""
    return EnvFunctionCall(env_type="user", func_name=func, arguments=arguments)


def agent(func: str, **arguments: Any) -> EnvFunctionCall:
    """A set-up call on the carrier's side."""
    return EnvFunctionCall(env_type="assistant", func_name=func, arguments=arguments)


def check(func: str, side: str = "user", **arguments: Any) -> EnvAssertion:
    """A check on the phone (or the carrier's side)."""
    return EnvAssertion(env_type=side, func_name=func, arguments=arguments)  # type: ignore[arg-type]


def on_phone(name: str, **arguments: Any) -> ToolCall:
    """A fix the customer performs on the phone."""
    return ToolCall(name=name, arguments=arguments, requestor="user")


def by_agent(name: str, **arguments: Any) -> ToolCall:
    """A fix the agent performs."""
    return ToolCall(name=name, arguments=arguments, requestor="assistant")


def _ids(env: Environment) -> tuple[str, str]:
    """The subject's customer id and line id, looked up from the phone number the set-up gave the phone."""
    phone = env.user_tools.surroundings.phone_number  # type: ignore[union-attr]
    customer = env.agent_tools.get_customer_by_phone(phone)  # type: ignore[attr-defined]
    return customer.customer_id, env.agent_tools.line_by_phone(phone).line_id  # type: ignore[attr-defined]


def with_ids(build: Callable[[str, str], Sequence[Any]]) -> Any:
    """A step computed from the subject's ids at generation time."""
    return lambda env: build(*_ids(env))


@attrs.frozen(kw_only=True)
class Faults:
    """Every atomic fault, for one subject."""

    subject: Subject

    def all(self) -> dict[str, Subtask]:
        """Every fault by name."""
        faults = [*self.service(), *self.roaming(), *self.data(), *self.mms()]
        return {fault.name: fault for fault in faults}

    def service(self) -> list[Subtask]:
        """Faults that cost the phone its service."""
        no_service = check("assert_service_status", expected_status="no_service")
        return [
            Subtask(
                name="airplane_mode_on",
                init=[user("turn_airplane_mode_on"), check("assert_airplane_mode_status", expected_status=True), no_service],
                solution=[on_phone("toggle_airplane_mode")],
            ),
            Subtask(name="unseat_sim_card", init=[user("unseat_sim_card"), no_service], solution=[on_phone("reseat_sim_card")]),
            Subtask(name="lock_sim_card_pin", init=[user("lock_sim_card", mode="pin"), no_service], solution=None),
            Subtask(
                name="break_apn_settings",
                init=[user("break_apn_settings"), no_service],
                solution=[on_phone("reset_apn_settings"), on_phone("reboot_device")],
            ),
            Subtask(name="overdue_bill_suspension", init=[self._suspension(contract_ended=False)], solution=[with_ids(self._pay_and_resume)]),
            Subtask(name="contract_end_suspension", init=[self._suspension(contract_ended=True)], solution=None),
        ]

    def roaming(self) -> list[Subtask]:
        """Abroad, with the phone's roaming switch and the line's roaming in the wrong places."""
        abroad = user("set_user_location", abroad=True)
        phone_off: list[Any] = [user("turn_roaming_off"), check("assert_mobile_roaming_status", expected_status=False)]
        phone_on: list[Any] = [user("turn_roaming_on"), check("assert_mobile_roaming_status", expected_status=True)]
        allow = with_ids(lambda c, line: [agent("enable_roaming", customer_id=c, line_id=line)])
        disallow = with_ids(
            lambda c, line: [
                agent("disable_roaming", customer_id=c, line_id=line),
                user("simulate_network_search"),
                check("assert_internet_speed", expected_speed=0, expected_desc="No Connection"),
            ]
        )
        enable = with_ids(lambda c, line: [by_agent("enable_roaming", customer_id=c, line_id=line)])
        return [
            Subtask(name="user_abroad_roaming_enabled_off", init=[abroad, *phone_off, allow], solution=[on_phone("toggle_roaming")]),
            Subtask(name="user_abroad_roaming_disabled_on", init=[abroad, *phone_on, disallow], solution=[enable]),
            Subtask(name="user_abroad_roaming_disabled_off", init=[abroad, *phone_off, disallow], solution=[enable, on_phone("toggle_roaming")]),
        ]

    def data(self) -> list[Subtask]:
        """Faults that stop or slow mobile data."""
        return [
            Subtask(
                name="data_mode_off",
                init=[user("turn_data_off"), check("assert_mobile_data_status", expected_status=False)],
                solution=[on_phone("toggle_data")],
            ),
            Subtask(
                name="data_saver_mode_on",
                init=[user("turn_data_saver_mode_on"), check("assert_mobile_data_saver_mode_status", expected_status=True)],
                solution=[on_phone("toggle_data_saver_mode")],
            ),
            Subtask(
                name="bad_network_preference",
                init=[user("set_network_mode_preference", mode="2g_only")],
                solution=[on_phone("set_network_mode_preference", mode="4g_5g_preferred")],
            ),
            Subtask(name="bad_vpn", init=[user("break_vpn"), check("assert_internet_not_excellent")], solution=[on_phone("disconnect_vpn")]),
            Subtask(
                name="data_usage_exceeded",
                init=[self._use_up_allowance],
                solution=[with_ids(lambda c, line: [by_agent("refuel_data", customer_id=c, line_id=line, gb_amount=REFUEL_GB)])],
                assertions=[self._refuelled],
            ),
            Subtask(name="data_usage_exceeded_no_refuel", init=[self._use_up_allowance_after_refuel], solution=None),
        ]

    def mms(self) -> list[Subtask]:
        """Faults that stop picture messages only."""
        grant = [
            on_phone("grant_app_permission", app_name="messaging", permission="sms"),
            on_phone("grant_app_permission", app_name="messaging", permission="storage"),
        ]
        remove = [
            user("remove_app_permission", app_name="messaging", permission="sms"),
            user("remove_app_permission", app_name="messaging", permission="storage"),
        ]
        return [
            Subtask(
                name="bad_wifi_calling", init=[user("set_wifi_calling", enabled=True, mms_over_wifi=True)], solution=[on_phone("toggle_wifi_calling")]
            ),
            Subtask(
                name="break_apn_mms_setting",
                init=[user("break_apn_mms_setting")],
                solution=[on_phone("reset_apn_settings"), on_phone("reboot_device")],
            ),
            Subtask(name="break_app_sms_permission", init=[remove[0]], solution=[grant[0]]),
            Subtask(name="break_app_storage_permission", init=[remove[1]], solution=[grant[1]]),
            Subtask(name="break_app_both_permissions", init=remove, solution=grant),
        ]

    # ------------------------------------------------------------------ steps computed from the state

    def _suspension(self, *, contract_ended: bool) -> Callable[[Environment], Sequence[Any]]:
        bill = self.subject.overdue_bill_id

        def steps(customer: str, line: str) -> list[Any]:
            return [
                agent("suspend_line_for_overdue_bill", customer_id=customer, line_id=line, new_bill_id=bill, contract_ended=contract_ended),
                user("simulate_network_search"),
                check("assert_service_status", expected_status="no_service"),
                check("assert_overdue_bill_exists", "assistant", customer_id=customer, overdue_bill_id=bill),
                check("assert_line_status", "assistant", customer_id=customer, line_id=line, expected_status="Suspended"),
            ]

        return with_ids(steps)

    def _pay_and_resume(self, customer: str, line: str) -> list[ToolCall]:
        return [
            by_agent("send_payment_request", customer_id=customer, bill_id=self.subject.overdue_bill_id),
            on_phone("make_payment"),
            by_agent("resume_line", customer_id=customer, line_id=line),
            on_phone("reboot_device"),
        ]

    @staticmethod
    def _use_up_allowance(env: Environment) -> list[Any]:
        customer, line = _ids(env)
        return [
            agent("set_data_usage", customer_id=customer, line_id=line, data_used_gb=over_allowance(env, line)),
            check("assert_mobile_data_usage_exceeded", expected_status=True),
        ]

    @staticmethod
    def _use_up_allowance_after_refuel(env: Environment) -> list[Any]:
        customer, line = _ids(env)
        return [
            agent("refuel_data", customer_id=customer, line_id=line, gb_amount=REFUEL_GB),
            agent("set_data_usage", customer_id=customer, line_id=line, data_used_gb=over_allowance(env, line, REFUEL_GB)),
            check("assert_mobile_data_usage_exceeded", expected_status=True),
        ]

    @staticmethod
    def _refuelled(env: Environment) -> list[EnvAssertion]:
        customer, line = _ids(env)
        before = env.agent_tools.state["lines"][line].data_refueling_gb
        return [check("assert_data_refueling_amount", "assistant", customer_id=customer, line_id=line, expected_amount=before + REFUEL_GB)]


def over_allowance(env: Environment, line_id: str, extra_gb: float = 0.0) -> float:
    """Data used just past the line's allowance (plan, extra data bought, extra_gb about to be bought): 15.1 GB in tau2's data."""
    line = env.agent_tools.state["lines"][line_id]
    limit = env.agent_tools.plan_of(line).data_limit_gb  # type: ignore[attr-defined]
    return limit + line.data_refueling_gb + extra_gb + OVERSHOOT_GB


OVERSHOOT_GB = 0.1


# --------------------------------------------------------------------------- the three intents


@attrs.frozen(kw_only=True)
class Intent:
    """One kind of complaint: its selection sets (by fault name), validator and checks."""

    name: str
    sets: tuple[tuple[str, ...], ...]
    required_from: int = 0
    """At least one fault from the sets at this index on (0: any non-empty choice)."""
    location: bool = True
    """Whether the scenario says where the customer is."""

    def assertions(self, fixable: bool, subject: Subject) -> list[EnvAssertion]:
        """The checks of a fixed task, or of a task only a human can fix."""
        if self.name == "service_issue":
            if not fixable:
                return [check("assert_service_status", expected_status="no_service")]
            return [
                check("assert_service_status", expected_status="connected"),
                check("assert_no_overdue_bill", "assistant", overdue_bill_id=subject.overdue_bill_id),
            ]
        if self.name == "mobile_data_issue":
            if not fixable:
                return [
                    check("assert_mobile_data_status", expected_status=False),
                    check("assert_internet_speed", expected_speed=0, expected_desc=None),
                ]
            return [
                check("assert_mobile_data_status", expected_status=True),
                check("assert_internet_speed", expected_speed=EXPECTED_SPEED, expected_desc=EXPECTED_SPEED_DESC),
            ]
        return [check("assert_can_send_mms", expected_status=fixable)]

    def valid(self, choice: Sequence[Any]) -> bool:
        """tau2's validators: a mobile-data or MMS task needs a fault of its own kind."""
        return any(item is not None for item in choice[self.required_from :])


AIRPLANE, SIM = ("airplane_mode_on",), ("unseat_sim_card",)
ROAMING = ("user_abroad_roaming_enabled_off", "user_abroad_roaming_disabled_on", "user_abroad_roaming_disabled_off")
USAGE = ("data_usage_exceeded", "data_usage_exceeded_no_refuel")
INTENTS: tuple[Intent, ...] = (
    Intent(
        name="mobile_data_issue",
        required_from=1,
        sets=(AIRPLANE, ROAMING, ("data_mode_off",), ("data_saver_mode_on",), ("bad_network_preference",), ("bad_vpn",), USAGE),
    ),
    Intent(
        name="service_issue",
        location=False,
        sets=(AIRPLANE, SIM, ("lock_sim_card_pin",), ("break_apn_settings",), ("overdue_bill_suspension", "contract_end_suspension")),
    ),
    Intent(
        name="mms_issue",
        required_from=5,
        sets=(
            AIRPLANE,
            SIM,
            ("data_mode_off",),
            USAGE,
            ROAMING,
            ("bad_network_preference",),
            ("bad_wifi_calling",),
            ("break_apn_mms_setting",),
            ("break_app_sms_permission", "break_app_storage_permission", "break_app_both_permissions"),
        ),
    ),
)
PERSONAS: tuple[str, ...] = ("None", "Easy", "Hard")
