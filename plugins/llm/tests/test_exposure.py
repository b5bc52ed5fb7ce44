"""Persona and context exposure (MM-tau-p²'s p=1 and p=2): what the agent's prompt carries about the customer."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import bench_mock
from bench_llm.profile import rules_profile
from bench_llm.testing import text_reply

from bench_kernel import ChatRequest, ChatResponse

TASK = "upgrade_by_email"
PERSONA = "Technology makes you uneasy and technical words confuse you."


def persona_tasks(tmp_path: Path) -> str:
    """The mock domain's tasks, the one these tests run with a persona text."""
    tasks = json.loads((Path(bench_mock.__file__).parent / "data" / "tasks.json").read_text())
    for task in tasks:
        if task["id"] == TASK:
            task["user_scenario"]["persona"] = PERSONA
    path = tmp_path / "persona_tasks.json"
    path.write_text(json.dumps(tasks))
    return str(path)


def chatty_user(request: ChatRequest) -> ChatResponse:
    """A user who speaks four times (annoyed by the third), then stops."""
    spoken = sum(1 for m in request.messages if m["role"] == "assistant")
    lines = [
        "Hi, I want Fiber 1000. My email is ada.okafor@example.net.",
        "Did you find my account?",
        "This is still not working, I am annoyed!",
        "Ugh, again nothing!",
        "Bye. ###STOP###",
    ]
    return text_reply(lines[min(spoken, len(lines) - 1)])


def talking_agent(request: ChatRequest) -> ChatResponse:
    return text_reply("Let me check that for you.")


def test_persona_exposure_puts_the_tasks_persona_in_the_agents_prompt(run_bench: Callable, tmp_path: Path) -> None:
    scripts, tasks = {"agent": talking_agent, "user": chatty_user}, persona_tasks(tmp_path)
    out = run_bench(scripts, agent="llm-fc", user="llm-user", task_ids=[TASK], tasks_file=tasks, exposure="persona")
    system = out.requests("agent")[0].messages[0]["content"]
    assert "<customer_persona>" in system and PERSONA in system
    plain = run_bench(scripts, agent="llm-fc", user="llm-user", task_ids=[TASK], tasks_file=tasks)
    assert "<customer_persona>" not in plain.requests("agent")[0].messages[0]["content"]


def test_context_exposure_infers_a_profile_every_three_user_messages(run_bench: Callable) -> None:
    out = run_bench({"agent": talking_agent, "user": chatty_user}, agent="llm-fc", user="llm-user", task_ids=[TASK], exposure="context")
    prompts = [r.messages[0]["content"] for r in out.requests("agent")]
    assert "<customer_profile>" not in prompts[0]
    assert any("<customer_profile>" in p for p in prompts[2:])
    conversation = out.conversation(TASK)
    events = [json.loads(e["data_json"]) for e in out.store.conversation_events(conversation["id"]) if e["kind"] == "profile.inferred"]
    assert events and events[0]["source"] == "rules" and events[0]["user_messages"] == 3
    assert events[0]["profile"]["frustration_level"] > 0


def test_the_rules_profiler_reads_frustration_and_technical_words() -> None:
    calm = rules_profile(["Hello, could you help me with my bill, please?"])
    upset = rules_profile(["My APN and VPN settings are still not working!", "Ugh, again! The network and roaming are useless!"])
    assert calm["frustration_level"] == 0 and upset["frustration_level"] > calm["frustration_level"]
    assert upset["technical_skill"] > calm["technical_skill"]
