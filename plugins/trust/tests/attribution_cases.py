"""A labelled set of scripted conversations with known faults, played through the real run loop on the mock domain.

Each case is a task of the mock domain (copied under the case's name, sometimes changed: an NL assertion to judge, a
broken gold action), a scripted agent, a scripted user and, for tasks with NL assertions, a scripted judge. Its `truth`
is who is really at fault, as a reader of the transcript would say; the rules (bench_trust.attribution)
must find it without knowing it. Some cases are ambiguous on purpose (the rules are expected to miss a few), so the
accuracy measured on this set is honest rather than perfect.

`play_cases(db)` plays every case in one run and returns {case: (truth, label, rule)}; `confusion(results)` tabulates.
Used by test_attribution_cases.py and benchmarks/attribution_accuracy.py.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Callable, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

import attrs

from bench_kernel import (
    Agent,
    AgentSession,
    AssistantMessage,
    Check,
    ConversationSetup,
    Judge,
    JudgeRequest,
    Message,
    ModelHTTPError,
    ModelUnavailableError,
    RunConfig,
    Store,
    ToolCall,
    UserMessage,
    UserSession,
    UserSimulator,
    get_plugin_manager,
    hookimpl,
    run,
)

Step = str | tuple[Any, ...]
"""A scripted turn: text to say, ("call", tool, arguments), ("raise", exception) or ("empty",)."""
NL = "The agent tells the customer the new monthly price before changing the plan."
STOP = "###STOP###"


@attrs.frozen(kw_only=True)
class Case:
    """One scripted conversation and who is really at fault."""

    name: str
    base: str
    """The mock task it plays."""
    truth: str
    agent: Sequence[Step]
    user: Sequence[Step]
    judge: Sequence[tuple[bool, str]] | str | None = None
    """The judge's checks (met, justification), "error" for a judge that fails, None for no NL assertion."""
    change: Callable[[dict[str, Any]], None] | None = None
    """Edits the task copy (a broken gold action)."""
    note: str = ""


def call(name: str, **arguments: Any) -> tuple[Any, ...]:
    """A scripted tool call."""
    return ("call", name, arguments)


def gold_plan(plan: str) -> Callable[[dict[str, Any]], None]:
    """A task change: the gold change_plan names another plan (one the data does not have: the gold replay fails)."""

    def change(task: dict[str, Any]) -> None:
        for action in task["evaluation_criteria"]["actions"]:
            if action["name"] == "change_plan":
                action["arguments"]["plan_id"] = plan

    return change


def gold_ticket(ticket: str) -> Callable[[dict[str, Any]], None]:
    """A task change: the gold close_ticket names a ticket the data does not have."""

    def change(task: dict[str, Any]) -> None:
        for action in task["evaluation_criteria"]["actions"]:
            if action["name"] == "close_ticket":
                action["arguments"]["ticket_id"] = ticket

    return change


ADA = "ada.okafor@example.net"
FIND_ADA = call("find_customer_by_email", email=ADA)
UPGRADE = call("change_plan", customer_id="C-1001", plan_id="fiber-1000")
ASK_UPGRADE = "Please move me to Fiber 1000. My email is ada.okafor@example.net."

CASES: list[Case] = [
    # --- user simulator: ends the call while the agent waits for its answer (tau2 #297)
    Case(
        name="u-stop-confirm-upgrade",
        base="upgrade_by_email",
        truth="user-simulator",
        agent=[FIND_ADA, "I can move you to Fiber 1000 at 64.95 a month. Shall I go ahead?"],
        user=[ASK_UPGRADE, STOP],
    ),
    Case(
        name="u-stop-confirm-close",
        base="close_fixed_ticket",
        truth="user-simulator",
        agent=[
            call("find_customer_by_email", email="chiara.mendes@example.net"),
            call("list_tickets", customer_id="C-1003"),
            "I see ticket T-1 about slow speeds. Do you want me to close it as fixed?",
        ],
        user=["Please close my slow-speed ticket, it is fixed. Email chiara.mendes@example.net.", f"Bye. {STOP}"],
    ),
    Case(
        name="u-stop-confirm-billing",
        base="billing_dispute_ticket",
        truth="user-simulator",
        agent=[FIND_ADA, "Would you like me to open a billing ticket so the double charge is refunded?"],
        user=["I was charged twice last month, my email is ada.okafor@example.net.", f"Thanks, bye {STOP}"],
    ),
    Case(
        name="u-stop-confirm-downgrade",
        base="downgrade_to_cheapest",
        truth="user-simulator",
        agent=[
            call("find_customer_by_email", email="femi.adeyemi@example.net"),
            call("list_plans"),
            "The cheapest plan is Basic 100 at 29.95 a month. Please confirm that you want to switch.",
        ],
        user=["I want the cheapest plan, email femi.adeyemi@example.net. What will I pay?", STOP],
    ),
    Case(
        name="u-transfer-before-reactivation",
        base="cleared_balance_reactivation",
        truth="user-simulator",
        agent=[
            call("find_customer_by_email", email="elif.yilmaz@example.net"),
            "Your balance is clear. Can I reactivate your line now and move you to Basic 100?",
        ],
        user=["I paid what I owed, please turn my line back on, on a cheaper plan. elif.yilmaz@example.net", "###TRANSFER###"],
    ),
    Case(
        name="u-stop-before-giving-email",
        base="upgrade_by_email",
        truth="user-simulator",
        agent=["Happy to help. Could you give me the email address on your account?"],
        user=["I want faster internet, Fiber 1000 please.", STOP],
    ),
    Case(
        name="u-stop-confirm-reactivate",
        base="reactivate_and_restart",
        truth="user-simulator",
        agent=[
            call("find_customer_by_email", email="bruno.lindqvist@example.net"),
            "Your line is suspended; I can reactivate it right now. Shall I?",
        ],
        user=["My internet is down for two days, I paid the bill. bruno.lindqvist@example.net", STOP],
    ),
    Case(
        name="u-stop-confirm-identity",
        base="cleared_balance_reactivation",
        truth="user-simulator",
        agent=["Before I change anything, can you confirm the email address on the account?"],
        user=["Please turn my internet back on and move me to a cheaper plan.", STOP],
    ),
    # --- user simulator: states facts its scenario does not hold (tau2 #172)
    Case(
        name="u-invents-email",
        base="upgrade_by_email",
        truth="user-simulator",
        agent=[
            call("find_customer_by_email", email="ada.k@example.org"),
            "I could not find an account with ada.k@example.org. Is there another address?",
        ],
        user=["Move me to Fiber 1000 please, my email is ada.k@example.org.", STOP],
    ),
    Case(
        name="u-invents-ticket-id",
        base="close_fixed_ticket",
        truth="user-simulator",
        agent=[
            call("find_customer_by_email", email="chiara.mendes@example.net"),
            call("close_ticket", ticket_id="T-7", resolution="fixed"),
            "I could not close T-7: there is no such ticket.",
        ],
        user=["Please close ticket T-7, it is fixed. My email is chiara.mendes@example.net.", f"Oh well. {STOP}"],
    ),
    Case(
        name="u-invents-flatmate",
        base="downgrade_to_cheapest",
        truth="user-simulator",
        agent=[
            call("find_customer_by_email", email="femi.adeyemi@example.net"),
            "I cannot put the account in the name of Omar Haddad without his own request.",
        ],
        user=[
            "Move me to the cheapest plan, femi.adeyemi@example.net, and put the account in the name of my flatmate Omar Haddad.",
            f"Then forget it. {STOP}",
        ],
    ),
    Case(
        name="u-invents-competitor-price",
        base="downgrade_to_cheapest",
        truth="user-simulator",
        agent=[call("find_customer_by_email", email="femi.adeyemi@example.net"), "We cannot match 19.95; our cheapest plan is 29.95 a month."],
        user=["I want to pay less, femi.adeyemi@example.net. A competitor offers me 19.95, match it.", f"No thanks. {STOP}"],
    ),
    Case(
        name="u-invents-second-email",
        base="close_fixed_ticket",
        truth="user-simulator",
        agent=[call("find_customer_by_email", email="chiara.m@example.net"), "There is no account with chiara.m@example.net."],
        user=["Close my speed ticket please, my email is chiara.m@example.net.", STOP],
    ),
    Case(
        name="u-invents-account-number",
        base="billing_dispute_ticket",
        truth="user-simulator",
        agent=[call("get_customer", customer_id="C-9042"), "There is no customer C-9042."],
        user=["I was charged twice. My customer number is C-9042.", f"Strange. {STOP}"],
    ),
    # --- user simulator: breaks the protocol
    Case(
        name="u-calls-agent-tool",
        base="upgrade_by_email",
        truth="user-simulator",
        agent=["Sure, what is your email?"],
        user=[ASK_UPGRADE, call("change_plan", customer_id="C-1001", plan_id="fiber-1000"), STOP],
    ),
    Case(
        name="u-raises",
        base="billing_dispute_ticket",
        truth="user-simulator",
        agent=["How can I help?"],
        user=["I was charged twice.", ("raise", RuntimeError("simulator lost its scenario"))],
    ),
    Case(
        name="u-empty-message",
        base="upgrade_by_email",
        truth="user-simulator",
        agent=[FIND_ADA, "What is it you need?"],
        user=[ASK_UPGRADE, ("empty",)],
    ),
    # --- agent
    Case(
        name="a-never-acts",
        base="upgrade_by_email",
        truth="agent",
        agent=["I understand you want faster internet. Our plans are great value."],
        user=[ASK_UPGRADE, f"Okay then. {STOP}"],
    ),
    Case(
        name="a-wrong-plan",
        base="upgrade_by_email",
        truth="agent",
        agent=[FIND_ADA, call("change_plan", customer_id="C-1001", plan_id="basic-100"), "Done: you are now on Basic 100."],
        user=[ASK_UPGRADE, f"Thanks. {STOP}"],
    ),
    Case(
        name="a-claims-without-writing",
        base="billing_dispute_ticket",
        truth="agent",
        agent=[FIND_ADA, "I've opened a billing ticket for you; the refund will follow."],
        user=["I was charged twice, ada.okafor@example.net.", f"Thanks! {STOP}"],
    ),
    Case(
        name="a-wrong-resolution",
        base="close_fixed_ticket",
        truth="agent",
        agent=[
            call("find_customer_by_email", email="chiara.mendes@example.net"),
            call("list_tickets", customer_id="C-1003"),
            call("close_ticket", ticket_id="T-1", resolution="no_fault_found"),
            "Your ticket T-1 is closed.",
        ],
        user=["Please close my slow-speed ticket, it is fixed. chiara.mendes@example.net", f"Great. {STOP}"],
    ),
    Case(
        name="a-refuses",
        base="downgrade_to_cheapest",
        truth="agent",
        agent=["I'm sorry, I can't change plans."],
        user=["I want the cheapest plan, femi.adeyemi@example.net.", STOP],
    ),
    Case(
        name="a-do-nothing",
        base="cleared_balance_reactivation",
        truth="agent",
        agent=["I'm sorry, I can't help with that."],
        user=["Please turn my line back on, elif.yilmaz@example.net.", STOP],
    ),
    Case(
        name="a-lookup-then-closer",
        base="upgrade_by_email",
        truth="agent",
        agent=[FIND_ADA, "I found your account. Is there anything else I can help you with?"],
        user=[ASK_UPGRADE, f"No. {STOP}"],
    ),
    Case(name="a-raises", base="upgrade_by_email", truth="agent", agent=[("raise", KeyError("plan_id"))], user=[ASK_UPGRADE]),
    Case(
        name="a-loops",
        base="plan_price_question",
        truth="agent",
        agent=[call("list_plans")] * 60,
        user=["Which plan is the fastest, and what does it cost?"],
    ),
    Case(
        name="a-needless-transfer",
        base="upgrade_by_email",
        truth="agent",
        agent=[call("transfer_to_human_agents", summary="wants an upgrade"), "I have transferred you to a human agent."],
        user=[ASK_UPGRADE, STOP],
    ),
    Case(
        name="a-half-done",
        base="cleared_balance_reactivation",
        truth="agent",
        agent=[
            call("find_customer_by_email", email="elif.yilmaz@example.net"),
            call("reactivate_line", customer_id="C-1005"),
            "Your line is active again!",
        ],
        user=["Turn my line back on and move me to a cheaper plan, elif.yilmaz@example.net.", f"Thanks. {STOP}"],
    ),
    Case(
        name="a-wrong-write-then-asks",
        base="upgrade_by_email",
        truth="agent",
        agent=[FIND_ADA, call("change_plan", customer_id="C-1001", plan_id="basic-100"), "Would you also like a new router with that?"],
        user=[ASK_UPGRADE, STOP],
    ),
    Case(
        name="a-user-repeats-agent-id",
        base="close_fixed_ticket",
        truth="agent",
        agent=[
            call("find_customer_by_email", email="chiara.mendes@example.net"),
            call("list_tickets", customer_id="C-1003"),
            "You have ticket T-1 open. Which one should I close?",
            call("close_ticket", ticket_id="T-1", resolution="customer_withdrew"),
            "T-1 is closed.",
        ],
        user=["Close my speed ticket, it's fixed. chiara.mendes@example.net", "T-1 please, it is fixed.", STOP],
    ),
    Case(
        name="a-wrong-price",
        base="downgrade_to_cheapest",
        truth="agent",
        agent=[
            call("find_customer_by_email", email="femi.adeyemi@example.net"),
            call("list_plans"),
            call("change_plan", customer_id="C-1006", plan_id="basic-100"),
            "Done: you now pay 19.99 a month.",
        ],
        user=["Move me to the cheapest plan, femi.adeyemi@example.net. What will I pay?", f"19.99, good. {STOP}"],
    ),
    Case(
        name="a-too-many-errors",
        base="upgrade_by_email",
        truth="agent",
        agent=[call("upgrade_everything", customer_id="C-1001")] * 12,
        user=[ASK_UPGRADE],
    ),
    Case(
        name="a-bad-request",
        base="upgrade_by_email",
        truth="agent",
        agent=[("raise", ModelHTTPError(400, "invalid schema for function 'change_plan'"))],
        user=[ASK_UPGRADE],
    ),
    Case(
        name="a-wrong-customer",
        base="billing_dispute_ticket",
        truth="agent",
        agent=[FIND_ADA, call("open_ticket", customer_id="C-1002", category="billing"), "I opened a billing ticket."],
        user=["I was charged twice, ada.okafor@example.net.", STOP],
    ),
    # --- judge
    Case(
        name="j-judge-fails",
        base="upgrade_by_email",
        truth="judge",
        judge="error",
        agent=[FIND_ADA, "Fiber 1000 costs 64.95 a month.", UPGRADE, "Done."],
        user=[ASK_UPGRADE, "Yes please.", STOP],
    ),
    Case(
        name="j-false-says-correct",
        base="upgrade_by_email",
        truth="judge",
        judge=[(False, "The agent correctly stated 64.95 a month before the change.")],
        agent=[FIND_ADA, "Fiber 1000 costs 64.95 a month. Shall I switch you?", UPGRADE, "Done."],
        user=[ASK_UPGRADE, "Yes.", STOP],
    ),
    Case(
        name="j-false-says-met",
        base="upgrade_by_email",
        truth="judge",
        judge=[(False, "This assertion is satisfied: the price was given first.")],
        agent=[FIND_ADA, "It is 64.95 a month. Go ahead?", UPGRADE, "Done."],
        user=[ASK_UPGRADE, "Yes.", STOP],
    ),
    Case(
        name="j-agent-also-failed-state",
        base="upgrade_by_email",
        truth="agent",
        judge="error",
        agent=[FIND_ADA, call("change_plan", customer_id="C-1001", plan_id="basic-100"), "Done."],
        user=[ASK_UPGRADE, STOP],
    ),
    Case(
        name="j-true-violation",
        base="upgrade_by_email",
        truth="agent",
        judge=[(False, "The agent did not tell the customer the price before changing the plan.")],
        agent=[FIND_ADA, UPGRADE, "Done, you are on Fiber 1000."],
        user=[ASK_UPGRADE, STOP],
    ),
    # --- task
    Case(
        name="t-gold-unknown-plan",
        base="upgrade_by_email",
        truth="task",
        change=gold_plan("fiber-2000"),
        agent=[FIND_ADA, UPGRADE, "Done: you are on Fiber 1000."],
        user=[ASK_UPGRADE, STOP],
    ),
    Case(
        name="t-gold-unknown-ticket",
        base="close_fixed_ticket",
        truth="task",
        change=gold_ticket("T-9"),
        agent=[
            call("find_customer_by_email", email="chiara.mendes@example.net"),
            call("close_ticket", ticket_id="T-1", resolution="fixed"),
            "Closed.",
        ],
        user=["Close my fixed speed ticket, chiara.mendes@example.net.", STOP],
    ),
    Case(
        name="t-gold-unknown-plan-downgrade",
        base="downgrade_to_cheapest",
        truth="task",
        change=gold_plan("basic-50"),
        agent=[
            call("find_customer_by_email", email="femi.adeyemi@example.net"),
            call("list_plans"),
            call("change_plan", customer_id="C-1006", plan_id="basic-100"),
            "Done: 29.95 a month.",
        ],
        user=["Cheapest plan please, femi.adeyemi@example.net. What will I pay?", STOP],
    ),
    # --- infrastructure
    Case(
        name="i-model-unavailable",
        base="upgrade_by_email",
        truth="infrastructure",
        agent=[("raise", ModelUnavailableError("connection refused by 127.0.0.1:9"))],
        user=[ASK_UPGRADE],
    ),
    Case(
        name="i-agent-503",
        base="upgrade_by_email",
        truth="infrastructure",
        agent=[FIND_ADA, ("raise", ModelHTTPError(503, "upstream overloaded"))],
        user=[ASK_UPGRADE],
    ),
    Case(
        name="i-user-429",
        base="billing_dispute_ticket",
        truth="infrastructure",
        agent=["How can I help?"],
        user=["I was charged twice.", ("raise", ModelHTTPError(429, "rate limited"))],
    ),
    # --- ambiguous on purpose
    Case(
        name="x-no-write-task-question",
        base="plan_price_question",
        truth="agent",
        agent=[call("list_plans"), "We have several plans. Do you want to hear about all of them?"],
        user=["Which plan is fastest and what does it cost?", STOP],
        note="no gold write: the agent never said the price",
    ),
    Case(
        name="x-user-computes-yearly",
        base="upgrade_by_email",
        truth="agent",
        agent=[FIND_ADA, "Fiber 1000 is 64.95 a month.", "Yes, 779.40 a year. Anything else?"],
        user=[ASK_UPGRADE, "So 779.40 a year?", STOP],
        note="the user's own arithmetic reads as an invented number: the rules say user-simulator",
    ),
    Case(
        name="x-stop-after-announcement",
        base="upgrade_by_email",
        truth="user-simulator",
        agent=[FIND_ADA, "I will now change your plan to Fiber 1000."],
        user=[ASK_UPGRADE, STOP],
        note="the agent announced the write without asking: the user still ended the call first, which the rules miss",
    ),
    Case(
        name="x-yes-then-agent-drops",
        base="billing_dispute_ticket",
        truth="agent",
        agent=[FIND_ADA, "Shall I open a billing ticket?", "Great. Is there anything else I can help you with?"],
        user=["I was charged twice, ada.okafor@example.net.", "Yes please.", STOP],
    ),
]


# --------------------------------------------------------------------------- scripted participants


@attrs.define
class _Script:
    steps: Sequence[Step]
    position: int = 0

    def next(self) -> Step | None:
        if self.position >= len(self.steps):
            return None
        self.position += 1
        return self.steps[self.position - 1]


def _message(step: Step, kind: type[Any], requestor: str, n: int) -> Any:
    if isinstance(step, str):
        return kind(content=step)
    if step[0] == "call":
        return kind(tool_calls=[ToolCall(id=f"{requestor}-{n}", name=step[1], arguments=dict(step[2]), requestor=requestor)])  # type: ignore[arg-type]
    if step[0] == "raise":
        raise step[1]
    return kind(content="")


@attrs.define
class CaseAgentSession(AgentSession):
    """Says and calls what its case scripts, then closes politely."""

    script: _Script

    async def respond(self, incoming: Sequence[Message]) -> AssistantMessage:
        """The next scripted step."""
        step = self.script.next()
        if step is None:
            return AssistantMessage(content="Thank you for calling.")
        return _message(step, AssistantMessage, "assistant", self.script.position)


@attrs.define
class CaseUserSession(UserSession):
    """Says and calls what its case scripts, then stops."""

    script: _Script

    async def respond(self, incoming: Sequence[Message]) -> UserMessage:
        """The next scripted step."""
        step = self.script.next()
        return UserMessage(content=STOP) if step is None else _message(step, UserMessage, "user", self.script.position)


def _case(setup: ConversationSetup) -> Case:
    return BY_NAME[setup.task.id]


@attrs.define(kw_only=True)
class CaseAgent(Agent):
    """The scripted agent of the labelled set."""

    name: str = "case-agent"
    calls_models_itself: bool = False

    def start(self, setup: ConversationSetup) -> AgentSession:
        """A session playing the case's agent script."""
        return CaseAgentSession(_Script(_case(setup).agent))


@attrs.define(kw_only=True)
class CaseUser(UserSimulator):
    """The scripted user of the labelled set."""

    name: str = "case-user"

    def start(self, setup: ConversationSetup) -> UserSession:
        """A session playing the case's user script."""
        return CaseUserSession(_Script(_case(setup).user))


@attrs.define(kw_only=True)
class CaseJudge(Judge):
    """The scripted judge of the labelled set: the case's checks, or a failure."""

    name: str = "case-judge"

    async def judge(self, request: JudgeRequest) -> list[Check]:
        """The case's verdict on its one assertion."""
        verdict = BY_NAME[request.task.id].judge
        if verdict is None or verdict == "error":
            raise ValueError("the judge's reply is empty")
        return [Check(subject=assertion, met=met, detail=detail) for assertion, (met, detail) in zip(request.assertions, verdict, strict=True)]


class CasesPlugin:
    """Registers the scripted participants and judge."""

    @hookimpl
    def register_agents(self, register: Callable[[Agent], None]) -> None:
        """The case agent."""
        register(CaseAgent())

    @hookimpl
    def register_user_simulators(self, register: Callable[[UserSimulator], None]) -> None:
        """The case user."""
        register(CaseUser())

    @hookimpl
    def register_judges(self, register: Callable[[Judge], None]) -> None:
        """The case judge."""
        register(CaseJudge())


BY_NAME = {case.name: case for case in CASES}


# --------------------------------------------------------------------------- playing and scoring


def case_tasks() -> list[dict[str, Any]]:
    """The mock domain's tasks copied under each case's name (with an NL assertion where the case judges)."""
    base = {t["id"]: t for t in json.loads(files("bench_mock").joinpath("data", "tasks.json").read_text(encoding="utf-8"))}
    tasks = []
    for case in CASES:
        task = copy.deepcopy(base[case.base])
        task["id"] = case.name
        if case.judge is not None:
            criteria = task["evaluation_criteria"]
            criteria["nl_assertions"] = [NL]
            criteria["reward_basis"] = sorted({*criteria.get("reward_basis", ["DB", "COMMUNICATE"]), "NL_ASSERTION"})
        if case.change is not None:
            case.change(task)
        tasks.append(task)
    return tasks


def play_cases(db: Path) -> dict[str, tuple[str, str | None, str | None]]:
    """Play every case in one run of the mock domain; {case: (truth, label, rule)}."""
    tasks_file = db.with_name("attribution_cases.json")
    tasks_file.write_text(json.dumps(case_tasks()), encoding="utf-8")
    plugins = get_plugin_manager(["mock", "trust", "judging"], [("attribution-cases", CasesPlugin())])
    config = RunConfig(
        domain="mock",
        plugins=["mock"],
        agent="case-agent",
        user="case-user",
        judge="case-judge",
        tasks_file=str(tasks_file),
        baseline=False,
        allow_broken_tasks=True,
        max_errors=10,
        max_steps=40,
    )
    summary = run(config, db, plugins=plugins)
    store = Store(db)
    try:
        rows = store.conversations(summary.run_id)
    finally:
        store.close()
    found = {}
    for row in rows:
        evidence = json.loads(row["attribution_evidence"]) if row["attribution_evidence"] else {}
        found[row["task_id"]] = (BY_NAME[row["task_id"]].truth, row["attribution"], evidence.get("rule"))
    return found


def confusion(results: dict[str, tuple[str, str | None, str | None]]) -> tuple[Counter[tuple[str, str]], dict[str, float]]:
    """Counts by (truth, label) and the accuracy per true label (share of its cases given that label)."""
    table: Counter[tuple[str, str]] = Counter((truth, label or "none") for truth, label, _ in results.values())
    truths = sorted({truth for truth, _ in table})
    accuracy = {t: table[(t, t)] / sum(n for (truth, _), n in table.items() if truth == t) for t in truths}
    return table, accuracy
