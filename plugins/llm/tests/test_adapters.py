"""The framework and HTTP agent adapters, the HTTP one against a real server on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import attrs
import pytest
from bench_llm.adapter import end_url_of, message_from_reply
from bench_llm.components import HttpAgent
from bench_llm.examples import FrameworkAgent, PlanQuoteBot
from structlog.testing import capture_logs

from bench_kernel import (
    GREETING,
    Agent,
    BenchError,
    ConfigError,
    ConversationSetup,
    Mode,
    ModelUnavailableError,
    ParticipantError,
    RunConfig,
    Store,
    UserMessage,
    UserSession,
    UserSimulator,
    build_report,
    get_plugin_manager,
    hookimpl,
    run,
)

TASK = "plan_price_question"


USAGE = {"prompt_tokens": 120, "completion_tokens": 7, "total_tokens": 127, "prompt_tokens_details": {"cached_tokens": 0}}


@attrs.define
class TinyAgentServer:
    """A trivial agent service: one PlanQuoteBot per conversation id; every turn payload and end notice is kept.

    Paths: /turn answers; /broken and /garbage break the contract; /reporting adds usage and model to its replies;
    /slow takes 30 s for a turn. An end notice goes to any path ending in /end: /failing/end answers 500,
    /slow/end takes 30 s, /gone/end 404.
    """

    httpd: ThreadingHTTPServer
    stopping: threading.Event = attrs.field(factory=threading.Event)
    """Set when the test ends: a handler still in a slow path returns at once instead of outliving the test."""
    payloads: list[dict[str, Any]] = attrs.field(factory=list)
    ends: list[tuple[str, dict[str, Any]]] = attrs.field(factory=list)
    bots: dict[str, PlanQuoteBot] = attrs.field(factory=dict)

    def url(self, path: str = "/turn") -> str:
        """The server's address for a path."""
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def answer(self, path: str, payload: dict[str, Any]) -> tuple[int, bytes]:
        """Status and body for one POST."""
        if path.endswith("/end"):
            self.ends.append((path, payload))
            if path.startswith("/slow"):
                self.stopping.wait(30)
            return {"/failing/end": 500, "/gone/end": 404}.get(path, 200), b"{}"
        self.payloads.append(payload)
        if path == "/broken":
            return 500, b"the agent crashed"
        if path == "/garbage":
            return 200, b"<html>not json</html>"
        if path == "/slow":
            self.stopping.wait(30)
        bot = self.bots.setdefault(payload["conversation_id"], PlanQuoteBot())
        reply = bot.reply(payload["messages"])
        if path == "/reporting":
            reply.update(usage=USAGE, model="acme-large")
        return 200, json.dumps(reply).encode()


@pytest.fixture
def server() -> Iterator[TinyAgentServer]:
    """A TinyAgentServer on an ephemeral loopback port, stopped after the test."""
    holder: list[TinyAgentServer] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            status, reply = holder[0].answer(self.path, json.loads(body))
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = _QuietServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True  # a handler still sleeping in a slow path never holds the test up
    holder.append(TinyAgentServer(httpd))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    yield holder[0]
    holder[0].stopping.set()  # slow handlers answer now, to a client that is gone: their errors are not printed
    httpd.shutdown()
    httpd.server_close()
    thread.join()


class _QuietServer(ThreadingHTTPServer):
    """Drops the error of a handler writing to a client that already left (socketserver would print it to whatever
    stderr is then, e.g. another test's captured CLI output)."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Nothing to report: a client giving up on a slow path is what the tests do."""


def test_http_agent_solves_a_task_over_http(run_bench, server: TinyAgentServer, data) -> None:
    out = run_bench({}, agent="http-agent", task_ids=[TASK], agent_options={"url": server.url()})
    row = out.conversation(TASK)
    assert (row["termination_reason"], row["error"], row["reward"]) == ("user_stop", None, 1.0)
    first, second = server.payloads
    assert first["conversation_id"] == second["conversation_id"] and len(first["conversation_id"]) == 32
    assert (first["task_id"], first["domain"], first["mode"], first["seed"]) == (TASK, "mock", "default", row["seed"])
    assert first["policy"] == data.policy and first["ticket"] is None
    assert "list_plans" in [t["function"]["name"] for t in first["tools"]]
    assert [m["role"] for m in first["messages"]] == ["assistant", "user"]
    assert first["messages"][0]["content"] == GREETING
    assert [(first["turn"], second["turn"])] == [(1, 2)]
    (result,) = second["messages"]
    assert result["role"] == "tool" and result["tool_call_id"] == "plans-2" and "Fiber 1000" in result["content"]
    assert server.ends == [("/turn/end", {"conversation_id": first["conversation_id"], "event": "end", "termination_reason": "user_stop"})]


def test_http_agent_two_conversations_get_their_own_ids(run_bench, server: TinyAgentServer) -> None:
    run_bench({}, agent="http-agent", task_ids=[TASK], trials=2, agent_options={"url": server.url()})
    assert len({p["conversation_id"] for p in server.payloads}) == 2


@pytest.mark.parametrize(("path", "error"), [("/broken", "answered HTTP 500: the agent crashed"), ("/garbage", "not JSON")])
def test_http_agent_failures_are_agent_errors(run_bench, server: TinyAgentServer, path: str, error: str) -> None:
    out = run_bench({}, agent="http-agent", task_ids=[TASK], agent_options={"url": server.url(path)})
    row = out.conversation(TASK)
    assert row["termination_reason"] == "agent_error"
    assert "ParticipantError" in row["error"] and error in row["error"]
    assert [(p, n["termination_reason"]) for p, n in server.ends] == [(f"{path}/end", "agent_error")]


def test_http_agent_unreachable_is_an_agent_error(run_bench) -> None:
    with socket.socket() as probe:  # a port that was free a moment ago, with nobody listening now
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    options = {"url": f"http://127.0.0.1:{port}/turn", "timeout_s": 5}
    out = run_bench({}, agent="http-agent", task_ids=[TASK], agent_options=options)
    row = out.conversation(TASK)
    assert row["termination_reason"] == "agent_error" and "unreachable" in row["error"]


def test_http_agent_without_url_names_the_option(run_bench) -> None:
    out = run_bench({}, agent="http-agent", task_ids=[TASK])
    row = out.conversation(TASK)
    assert row["termination_reason"] == "infrastructure_error" and "`url`" in row["error"]


@attrs.define(eq=False)
class FrameworkPlugin:
    """A third party's plugin registering a framework agent."""

    factory: Callable[[ConversationSetup], Any]

    @hookimpl
    def register_agents(self, register: Callable[[Agent], None]) -> None:
        """The adapted agent."""
        register(FrameworkAgent(name="plan-bot", factory=self.factory))


def test_framework_agent_solves_a_task_in_process(run_bench) -> None:
    made: list[PlanQuoteBot] = []

    def factory(setup: ConversationSetup) -> PlanQuoteBot:
        made.append(PlanQuoteBot())
        return made[-1]

    out = run_bench({}, agent="plan-bot", task_ids=[TASK], extra=[("plan-bot", FrameworkPlugin(factory))])
    assert out.conversation(TASK)["reward"] == 1.0
    assert [m["role"] for m in made[0].memory] == ["assistant", "user", "tool"]


def test_framework_agent_accepts_async_bots_and_solo_stop(run_bench, data) -> None:
    task = data.task("upgrade_by_email")

    @attrs.define
    class AsyncSoloBot:
        steps: list[Any]
        closed: bool = False

        async def reply(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
            if not self.steps:
                return {"content": "###STOP###"}
            action = self.steps.pop(0)
            return {"tool_calls": [{"name": action.name, "arguments": json.dumps(action.arguments)}]}

        async def close(self) -> None:
            self.closed = True

    bots: list[AsyncSoloBot] = []

    def factory(setup: ConversationSetup) -> AsyncSoloBot:
        bots.append(AsyncSoloBot(setup.task.gold_actions()))
        return bots[-1]

    plugin = FrameworkPlugin(factory)
    out = run_bench({}, agent="plan-bot", task_ids=[task.id], mode=Mode.NO_USER, extra=[("plan-bot", plugin)])
    row = out.conversation(task.id)
    assert (row["termination_reason"], row["reward"]) == ("agent_stop", 1.0)
    assert bots[0].closed


@pytest.mark.parametrize(
    "reply",
    [
        ["not", "an", "object"],
        {"content": 42},
        {"tool_calls": {"name": "x"}},
        {"tool_calls": [{"arguments": {}}]},
        {"tool_calls": [{"name": "x", "arguments": "{broken"}]},
        {"tool_calls": [{"name": "x", "arguments": [1]}]},
    ],
)
def test_replies_that_break_the_contract_are_refused(reply: Any) -> None:
    with pytest.raises(ParticipantError):
        message_from_reply(reply, 1)


def test_reply_ids_are_filled_in_when_missing() -> None:
    reply = {"content": None, "tool_calls": [{"name": "a"}, {"id": "mine", "name": "b", "arguments": None}]}
    message = message_from_reply(reply, 3)
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls or []] == [("turn3-call1", "a", {}), ("mine", "b", {})]


# --------------------------------------------------------------------------- usage and model (issue 23)


def test_reply_usage_and_model_are_kept_on_the_message() -> None:
    message = message_from_reply({"content": "Hi", "usage": USAGE, "model": "acme-large"}, 1)
    assert message.usage == {"prompt_tokens": 120, "completion_tokens": 7}
    assert message.raw_data == {"model": "acme-large"}
    bare = message_from_reply({"content": "Hi", "usage": None, "model": None}, 1)
    assert (bare.usage, bare.raw_data) == (None, None)
    assert message_from_reply({"content": "Hi", "usage": {"total_tokens": 3}}, 1).usage is None


@pytest.mark.parametrize(
    "reply",
    [
        {"content": "Hi", "usage": "lots"},
        {"content": "Hi", "usage": {"prompt_tokens": -1}},
        {"content": "Hi", "usage": {"prompt_tokens": "12"}},
        {"content": "Hi", "usage": {"completion_tokens": 1.5}},
        {"content": "Hi", "usage": {"completion_tokens": True}},
        {"content": "Hi", "model": ["acme"]},
    ],
)
def test_usage_or_model_that_break_the_contract_are_refused(reply: Any) -> None:
    with pytest.raises(ParticipantError):
        message_from_reply(reply, 1)


def test_http_agent_usage_is_stored_summed_in_the_report_and_its_cost_unknown(run_bench, server: TinyAgentServer) -> None:
    out = run_bench({}, agent="http-agent", task_ids=[TASK], agent_options={"url": server.url("/reporting")})
    row = out.conversation(TASK)
    assert (row["reward"], row["agent_cost"]) == (1.0, None)
    replies = [m for m in out.messages(TASK) if m["role"] == "assistant" and m.get("usage")]
    assert [(m["usage"], m["raw_data"]) for m in replies] == [({"prompt_tokens": 120, "completion_tokens": 7}, {"model": "acme-large"})] * 2
    report = build_report(out.store, out.run_id)
    assert report.header["agent_models"] == ["acme-large"]
    assert [c for c in report.costs if c["role"] == "agent (reported)"] == [
        {
            "arm": "agent",
            "role": "agent (reported)",
            "model": "acme-large",
            "calls": 2,
            "cached": 0,
            "errors": 0,
            "prompt_tokens": 240,
            "completion_tokens": 14,
            "cost": None,
            "unpriced": 2,
        }
    ]


def test_framework_agent_usage_and_model_are_kept_and_its_cost_unknown(run_bench) -> None:
    @attrs.define
    class ReportingBot(PlanQuoteBot):
        def reply(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
            return {**super().reply(messages), "usage": {"prompt_tokens": 5, "completion_tokens": 1}, "model": "tiny"}

    out = run_bench({}, agent="plan-bot", task_ids=[TASK], extra=[("plan-bot", FrameworkPlugin(lambda s: ReportingBot()))])
    assert out.conversation(TASK)["agent_cost"] is None
    usage = [(m["usage"], m["raw_data"]) for m in out.messages(TASK) if m["role"] == "assistant" and m.get("usage")]
    assert usage == [({"prompt_tokens": 5, "completion_tokens": 1}, {"model": "tiny"})] * 2
    report = build_report(out.store, out.run_id)
    assert report.header["agent_models"] == ["tiny"]
    assert [(c["calls"], c["prompt_tokens"], c["cost"]) for c in report.costs if c["role"] == "agent (reported)"] == [(2, 10, None)]


def test_usage_of_an_agent_whose_calls_bench_ledgers_is_not_counted_twice(run_bench) -> None:
    from bench_llm.testing import text_reply

    out = run_bench({"agent": lambda request: text_reply("Our fastest plan is Fiber 1000.")}, agent="llm-fc", task_ids=[TASK])
    report = build_report(out.store, out.run_id)
    assert [c["role"] for c in report.costs] == ["agent"]
    assert "agent_models" not in report.header
    replies = [m for m in out.messages(TASK) if m["role"] == "assistant" and m.get("usage")]
    assert replies and report.costs[0]["prompt_tokens"] == 100 * len(replies)  # the ledger's count, once


# --------------------------------------------------------------------------- the end notice (issue 23)


def test_end_url_defaults_to_url_slash_end_and_can_be_set_or_turned_off() -> None:
    assert end_url_of("http://h:8/turn", None) == "http://h:8/turn/end"
    assert end_url_of("http://h:8/turn/?k=1", None) == "http://h:8/turn/end?k=1"
    assert end_url_of("http://h:8/", None) == "http://h:8/end"
    assert end_url_of("http://h:8/turn", "http://other/bye") == "http://other/bye"
    assert end_url_of("http://h:8/turn", False) is None
    with pytest.raises(ConfigError, match="end_url"):
        end_url_of("http://h:8/turn", "ftp://other")


def test_the_end_notice_goes_to_end_url_or_nowhere(run_bench, server: TinyAgentServer) -> None:
    run_bench({}, agent="http-agent", task_ids=[TASK], agent_options={"url": server.url(), "end_url": server.url("/bye/end")})
    assert [p for p, _ in server.ends] == ["/bye/end"]
    run_bench({}, agent="http-agent", task_ids=[TASK], agent_options={"url": server.url(), "end_url": False})
    assert len(server.ends) == 1 and len(server.payloads) == 4


@pytest.mark.parametrize(
    ("path", "options", "error"),
    [
        ("/failing", {}, "HTTP 500"),
        ("/gone", {}, "HTTP 404"),
        ("/slow", {"end_timeout_s": 0.3}, "ReadTimeout"),
    ],
)
def test_a_failing_end_notice_is_logged_and_never_fails_the_conversation(
    run_bench, server: TinyAgentServer, path: str, options: dict[str, Any], error: str
) -> None:
    started = time.perf_counter()
    with capture_logs() as logs:
        out = run_bench({}, agent="http-agent", task_ids=[TASK], agent_options={"url": server.url(), "end_url": server.url(f"{path}/end"), **options})
    assert time.perf_counter() - started < 10
    row = out.conversation(TASK)
    assert (row["termination_reason"], row["error"], row["reward"]) == ("user_stop", None, 1.0)
    failures = [e for e in logs if e["event"] == "http_agent.end_failed"]
    assert len(failures) == 1 and error in failures[0]["error"] and failures[0]["url"].endswith(f"{path}/end")


def test_an_unreachable_end_point_is_logged(run_bench, server: TinyAgentServer) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with capture_logs() as logs:
        out = run_bench({}, agent="http-agent", task_ids=[TASK], agent_options={"url": server.url(), "end_url": f"http://127.0.0.1:{port}/end"})
    assert out.conversation(TASK)["reward"] == 1.0
    assert [e["error"].split(":")[0] for e in logs if e["event"] == "http_agent.end_failed"] == ["ConnectError"]


def test_no_end_notice_for_a_conversation_the_agent_never_saw(run_bench, server: TinyAgentServer, data) -> None:
    task = data.task("upgrade_by_email")
    run_bench({}, agent="http-agent", task_ids=[task.id], max_steps=1, agent_options={"url": server.url()})
    assert server.payloads == [] and server.ends == []


def test_a_cancelled_conversation_sends_an_end_notice(server: TinyAgentServer, tmp_path: Path) -> None:
    plugins = get_plugin_manager(["mock", "llm"])
    config = RunConfig(
        domain="mock",
        plugins=["mock", "llm"],
        baseline=False,
        agent="http-agent",
        task_ids=[TASK],
        run_timeout_s=1.0,
        agent_options={"url": server.url("/slow"), "end_url": server.url()[:-5] + "/fine/end"},
    )
    started = time.perf_counter()
    summary = run(config, tmp_path / "r.db", plugins=plugins)
    assert summary.status == "incomplete" and time.perf_counter() - started < 10
    assert [(p, n["termination_reason"]) for p, n in server.ends] == [("/fine/end", "cancelled")]
    assert server.ends[0][1]["conversation_id"] == server.payloads[0]["conversation_id"]


@attrs.define
class CrashingUserSession(UserSession):
    """Asks the question, then its model endpoint goes away (an infrastructure failure)."""

    said: int = 0

    async def respond(self, incoming: Any) -> UserMessage:
        self.said += 1
        if self.said > 1:
            raise ModelUnavailableError("the user's endpoint is gone")
        return UserMessage(content="Which plan is the fastest, and what does it cost?")


@attrs.define(eq=False)
class CrashingUserPlugin:
    @hookimpl
    def register_user_simulators(self, register: Callable[[UserSimulator], None]) -> None:
        """The crashing user."""

        @attrs.define(kw_only=True)
        class CrashingUser(UserSimulator):
            name: str = "crashing"

            def start(self, setup: ConversationSetup) -> UserSession:
                return CrashingUserSession()

        register(CrashingUser())


def test_an_infrastructure_error_sends_an_end_notice(run_bench, server: TinyAgentServer) -> None:
    out = run_bench(
        {}, agent="http-agent", user="crashing", task_ids=[TASK], agent_options={"url": server.url()}, extra=[("crashing", CrashingUserPlugin())]
    )
    assert out.conversation(TASK)["termination_reason"] == "infrastructure_error"
    assert [n["termination_reason"] for _, n in server.ends] == ["infrastructure_error"]


# --------------------------------------------------------------------------- fingerprints (issue 23)

BOT_SOURCE = """
from bench_llm.examples import PlanQuoteBot


def make(setup):
    return PlanQuoteBot()  # {version}
"""


@pytest.fixture
def bot_module(tmp_path: Path) -> Iterator[Callable[[str], Any]]:
    """Writes (or rewrites) a module `contract_bot` under tmp_path and imports it afresh."""
    import importlib

    sys.path.insert(0, str(tmp_path))

    def write(version: str) -> Any:
        (tmp_path / "contract_bot.py").write_text(BOT_SOURCE.format(version=version), encoding="utf-8")
        sys.modules.pop("contract_bot", None)
        importlib.invalidate_caches()
        return importlib.import_module("contract_bot")

    yield write
    sys.path.remove(str(tmp_path))
    sys.modules.pop("contract_bot", None)


def test_framework_fingerprint_hashes_the_factorys_source_and_names_the_framework(bot_module) -> None:
    import hashlib
    import importlib.metadata

    first = bot_module("v1")
    found = FrameworkAgent(name="b", factory=first.make, framework="attrs").fingerprint({})
    assert found["attrs"] == importlib.metadata.version("attrs")
    assert found["factory"] == "contract_bot:make"
    name_and_source = b"contract_bot\0" + Path(first.__file__).read_bytes() + b"\0"
    assert found["sha256"] == hashlib.sha256(name_and_source).hexdigest()
    edited = FrameworkAgent(name="b", factory=bot_module("v2").make, framework="attrs").fingerprint({})
    assert edited["sha256"] != found["sha256"] and edited["factory"] == found["factory"]
    more = FrameworkAgent(name="b", factory=first.make, source_modules=("bench_llm",)).fingerprint({})
    assert more["sha256"] not in (found["sha256"], edited["sha256"]) and "attrs" not in more


def test_framework_fingerprint_covers_the_factorys_whole_package() -> None:
    from bench_llm import examples

    found = FrameworkAgent(name="b", factory=examples.PlanQuoteBot).fingerprint({})
    alone = FrameworkAgent(name="b", factory=examples.PlanQuoteBot, source_modules=("bench_llm.examples",)).fingerprint({})
    assert found["factory"] == "bench_llm.examples:PlanQuoteBot" and found["sha256"] != alone["sha256"]


def test_a_framework_that_is_not_installed_is_refused() -> None:
    with pytest.raises(ConfigError, match="'no-such-framework-dist' is not installed"):
        FrameworkAgent(name="b", factory=PlanQuoteBot, framework="no-such-framework-dist").fingerprint({})


def test_edited_framework_code_is_a_new_run_and_refuses_a_resume(bot_module, tmp_path: Path) -> None:
    def go(version: str, **config: Any) -> str:
        plugins = get_plugin_manager(["mock", "llm"], extra=[("plan-bot", FrameworkPlugin(bot_module(version).make))])
        config = {"domain": "mock", "plugins": ["mock", "llm"], "agent": "plan-bot", "task_ids": [TASK], **config}
        return run(RunConfig(**config), tmp_path / "r.db", plugins=plugins).run_id

    first = go("v1")
    store = Store(tmp_path / "r.db")
    assert store.run(first).config["agent_fingerprint"]["factory"] == "contract_bot:make"
    store.close()
    assert go("v1") == first
    assert go("v2") != first
    with pytest.raises(BenchError, match="agent_fingerprint"):
        go("v3", run_id=first)


def test_http_agent_has_no_fingerprint_and_keeps_its_run_id(run_bench, server: TinyAgentServer) -> None:
    assert HttpAgent().fingerprint({"url": server.url()}) == {}
    out = run_bench({}, agent="http-agent", task_ids=[TASK], agent_options={"url": server.url()})
    assert "agent_fingerprint" not in out.store.run(out.run_id).config


def test_a_partial_factory_is_named_and_hashed_by_its_function(bot_module) -> None:
    import functools

    module = bot_module("v1")
    plain = FrameworkAgent(name="b", factory=module.make).fingerprint({})
    assert FrameworkAgent(name="b", factory=functools.partial(module.make)).fingerprint({}) == plain
