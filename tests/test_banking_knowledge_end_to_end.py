"""banking_knowledge end to end: an LLM agent searching the knowledge base through the embeddings and reranker
roles of a real OpenAI-protocol server on 127.0.0.1, and tau2's results files written and read back."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bench_kernel.testing import FakeOpenAIServer, Reply, bench_cli

KEY = "sk-test-never-stored-0123456789"
QUERY = "cash back dispute on a purchase"
SHARED = Path(os.environ.get("BENCH_REFERENCE") or Path(__file__).resolve().parents[1] / ".." / "shared" / "reference")
TAU2_DATA = SHARED / "tau2" / "banking_knowledge"


def world(body: dict[str, Any]) -> Reply:
    """The agent searches once and answers; the reranker rates every document 8; the user thanks and stops."""
    if body["model"] == "rater":
        return Reply.text(json.dumps({"relevance_score": 8}))
    if body.get("tools") and any(t["function"]["name"] == "log_verification" for t in body["tools"]):
        searches = [t["function"]["name"] for t in body["tools"] if t["function"]["name"].startswith("KB_search")]
        if not any(m["role"] == "tool" for m in body["messages"]):
            return Reply.tool_call(searches[0], {"query": QUERY})
        return Reply.text("I found our guide on cash back disputes.")
    heard = [m for m in body["messages"] if m["role"] == "user"]  # the agent's words, as the customer's model sees them
    if len(heard) <= 1:
        return Reply.text("Hi, I would like to dispute the cash back on a purchase.")
    return Reply.text("Thanks, that is all. ###STOP###")


def bench(*args: str) -> Any:
    result = CliRunner().invoke(bench_cli(["banking_knowledge", "openai", "llm", "tau2"]), list(args), env={"FAKE_KEY": KEY})
    assert result.exit_code == 0, result.output
    return result


def roles(server: FakeOpenAIServer, **models: str) -> list[str]:
    args = []
    for role, model in models.items():
        args += [f"--{role}-model", model, f"--{role}-base-url", server.base_url, f"--{role}-api-key-env", "FAKE_KEY"]
    return args


@pytest.mark.parametrize(
    ("variant", "models", "kinds"),
    [
        ("openai_embeddings", {"embeddings": "embedder"}, {"embeddings"}),
        ("bm25_reranker", {"judge": "rater"}, {"chat"}),
        ("openai_embeddings_reranker", {"embeddings": "embedder", "judge": "rater"}, {"embeddings", "chat"}),
    ],
)
def test_an_llm_agent_searches_through_the_embeddings_and_reranker_roles(
    tmp_path: Path, variant: str, models: dict[str, str], kinds: set[str]
) -> None:
    db = tmp_path / "r.db"
    with FakeOpenAIServer(world, api_key=KEY) as server:
        bench(
            "run",
            "--plugin",
            "banking_knowledge",
            "--plugin",
            "openai",
            "--plugin",
            "llm",
            "--retrieval",
            variant,
            "--agent",
            "llm-fc",
            "--user",
            "llm-user",
            "--task-id",
            "cash_back_dispute",
            "--no-baseline",
            "--db",
            str(db),
            "--format",
            "none",
            "--progress",
            "none",
            *roles(server, agent="searcher", user="customer", **models),
        )
        embedded = [e for e in server.embeddings]
    with sqlite3.connect(db) as con:
        [result] = con.execute("select m.content from messages m where m.role = 'tool'").fetchall()
        ledger = {(role, kind) for role, kind in con.execute("select role, kind from llm_calls")}
        [header] = con.execute("select config_json from runs").fetchall()
    assert result[0].startswith("1. ") and "   ID: doc_" in result[0] and "   Content: " in result[0]
    assert json.loads(header[0])["retrieval"] == variant
    if "embeddings" in kinds:
        assert ("embeddings", "embeddings") in ledger and embedded  # documents and the query went to the endpoint
    if variant.endswith("reranker"):
        assert ("judge", "chat") in ledger and "   Score: 8.0000" in result[0]  # the rater's score orders the hits


def test_a_variant_that_needs_a_model_role_refuses_to_start_without_it(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        bench_cli(["banking_knowledge"]), ["run", "--plugin", "banking_knowledge", "--retrieval", "bm25_reranker", "--db", str(tmp_path / "r.db")]
    )
    assert result.exit_code != 0 and "needs a model for the judge role" in result.output
    assert not (tmp_path / "r.db").exists()


@pytest.mark.skipif(not TAU2_DATA.is_dir(), reason=f"tau2's banking_knowledge data absent: {TAU2_DATA}")
def test_tau2_results_files_keep_the_tasks_as_tau2_spells_them_and_read_back_with_the_same_rewards(tmp_path: Path) -> None:
    db, out = tmp_path / "r.db", tmp_path / "results.json"
    tasks = ["task_020", "task_026", "task_050"]  # 026 seeds task_config through `agent_data` in tau2's spelling
    bench(
        "run",
        "--plugin",
        "banking_knowledge",
        "--data-dir",
        str(TAU2_DATA),
        "--retrieval",
        "no_knowledge",
        *[a for t in tasks for a in ("--task-id", t)],
        "--no-baseline",
        "--run-id",
        "bk",
        "--db",
        str(db),
        "--format",
        "none",
        "--progress",
        "none",
    )
    bench("export", "tau2-results", "bk", "--db", str(db), "-o", str(out))
    exported = json.loads(out.read_text())
    by_id = {t["id"]: t for t in exported["tasks"]}
    own = json.loads((TAU2_DATA / "tasks" / "task_026.json").read_text())
    assert by_id["task_026"]["initial_state"]["initialization_data"]["agent_data"] == own["initial_state"]["initialization_data"]["agent_data"]
    assert {s["reward_info"]["reward"] for s in exported["simulations"]} == {1.0}
    bench("import", "tau2-results", str(out), "--plugin", "banking_knowledge", "--data-dir", str(TAU2_DATA), "--db", str(tmp_path / "imported.db"))
    with sqlite3.connect(tmp_path / "imported.db") as con:
        rewards = sorted(r for (r,) in con.execute("select reward from conversations"))
    assert rewards == [1.0, 1.0, 1.0]
