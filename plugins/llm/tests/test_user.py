"""llm-user: the flipped view, stop tokens, personas, and device tool calls in dual control."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench_llm.testing import own_tool_turns, text_reply, tool_reply

from bench_kernel import GREETING, ChatRequest, ChatResponse, ConfigError, DomainData

OPENING = "My Wi-Fi is gone since this morning. My email is ada.okafor@example.net."
GUIDE = "Please press the Wi-Fi button, then restart the router, and tell me the light."


def wifi_customer(request: ChatRequest) -> ChatResponse:
    """Opens, then does the three router steps one per turn, reports, and stops once the agent answers."""
    steps = ["check_router_light", "toggle_wifi", "restart_router"]
    spoke = any(m["role"] == "assistant" and m["content"] for m in request.messages)
    done = own_tool_turns(request)
    if not spoke:
        return text_reply(OPENING)
    if done < len(steps):
        return tool_reply(steps[done], {})
    if request.messages[-1]["role"] == "tool":
        return text_reply("Done: the light is green again.")
    return text_reply("Great, thanks! ###STOP###")


def test_user_tool_calls_run_on_the_user_side_and_stop_ends_it(run_bench) -> None:
    out = run_bench({"agent": lambda r: text_reply(GUIDE), "user": wifi_customer}, agent="llm-fc", user="llm-user", task_ids=["wifi_switched_off"])
    row = out.conversation("wifi_switched_off")
    assert (row["termination_reason"], row["error"], row["reward"]) == ("user_stop", None, 1.0)
    calls = out.tool_calls("wifi_switched_off")
    assert [(c["name"], c["requestor"], c["error"]) for c in calls] == [
        ("check_router_light", "user", 0),
        ("toggle_wifi", "user", 0),
        ("restart_router", "user", 0),
    ]
    assert out.messages("wifi_switched_off")[-1]["content"] == "Great, thanks! ###STOP###"


def test_the_user_sees_roles_flipped_and_only_its_own_tools(run_bench) -> None:
    out = run_bench({"agent": lambda r: text_reply(GUIDE), "user": wifi_customer}, agent="llm-fc", user="llm-user", task_ids=["wifi_switched_off"])
    first, *_, last = out.requests("user")
    assert [m["role"] for m in first.messages] == ["system", "user"]
    assert first.messages[1]["content"] == GREETING
    assert [t["function"]["name"] for t in first.tools] == ["check_router_light", "restart_router", "toggle_wifi"]
    assert first.tool_choice == "auto" and first.seed == out.conversation("wifi_switched_off")["seed"]
    roles = [m["role"] for m in last.messages]
    assert roles == ["system", "user", "assistant", "user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant", "user"]
    assert last.messages[2]["content"] == OPENING and last.messages[3]["content"] == GUIDE
    assert last.messages[5]["tool_call_id"] == last.messages[4]["tool_calls"][0]["id"]
    assert last.messages[9]["content"] == "The router restarted. The status light is now green."


def test_the_agent_never_sees_the_users_device_actions(run_bench) -> None:
    out = run_bench({"agent": lambda r: text_reply(GUIDE), "user": wifi_customer}, agent="llm-fc", user="llm-user", task_ids=["wifi_switched_off"])
    last = out.requests("agent")[-1]
    assert [m["role"] for m in last.messages] == ["system", "assistant", "user", "assistant", "user"]
    assert last.messages[-1]["content"] == "Done: the light is green again."


def test_user_prompt_has_guidelines_scenario_and_tool_rules(run_bench, data: DomainData) -> None:
    out = run_bench(
        {"agent": lambda r: text_reply(GUIDE), "user": wifi_customer},
        agent="llm-fc",
        user="llm-user",
        task_ids=["wifi_switched_off", "upgrade_by_email"],
    )
    prompts = {r.messages[0]["content"] for r in out.requests("user")}
    with_tools = next(p for p in prompts if "Your devices cannot find your home Wi-Fi" in p)
    assert f"<scenario>\n{data.task('wifi_switched_off').user_scenario.render().strip()}\n</scenario>" in with_tools
    for token in ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"):
        assert token in with_tools
    assert "either call one tool or write" in with_tools


@pytest.mark.parametrize("token", ["###TRANSFER###", "###OUT-OF-SCOPE###"])
def test_other_stop_tokens_end_the_conversation(run_bench, token: str) -> None:
    out = run_bench(
        {"agent": lambda r: text_reply("I cannot help with that."), "user": lambda r: text_reply(f"Ok. {token}")},
        agent="llm-fc",
        user="llm-user",
        task_ids=["upgrade_by_email"],
    )
    row = out.conversation("upgrade_by_email")
    assert row["termination_reason"] == "user_stop"
    assert len(out.messages("upgrade_by_email")) == 2


def test_persona_reaches_the_user_prompt(run_bench, data: DomainData, tmp_path: Path) -> None:
    tasks = json.loads((Path(data.source) / "tasks.json").read_text())
    task = next(t for t in tasks if t["id"] == "upgrade_by_email")
    task["user_scenario"]["persona"] = "A retired sailor who answers in short, salty sentences."
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([task]))
    out = run_bench(
        {"agent": lambda r: text_reply("Hello"), "user": lambda r: text_reply("Aye. ###STOP###")},
        agent="llm-fc",
        user="llm-user",
        tasks_file=str(path),
    )
    system = out.requests("user")[0].messages[0]["content"]
    assert "Persona:\n\tA retired sailor who answers in short, salty sentences." in system
    assert system.index("Persona:") < system.index("Instructions:") < system.index("</scenario>")


def test_without_a_user_model_the_run_is_refused(run_bench) -> None:
    with pytest.raises(ConfigError, match="--user-model"):
        run_bench({"agent": lambda r: text_reply("Hello")}, agent="llm-fc", user="llm-user", task_ids=["upgrade_by_email"])
