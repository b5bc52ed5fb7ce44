"""A results database with every kind of thing the viewer shows, and a real `bench view` server over it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from bench_kernel import RunConfig, Store, canonical_json, get_plugin_manager, run
from bench_kernel.testing import FakeOpenAIServer, Reply, bench_cli

sys.path.insert(0, str(Path(__file__).parent))
from sloppy import Plugin as SloppyPlugin
from viewdb import ATTRIBUTED, FAILING, MOCK_TASKS, REVIEWED, SHIFTED_RUN, SLOPPY_RUN

KEY = "sk-view-test"


def bench(*args: str, env: dict[str, str] | None = None) -> None:
    """Run `bench ARGS` in-process with the plugins the database needs."""
    result = CliRunner().invoke(bench_cli(["mock", "gsrt", "llm", "openai"]), [*args, "--progress", "none"], env=env)
    assert result.exit_code == 0, result.output


def agent_model(body: dict[str, Any]) -> Reply:
    """An agent that calls a tool with a wrong argument name (a tool error), then gives up."""
    if not any(m["role"] == "tool" for m in body["messages"]):
        return Reply.tool_call("find_customer_by_email", {"mail": "nobody@example.net"})
    return Reply.text("Sorry, I could not find your account.")


def hand_added_events(db: Path) -> None:
    """Events of plugins this suite does not install (a speech channel, ATOD goal tracking) on the failing conversation.

    The rows have the shape the kernel's EventLog stores for ChannelTranscript and GoalStatusChange.
    """
    store = Store(db)
    try:
        base = {"conversation_id": FAILING, "run_id": "llm", "ts_utc": "2026-01-01T00:00:00.000+00:00"}
        store.db.table("conversation_events").insert_all(
            [
                {
                    **base,
                    "idx": 100,
                    "message_index": 1,
                    "kind": "channel.transcript",
                    "source": "voice",
                    "data_json": canonical_json(
                        {"meant": "Which plan is the fastest?", "heard": "Which plan is the fattest?", "details": {"snr_db": 5}}
                    ),
                },
                {
                    **base,
                    "idx": 101,
                    "message_index": 4,
                    "kind": "goal.status",
                    "source": "atod",
                    "data_json": canonical_json({"goal_id": "g1", "status": "failed", "previous_status": "active"}),
                },
            ]
        )
    finally:
        store.close()


def agent_with_its_own_models(db: Path) -> None:
    """The idle run's first conversation made to look like one of an agent that called its models itself (an HTTP or
    framework agent): its cost unknown, one reply reporting its usage and model, no ledgered call."""
    store = Store(db)
    try:
        cid = store.db.execute("select id from conversations where run_id = 'idle' order by id limit 1").fetchone()[0]
        store.db.execute("update conversations set agent_cost = null where id = ?", [cid])
        row = store.db.execute(
            "select idx, message_json from messages where conversation_id = ? and role = 'assistant' order by idx desc limit 1", [cid]
        ).fetchone()
        usage = {"prompt_tokens": 321, "completion_tokens": 12}
        message = {**json.loads(row[1]), "usage": usage, "raw_data": {"model": "acme-large"}}
        store.db.execute(
            "update messages set usage_json = ?, message_json = ? where conversation_id = ? and idx = ?",
            [canonical_json(usage), canonical_json(message), cid, row[0]],
        )
        store.db.conn.commit()
    finally:
        store.close()


@pytest.fixture(scope="session")
def results_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Runs: oracle with goal shifts (2 trials), oracle and do-nothing on the plain suite, an LLM agent with tool errors."""
    db = tmp_path_factory.mktemp("view") / "results.db"
    bench(
        "run", "--plugin", "mock", "--plugin", "gsrt", "--shifts", "1", "--trials", "2", "--run-id", SHIFTED_RUN, "--db", str(db), "--format", "none"
    )
    bench("run", "--plugin", "mock", "--trials", "2", "--run-id", "plain", "--db", str(db), "--format", "none")
    bench(
        "run", "--plugin", "mock", "--agent", "do-nothing", "--trials", "2", "--no-baseline", "--run-id", "idle", "--db", str(db), "--format", "none"
    )
    with FakeOpenAIServer(agent_model, api_key=KEY) as server:
        bench(
            "run",
            "--plugin",
            "mock",
            "--plugin",
            "llm",
            "--plugin",
            "openai",
            "--agent",
            "llm-fc",
            "--num-tasks",
            "2",
            "--agent-model",
            "fake-model",
            "--agent-base-url",
            server.base_url,
            "--agent-api-key-env",
            "VIEW_KEY",
            "--price",
            "fake-model=1,2",
            "--run-id",
            "llm",
            "--db",
            str(db),
            "--format",
            "none",
            env={"VIEW_KEY": KEY},
        )
    sloppy_run(db, db.parent / "numbered_tasks.json")
    hand_added_events(db)
    agent_with_its_own_models(db)
    attribution_and_review(db)
    return db


def sloppy_run(db: Path, tasks_file: Path) -> None:
    """The sloppy agent (gold actions, writes with a wrong argument) on the mock tasks renamed 1..12 (a tasks file)."""
    tasks = json.loads(MOCK_TASKS.read_text())
    tasks_file.write_text(json.dumps([{**t, "id": str(n)} for n, t in enumerate(tasks, start=1)]))
    plugins = get_plugin_manager(["mock"], extra=[("sloppy", SloppyPlugin())])
    run(RunConfig(domain="mock", agent="sloppy", tasks_file=str(tasks_file), run_id=SLOPPY_RUN), db, plugins=plugins)


def attribution_and_review(db: Path) -> None:
    """A failure attribution on one sloppy conversation (the columns added when this kernel has none yet) and a review of
    another with bench-review's own tables and writer."""
    try:
        from bench_review.rubric import Finding, Review
        from bench_review.store import migrations, save_review
    except ImportError:  # bench-review is not installed: the review test skips
        Finding = Review = migrations = save_review = None  # type: ignore[assignment,misc]
    store = Store(db, extra_migrations=[migrations] if migrations is not None else [])
    try:
        columns = {c.name for c in store.db.table("conversations").columns}
        for column in ("attribution", "attribution_evidence"):
            if column not in columns:
                store.db.execute(f"alter table conversations add column {column} text")
        evidence = {"rule": "wrong-arguments", "source": "rules", "evidence": "cancel_reservation called with another id"}
        store.db.execute(
            "update conversations set attribution = 'agent', attribution_evidence = ? where id = ?", [canonical_json(evidence), ATTRIBUTED]
        )
        store.db.conn.commit()
        if Review is None:
            return
        review = Review(
            summary="The agent used the wrong argument in its write.",
            findings=(Finding(side="agent", category="wrong_arguments", turn=4, severity="critical", reason="It changed the value."),),
        )
        save_review(store, {"conversation_id": REVIEWED, "reviewer": "review", "mode": "full"}, SLOPPY_RUN, "fake-reviewer", review)
        save_review(
            store,
            {"conversation_id": REVIEWED, "reviewer": "review2", "mode": "full"},
            SLOPPY_RUN,
            "fake-reviewer",
            "ReviewReplyError: no JSON in the reply",
        )
    finally:
        store.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def viewer(results_db: Path) -> Iterator[str]:
    """`bench view` as a real process on a free port of 127.0.0.1; its base URL. Stopped at the end."""
    port = free_port()
    bench_exe = Path(sys.executable).with_name("bench")
    process = subprocess.Popen(
        [str(bench_exe), "view", "--db", str(results_db), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "BENCH_DEBUG": ""},
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{base}/-/bench", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                _, err = process.communicate(timeout=5) if process.poll() is not None else ("", "still starting after 30 s")
                pytest.fail(f"bench view did not start: {err}")
            time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
