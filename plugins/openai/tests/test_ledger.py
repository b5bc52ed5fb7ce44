"""A failed call is ledgered (llm_calls) with the number of requests it really made, retries included."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from bench_openai import OpenAIModel

from bench_kernel import ChatRequest, ModelConfig, ModelError, ModelHTTPError, ModelUnavailableError
from bench_kernel.modelhub.hub import ConversationModels, ModelHub
from bench_kernel.store.store import Store
from bench_kernel.testing import Reply

HELLO = ChatRequest(messages=[{"role": "user", "content": "hello"}])


def ledgered_call(tmp_path: Path, config: ModelConfig) -> tuple[BaseException | None, list[dict[str, object]]]:
    """One agent call through a run's hub into a real store; the error it raised and the llm_calls rows."""
    store = Store(tmp_path / "runs.db")
    hub = ModelHub(configs={"agent": config}, backends={"openai": OpenAIModel(name="openai")}, store=store)
    models = ConversationModels(hub, run_id="r", conversation_id="r/agent/t/0")

    async def call() -> BaseException | None:
        try:
            await models.complete("agent", HELLO)
        except ModelError as exc:
            return exc
        finally:
            await hub.aclose()
        return None

    raised = asyncio.run(call())
    rows = list(store.db.query("select attempts, error from llm_calls"))
    store.close()
    return raised, rows


def test_a_call_that_outlives_its_retries_is_ledgered_with_every_attempt(serve, config_for, tmp_path) -> None:
    server = serve(lambda body: Reply.error(503, "overloaded"))
    raised, rows = ledgered_call(tmp_path, config_for(server, max_retries=4))
    assert isinstance(raised, ModelUnavailableError) and raised.attempts == 5
    assert len(server.completions) == 5
    [row] = rows
    assert row["attempts"] == 5 and "gave up after 5 attempts" in str(row["error"])


def test_an_error_after_retries_keeps_the_attempts_that_led_to_it(serve, config_for, tmp_path) -> None:
    server = serve(replies=[Reply.error(500), Reply.error(429, "slow"), Reply.error(400, "bad request")])
    raised, rows = ledgered_call(tmp_path, config_for(server))
    assert isinstance(raised, ModelHTTPError) and raised.status == 400
    [row] = rows
    assert row["attempts"] == 3 and str(row["error"]).startswith("ModelHTTPError: HTTP 400") and "bad request" in str(row["error"])


@pytest.mark.parametrize(("replies", "attempts"), [
    ([Reply.error(502), Reply.raw("not json")], 2),
    ([Reply.text("ok")], 1),
], ids=["garbage-after-a-retry", "success"])
def test_attempts_of_garbage_and_of_successes(serve, config_for, tmp_path, replies, attempts) -> None:
    server = serve(replies=replies)
    _, rows = ledgered_call(tmp_path, config_for(server))
    assert [row["attempts"] for row in rows] == [attempts]
