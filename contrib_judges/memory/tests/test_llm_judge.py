"""The LLM judge over a real OpenAI-protocol server on 127.0.0.1: prompts out, tolerant JSON in, garbage refused."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from bench_memory.judges import Candidate, LLMJudge, MemoryJudgeError, parse_json
from bench_memory.offline import DirectModels
from bench_memory.store import StoredGoal
from bench_memory.turns import Turn

from bench_kernel import ModelConfig, Store, collect, get_plugin_manager
from bench_kernel.testing import FakeOpenAIServer, Reply

TURN = Turn(number=3, first=4, last=5, user="Please book a hotel in Paris for May 3.", system="Your hotel request is pending.")
GOAL = StoredGoal(
    id="g1",
    domain="Hotels",
    intent="book hotel",
    status="open",
    content="a hotel in Paris",
    core_content="book hotel paris",
    slots={"place": "paris"},
    history=[(1, "open")],
    first_turn=1,
    last_turn=1,
)
NEW = Candidate(domain="Payment", intent="make payment", content="pay for the hotel", core_content="make payment hotel")


def on_server(server: FakeOpenAIServer, tmp_path: Any, steps: Callable[[LLMJudge], Awaitable[Any]]) -> tuple[LLMJudge, Any]:
    """Run `steps` on an LLM judge whose calls go through the registered openai backend to the fake server."""
    store = Store(tmp_path / "l.db")
    config = ModelConfig(model="fake-model", base_url=server.base_url, max_retries=0)
    models = DirectModels({"memory-judge": config}, collect(get_plugin_manager(["openai"])), store, "r")

    async def complete(request: Any) -> Any:
        return await models.complete("memory-judge", request)

    judge = LLMJudge(complete=complete, seed=11)

    async def go() -> Any:
        try:
            return await steps(judge)
        finally:
            await models.aclose()

    try:
        return judge, asyncio.run(go())
    finally:
        store.close()


def test_every_step_asks_for_json_and_reads_it(fake_openai_server: Callable[..., FakeOpenAIServer], tmp_path: Any) -> None:
    goals = {
        "goals": [
            {"content": "Book a hotel in Paris on May 3", "core_content": "Book hotel Paris", "domain": "Hotels", "status": "PENDING"},
            {"content": "check the weather", "core_content": "check weather", "status": None},
        ]
    }
    server = fake_openai_server(
        replies=[
            Reply.text(f"Sure! Here it is:\n```json\n{json.dumps(goals)}\n```", prompt_tokens=120, completion_tokens=30),
            Reply.text('{"same": true}'),
            Reply.text('{"relation": "Dependency"}'),
            Reply.text('{"status": "completed"}'),
            Reply.text('{"status": null}'),
        ]
    )

    async def steps(judge: LLMJudge) -> Any:
        return (
            await judge.extract(TURN),
            await judge.same_goal(NEW, GOAL, TURN),
            await judge.relation(NEW, GOAL, TURN),
            [await judge.audit(GOAL, TURN, [GOAL]) for _ in range(2)],
        )

    judge, (found, same, label, audited) = on_server(server, tmp_path, steps)
    assert [(c.intent, c.core_content, c.status, c.slots.get("place")) for c in found] == [
        ("book hotel", "book hotel paris", "pending", "paris"),
        ("check weather", "check weather", None, None),
    ]
    assert (same, label, audited) == (True, "dependency", ["completed", None])
    assert (judge.calls, judge.prompt_tokens, judge.completion_tokens) == (5, 120 + 4 * 10, 30 + 4 * 5)
    first = server.completions[0]
    assert first["response_format"] == {"type": "json_object"} and first["seed"] == 11
    assert "user: Please book a hotel in Paris for May 3." in first["messages"][1]["content"]
    assert '"core_content"' in first["messages"][0]["content"]


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("I am not sure what you mean.", "no JSON"),
        ('{"goals": [{"content": "a hotel", "status": "maybe"}]}', "unknown status 'maybe'"),
        ('{"goals": "none"}', "no 'goals' list"),
        ('{"goals": [42]}', r"goals\[0\] is not a goal"),
        ('{"goals": [', "unreadable JSON"),
    ],
)
def test_garbage_is_a_judge_error(fake_openai_server: Callable[..., FakeOpenAIServer], tmp_path: Any, reply: str, message: str) -> None:
    async def steps(judge: LLMJudge) -> Any:
        return await judge.extract(TURN)

    with pytest.raises(MemoryJudgeError, match=message):
        on_server(fake_openai_server(replies=[Reply.text(reply)]), tmp_path, steps)


def test_parse_json_takes_the_first_value_whatever_surrounds_it() -> None:
    assert parse_json('noise [1, 2] more {"a": 1}') == [1, 2]
    assert parse_json('```json\n{"same": false}\n```') == {"same": False}
    with pytest.raises(MemoryJudgeError):
        parse_json(None)
