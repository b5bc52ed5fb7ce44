"""banking_knowledge's packaged suite with dense retrieval on the local MiniLM backend: a scripted LLM agent (and
customer) on a fake OpenAI server on 127.0.0.1 searches, and KB_search returns the documents about its question."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from bench_minilm import INSTALL, MODEL, missing_packages
from click.testing import CliRunner

from bench_kernel.testing import FakeOpenAIServer, Reply, bench_cli

KEY = "sk-test-never-stored-0123456789"
QUERY = "cash back dispute on a purchase"
pytestmark = pytest.mark.skipif(bool(missing_packages()), reason=f"the bench-minilm[model] extra is not installed: {INSTALL}")


def world(body: dict[str, Any]) -> Reply:
    """The agent searches once and answers; the customer asks, then thanks and stops."""
    if body.get("tools") and any(t["function"]["name"] == "log_verification" for t in body["tools"]):
        if not any(m["role"] == "tool" for m in body["messages"]):
            return Reply.tool_call("KB_search", {"query": QUERY})
        return Reply.text("I found our guide on cash back disputes.")
    heard = [m for m in body["messages"] if m["role"] == "user"]
    if len(heard) <= 1:
        return Reply.text("Hi, I would like to dispute the cash back on a purchase.")
    return Reply.text("Thanks, that is all. ###STOP###")


def test_kb_search_ranks_the_packaged_documents_with_minilm(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    with FakeOpenAIServer(world, api_key=KEY) as server:
        chat = [
            a
            for role, model in (("agent", "searcher"), ("user", "customer"))
            for a in (f"--{role}-model", model, f"--{role}-base-url", server.base_url, f"--{role}-api-key-env", "FAKE_KEY")
        ]
        result = CliRunner().invoke(
            bench_cli(["banking_knowledge", "openai", "llm", "minilm"]),
            [
                "run",
                "--plugin",
                "banking_knowledge",
                "--plugin",
                "openai",
                "--plugin",
                "llm",
                "--plugin",
                "minilm",
                "--retrieval",
                "openai_embeddings",
                "--embeddings-backend",
                "minilm",
                "--embeddings-model",
                MODEL,
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
                *chat,
            ],
            env={"FAKE_KEY": KEY},
        )
        assert result.exit_code == 0, result.output
        sent_to_server = list(server.embeddings)
    with sqlite3.connect(db) as con:
        [text] = [row[0] for row in con.execute("select content from messages where role = 'tool'")]
        ledger = list(con.execute("select role, kind, model, prompt_tokens, error from llm_calls where kind = 'embeddings'"))
        [header] = con.execute("select config_json from runs").fetchall()
    ids = re.findall(r"^   ID: (\S+)$", text, flags=re.MULTILINE)
    scores = [float(s) for s in re.findall(r"^   Score: (\S+)$", text, flags=re.MULTILINE)]
    assert len(ids) == 10 and scores == sorted(scores, reverse=True) and -1.0 <= scores[-1] <= scores[0] <= 1.0
    assert set(ids[:2]) == {"doc_credit_cards_cash_back_checks_001", "doc_credit_cards_cash_back_checks_002"}
    assert sent_to_server == []  # the vectors were computed here, not by the server
    assert len(ledger) == 2 and all(row[:3] == ("embeddings", "embeddings", MODEL) and row[4] is None for row in ledger)
    assert all(row[3] > 0 for row in ledger)  # the word pieces the model read: the documents, then the query
    models = json.loads(header[0])["models"]
    assert models["embeddings"]["backend"] == "minilm" and json.loads(header[0])["retrieval"] == "openai_embeddings"
