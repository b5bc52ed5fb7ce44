"""Fault drill: a fault-injecting HTTP proxy in front of the kernel's fake OpenAI server, and a run through it.

    python benchmarks/fault_drill.py [--conversations 60] [--rate 0.2] [--seed 7] [--concurrency 8] [--agent llm-fc]

The proxy forwards each chat request to the fake server (which plays a competent llm-fc agent and
a brief llm-user on the mock domain's upgrade task) and, for a share `rate` of them, injects one
fault instead, drawn evenly from:

    rate_limit    429 with Retry-After             server_error  500            unavailable  503
    hang          no answer past the client's timeout                           drop         connection closed at once
    truncated     200 whose body stops half-way (connection closed)             non_json     200 with an HTML body
    bad_arguments a tool call whose arguments are broken JSON                   unknown_tool a tool call to a tool nobody has

(the last two spoil the next real answer that has a tool call). Then it
prints what the run recorded and checks that every fault is typed: transport and status faults
are retried (the ledger's attempts), broken replies are `ModelResponseError` rows in the ledger that
end their conversation as agent_error or user_error, unknown tools are tool errors the agent sees,
and no conversation carries an error that is not a bench error class. With `--agent llm-react` (or
llm-act) the agent writes text actions: a broken one is read by bench-llm's parser, which sends the
text to the customer and records an `llm.reply_problem` event instead of ending the conversation. Figures are printed, never
asserted (tests/test_fault_drill.py runs a short drill and checks the verdicts).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import hashlib
import json
import logging
import random
import re
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Self

import attrs
import httpx
import structlog

from bench_kernel import ModelConfig, RunConfig, Store, run
from bench_kernel.testing import FakeOpenAIServer, Reply

FAULTS = ("rate_limit", "server_error", "unavailable", "hang", "drop", "truncated", "non_json", "bad_arguments", "unknown_tool")
RETRIED = frozenset({"rate_limit", "server_error", "unavailable", "hang", "drop", "truncated"})
"""Faults the client retries (transient by the OpenAI protocol's rules)."""
BROKEN_REPLY = frozenset({"non_json", "bad_arguments"})
"""Faults that are a definite, broken answer: not retried, they end their conversation."""
UNKNOWN_TOOL = "teleport_customer"
TASK = "upgrade_by_email"
BENCH_ERRORS = re.compile(r"\b(Model\w*Error|ContextOverflowError|BudgetExceededError|ConfigError|ToolError|ParticipantError)\b")


def world(body: dict[str, Any]) -> Reply:
    """A competent agent (function calling or text actions) and a brief customer for the upgrade task."""
    tools = [t["function"]["name"] for t in body.get("tools") or []]
    if "change_plan" in tools:
        results = sum(m["role"] == "tool" for m in body["messages"])
        if results < len(STEPS):
            return Reply.tool_call(*STEPS[results])
        return Reply.text("Done: you are now on Fiber 1000.")
    if "<tools>" in (body["messages"][0].get("content") or ""):
        results = sum(m["role"] == "user" and m["content"].startswith("Observation:") for m in body["messages"])
        name, arguments = STEPS[results] if results < len(STEPS) else ("respond", {"content": "Done: you are on Fiber 1000."})
        return Reply.text(f"Thought: step {results}.\nAction: " + json.dumps({"name": name, "arguments": arguments}))
    if not any(m["role"] == "assistant" for m in body["messages"][1:]):
        return Reply.text("Please move me to Fiber 1000; my email is ada.okafor@example.net.")
    return Reply.text("Thanks. ###STOP###")


STEPS = [("find_customer_by_email", {"email": "ada.okafor@example.net"}), ("change_plan", {"customer_id": "C-1001", "plan_id": "fiber-1000"})]


# --------------------------------------------------------------------------- the proxy


@attrs.define
class FaultProxy:
    """An HTTP/1.1 proxy on 127.0.0.1 that forwards to `upstream` and injects faults into a share of the requests."""

    upstream: str
    """The upstream base URL, e.g. http://127.0.0.1:PORT/v1."""
    rate: float = 0.2
    seed: int = 0
    faults: tuple[str, ...] = FAULTS
    hang_s: float = 3.0
    retry_after_s: float = 0.2
    every: int | None = None
    """Instead of random draws: a fault on every `every`-th request, the kinds in turn (a short drill meets them all)."""
    pending: str | None = None
    """A tool-call fault drawn for a reply without a tool call: applied to the next reply that has one."""
    injected: collections.Counter[str] = attrs.field(factory=collections.Counter)
    requests: int = 0
    port: int = 0
    _loop: asyncio.AbstractEventLoop | None = None
    _server: asyncio.Server | None = None
    _thread: threading.Thread | None = None
    _client: httpx.AsyncClient | None = None
    _writers: set[asyncio.StreamWriter] = attrs.field(factory=set)
    _handlers: set[asyncio.Task[None]] = attrs.field(factory=set)
    _closing: asyncio.Event | None = None

    @property
    def base_url(self) -> str:
        """Where clients should send their requests."""
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> Self:
        ready = threading.Event()

        def serve() -> None:
            self._loop = asyncio.new_event_loop()
            self._loop.run_until_complete(self._open())
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=serve, name="fault-proxy", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("the fault proxy did not start")
        return self

    def __exit__(self, *exc_info: object) -> None:
        assert self._loop is not None and self._thread is not None
        asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _open(self) -> None:
        self._client = httpx.AsyncClient(timeout=30)
        self._closing = asyncio.Event()
        self._server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _close(self) -> None:
        assert self._server is not None and self._client is not None and self._closing is not None
        self._closing.set()  # hanging answers give up at once
        self._server.close()
        for writer in list(self._writers):
            writer.close()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        await self._client.aclose()

    def _draw(self) -> str | None:
        """The fault for the next request (None: pass it through), from a seeded stream of draws."""
        self.requests += 1
        if self.every is not None:
            turn, rest = divmod(self.requests, self.every)
            return self.faults[(turn - 1) % len(self.faults)] if rest == 0 else None
        digest = hashlib.sha256(f"{self.seed}/{self.requests}".encode()).digest()
        rng = random.Random(int.from_bytes(digest[:8], "big"))
        return rng.choice(self.faults) if rng.random() < self.rate else None

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        self._writers.add(writer)
        try:
            while True:
                request = await _read_request(reader)
                if request is None or not await self._answer(request, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._writers.discard(writer)
            self._handlers.discard(task)
            writer.close()

    async def _answer(self, request: tuple[str, str, dict[str, str], bytes], writer: asyncio.StreamWriter) -> bool:
        """Answer one request; False when the connection must close."""
        method, path, headers, body = request
        fault = self._draw() if path.endswith("/chat/completions") else None
        if fault in ("rate_limit", "server_error", "unavailable", "non_json"):
            self.injected[fault] += 1
            writer.write(_canned(fault, self.retry_after_s))
            await writer.drain()
            return True
        if fault in ("hang", "drop"):
            self.injected[fault] += 1
            if fault == "hang":
                assert self._closing is not None
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._closing.wait(), self.hang_s)
            return False
        status, content_type, payload = await self._forward(method, path, headers, body)
        if fault == "truncated":
            self.injected[fault] += 1
            writer.write(_head(status, content_type, len(payload)) + payload[: len(payload) // 2])
            await writer.drain()
            return False
        spoil = fault if fault in ("bad_arguments", "unknown_tool") else self.pending
        if spoil is not None:
            changed = _spoil_tool_call(payload, spoil)
            if changed is None:
                self.pending = spoil
            else:
                self.injected[spoil] += 1
                payload, self.pending = changed, None
        writer.write(_head(status, content_type, len(payload)) + payload)
        await writer.drain()
        return True

    async def _forward(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, str, bytes]:
        assert self._client is not None
        root = self.upstream.removesuffix("/v1")
        sent = {k: v for k, v in headers.items() if k in ("content-type", "authorization")}
        response = await self._client.request(method, root + path, headers=sent, content=body)
        return response.status_code, response.headers.get("content-type", "application/json"), response.content


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str], bytes] | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, path, _version = lines[0].split(" ", 2)
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return method, path, headers, body


def _head(status: int, content_type: str, length: int, extra: dict[str, str] | None = None) -> bytes:
    lines = [
        f"HTTP/1.1 {status} X",
        f"Content-Type: {content_type}",
        f"Content-Length: {length}",
        "Connection: keep-alive",
        *(f"{k}: {v}" for k, v in (extra or {}).items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _canned(fault: str, retry_after_s: float) -> bytes:
    if fault == "non_json":
        body = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
        return _head(200, "text/html", len(body)) + body
    status = {"rate_limit": 429, "server_error": 500, "unavailable": 503}[fault]
    body = json.dumps({"error": {"message": f"injected {fault}", "type": "server_error", "code": None}}).encode()
    extra = {"Retry-After": f"{retry_after_s:g}"} if fault == "rate_limit" else None
    return _head(status, "application/json", len(body), extra) + body


def _spoil_tool_call(payload: bytes, fault: str) -> bytes | None:
    """The completion with its first tool call (or text action) broken; None when it has none to break."""
    try:
        document = json.loads(payload)
        message = document["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    calls = message.get("tool_calls") or []
    if calls:
        call = calls[0]["function"]
        if fault == "bad_arguments":
            call["arguments"] = call["arguments"][:-2] + ', "note": "unterminated'
        else:
            call["name"] = UNKNOWN_TOOL
        return json.dumps(document).encode()
    content = message.get("content") or ""
    action = TEXT_ACTION.search(content)
    if action is None or (fault == "unknown_tool" and action.group(1) == "respond"):
        return None
    if fault == "bad_arguments":
        # Cut inside the first argument's string: no parser can read that action.
        cut = content.index('": "', action.start(2)) + 6 if '": "' in content[action.start(2) :] else action.start(2) + 1
        message["content"] = content[:cut]
    else:
        message["content"] = content[: action.start(1)] + UNKNOWN_TOOL + content[action.end(1) :]
    return json.dumps(document).encode()


TEXT_ACTION = re.compile(r'Action: \{"name": "([^"]+)", "arguments": (\{)')


# --------------------------------------------------------------------------- the drill


@attrs.frozen(kw_only=True)
class DrillReport:
    """What a drill injected and what the run recorded."""

    injected: dict[str, int]
    requests: int
    status: str
    planned: int
    conversations: int
    terminations: dict[str, int]
    conversation_errors: dict[str, int]
    untyped_errors: list[str]
    ledger_rows: int
    ledger_errors: dict[str, int]
    retries: int
    """Sum over ledger rows of (attempts - 1): the retries the ledger accounts for."""
    unknown_tool_calls: int
    unknown_tool_errors: int
    reply_problems: int
    """llm.reply_problem events: replies a text agent could not read (sent to the customer instead)."""
    text_agent: bool
    seconds: float

    def verdicts(self) -> dict[str, bool]:
        """The checks of the drill: each fault shows up, typed, where it belongs."""
        retried = sum(self.injected.get(f, 0) for f in RETRIED)
        # A text agent reads its broken action itself (llm.reply_problem); over function calling the backend refuses it.
        unreadable = self.injected.get("bad_arguments", 0) if self.text_agent else 0
        broken = sum(self.injected.get(f, 0) for f in BROKEN_REPLY) - unreadable
        return {
            "every conversation stored, run complete": self.conversations == self.planned and self.status == "complete",
            "no untyped conversation error": not self.untyped_errors,
            "broken replies = ModelResponseError ledger rows": broken == self.ledger_errors.get("ModelResponseError", 0),
            "unreadable text actions = llm.reply_problem events": unreadable == self.reply_problems,
            "unknown tools = tool errors seen by the agent": self.injected.get("unknown_tool", 0)
            == self.unknown_tool_calls
            == self.unknown_tool_errors,
            f"retried faults = retries in the ledger ({retried} vs {self.retries})": retried == self.retries,
        }

    def lines(self) -> list[str]:
        """The drill's findings, for people."""
        out = [f"requests through the proxy: {self.requests}; faults injected: {sum(self.injected.values())}"]
        out += [f"  {k:15s} {v}" for k, v in sorted(self.injected.items())]
        out.append(f"run status: {self.status}; {self.conversations} conversations in {self.seconds:.1f}s")
        out += [f"  termination {k:22s} {v}" for k, v in sorted(self.terminations.items())]
        out += [f"  error class {k:22s} {v}" for k, v in sorted(self.conversation_errors.items())]
        out.append(f"ledger: {self.ledger_rows} model calls, {self.retries} retries")
        out += [f"  ledger error {k:21s} {v}" for k, v in sorted(self.ledger_errors.items())]
        out.append(f"unknown tool calls stored: {self.unknown_tool_calls} ({self.unknown_tool_errors} answered with an error)")
        out.append(f"llm.reply_problem events (unreadable text actions): {self.reply_problems}")
        out += [f"untyped: {e}" for e in self.untyped_errors[:5]]
        out += [f"[{'ok' if ok else 'FAIL'}] {name}" for name, ok in self.verdicts().items()]
        return out


def drill(
    workdir: Path,
    *,
    conversations: int = 60,
    rate: float = 0.2,
    seed: int = 7,
    concurrency: int = 8,
    hang_s: float = 3.0,
    timeout_s: float = 2.0,
    max_retries: int = 6,
    every: int | None = None,
    agent: str = "llm-fc",
) -> DrillReport:
    """Run `conversations` upgrade conversations (the agent, llm-user) through the fault proxy and collect the findings."""
    with FakeOpenAIServer(world, record=False) as server, FaultProxy(server.base_url, rate=rate, seed=seed, hang_s=hang_s, every=every) as proxy:
        model = ModelConfig(
            model="fake-model",
            base_url=proxy.base_url,
            timeout_s=timeout_s,
            max_retries=max_retries,
            options={"retry_base_s": 0.02, "retry_max_s": 0.3},
        )
        config = RunConfig(
            domain="mock",
            plugins=["mock", "openai", "llm"],
            agent=agent,
            user="llm-user",
            task_ids=[TASK],
            trials=conversations,
            baseline=False,
            concurrency=concurrency,
            models={"agent": model, "user": model},
            run_id="drill",
            seed=seed,
        )
        db = workdir / "drill.db"
        started = time.perf_counter()
        summary = run(config, db)
        seconds = time.perf_counter() - started
        injected, requests = dict(proxy.injected), proxy.requests
    store = Store(db)
    try:
        return _findings(store, summary.run_id, summary.status, summary.planned, injected, requests, seconds, text_agent=agent != "llm-fc")
    finally:
        store.close()


def _findings(
    store: Store, run_id: str, status: str, planned: int, injected: dict[str, int], requests: int, seconds: float, *, text_agent: bool
) -> DrillReport:
    rows = store.conversations(run_id)
    errors = [r["error"] for r in rows if r["error"]]
    calls = list(store.db.query("select error, attempts from llm_calls where run_id = ?", [run_id]))
    unknown = list(
        store.db.query(
            "select t.error from tool_calls t join conversations c on c.id = t.conversation_id where c.run_id = ? and t.name = ?",
            [run_id, UNKNOWN_TOOL],
        )
    )
    problems = store.db.execute("select count(*) from conversation_events where run_id = ? and kind = 'llm.reply_problem'", [run_id]).fetchone()[0]
    return DrillReport(
        injected=injected,
        requests=requests,
        status=status,
        planned=planned,
        conversations=len(rows),
        terminations=dict(collections.Counter(r["termination_reason"] for r in rows)),
        conversation_errors=dict(collections.Counter(_error_class(e) for e in errors)),
        untyped_errors=[e for e in errors if not BENCH_ERRORS.search(e)],
        ledger_rows=len(calls),
        ledger_errors=dict(collections.Counter(_error_class(c["error"]) for c in calls if c["error"])),
        retries=sum(max(0, (c["attempts"] or 1) - 1) for c in calls),
        unknown_tool_calls=len(unknown),
        unknown_tool_errors=sum(1 for u in unknown if u["error"]),
        reply_problems=problems,
        text_agent=text_agent,
        seconds=seconds,
    )


def _error_class(text: str) -> str:
    match = BENCH_ERRORS.search(text)
    return match.group(1) if match else "untyped"


def main() -> None:
    """Run the drill and print its findings."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conversations", type=int, default=60)
    parser.add_argument("--rate", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--agent", choices=("llm-fc", "llm-react", "llm-act"), default="llm-fc")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.ERROR), logger_factory=structlog.PrintLoggerFactory(sys.stderr))
    with tempfile.TemporaryDirectory() as tmp:
        report = drill(Path(tmp), conversations=args.conversations, rate=args.rate, seed=args.seed, concurrency=args.concurrency, agent=args.agent)
    print("\n".join(report.lines()))
    sys.exit(0 if all(report.verdicts().values()) else 1)


if __name__ == "__main__":
    main()
