"""The framework and HTTP agent adapters, the HTTP one against a real server on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs
import pytest
from bench_llm.adapter import message_from_reply
from bench_llm.examples import FrameworkAgent, PlanQuoteBot

from bench_kernel import GREETING, Agent, ConversationSetup, Mode, ParticipantError, hookimpl

TASK = "plan_price_question"


@attrs.define
class TinyAgentServer:
    """A trivial agent service: one PlanQuoteBot per conversation id; every payload is kept."""

    httpd: ThreadingHTTPServer
    payloads: list[dict[str, Any]] = attrs.field(factory=list)
    bots: dict[str, PlanQuoteBot] = attrs.field(factory=dict)

    def url(self, path: str = "/turn") -> str:
        """The server's address for a path."""
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def answer(self, path: str, payload: dict[str, Any]) -> tuple[int, bytes]:
        """Status and body for one POST."""
        self.payloads.append(payload)
        if path == "/broken":
            return 500, b"the agent crashed"
        if path == "/garbage":
            return 200, b"<html>not json</html>"
        bot = self.bots.setdefault(payload["conversation_id"], PlanQuoteBot())
        return 200, json.dumps(bot.reply(payload["messages"])).encode()


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

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    holder.append(TinyAgentServer(httpd))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    yield holder[0]
    httpd.shutdown()
    httpd.server_close()
    thread.join()


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


def test_http_agent_two_conversations_get_their_own_ids(run_bench, server: TinyAgentServer) -> None:
    run_bench({}, agent="http-agent", task_ids=[TASK], trials=2, agent_options={"url": server.url()})
    assert len({p["conversation_id"] for p in server.payloads}) == 2


@pytest.mark.parametrize(("path", "error"), [("/broken", "answered HTTP 500: the agent crashed"), ("/garbage", "not JSON")])
def test_http_agent_failures_are_agent_errors(run_bench, server: TinyAgentServer, path: str, error: str) -> None:
    out = run_bench({}, agent="http-agent", task_ids=[TASK], agent_options={"url": server.url(path)})
    row = out.conversation(TASK)
    assert row["termination_reason"] == "agent_error"
    assert "ParticipantError" in row["error"] and error in row["error"]


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


@pytest.mark.parametrize("reply", [
    ["not", "an", "object"],
    {"content": 42},
    {"tool_calls": {"name": "x"}},
    {"tool_calls": [{"arguments": {}}]},
    {"tool_calls": [{"name": "x", "arguments": "{broken"}]},
    {"tool_calls": [{"name": "x", "arguments": [1]}]},
])
def test_replies_that_break_the_contract_are_refused(reply: Any) -> None:
    with pytest.raises(ParticipantError):
        message_from_reply(reply, 1)


def test_reply_ids_are_filled_in_when_missing() -> None:
    reply = {"content": None, "tool_calls": [{"name": "a"}, {"id": "mine", "name": "b", "arguments": None}]}
    message = message_from_reply(reply, 3)
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls or []] == [("turn3-call1", "a", {}), ("mine", "b", {})]
