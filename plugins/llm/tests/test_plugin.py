"""The plugin as bench sees it, and how sessions pick up a conversation already under way."""

from __future__ import annotations

import builtins
import pathlib
import subprocess
import sys

import attrs
import bench_llm
import pytest
from bench_llm import FunctionCallingAgent, TextActionAgent
from bench_llm.chat import new_messages
from bench_llm.testing import own_tool_turns, text_reply, tool_reply

from bench_kernel import (
    AssistantMessage,
    ChatRequest,
    ChatResponse,
    ConfigError,
    ConversationSetup,
    DomainData,
    Mode,
    ModelConfig,
    UserMessage,
    collect,
    get_plugin_manager,
    installed_entry_points,
)


def test_entry_point_is_installed() -> None:
    assert installed_entry_points()["llm"].value == "bench_llm"


def test_registers_agents_user_simulator_and_judge() -> None:
    plugins = get_plugin_manager(["llm"])
    registry = collect(plugins)
    assert plugins.failures() == []
    assert {"llm-fc", "llm-react", "llm-act", "http-agent"} <= set(registry.names("agent"))
    assert registry.names("judge") == ["llm-judge"]
    assert {"llm-user", "voice-user"} <= set(registry.names("user simulator"))
    for kind in ("agent", "judge", "user simulator"):
        for name in registry.names(kind):
            assert registry.get(kind, name).description
    assert registry.origin("agent", "llm-react") == "llm"


def test_registration_does_no_io(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("registration touched a file")

    monkeypatch.setattr(builtins, "open", refuse)
    monkeypatch.setattr(pathlib.Path, "read_text", refuse)
    found: list[object] = []
    bench_llm.register_agents(found.append)
    bench_llm.register_user_simulators(found.append)
    bench_llm.register_judges(found.append)
    assert len(found) == 7


def test_importing_the_plugin_does_not_import_httpx() -> None:
    code = "import sys, bench_llm; bench_llm.register_agents(lambda a: None); print('httpx' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"


def setup_with(history: list, task) -> ConversationSetup:
    return ConversationSetup(task=task, domain="mock", mode=Mode.DEFAULT, seed=1, policy="", agent_tools=[], user_tools=None, history=tuple(history))


def test_new_messages_skips_the_history_tail_delivered_again(data: DomainData) -> None:
    greeting, question = AssistantMessage(content="Hi"), UserMessage(content="Help")
    setup = setup_with([greeting, question], data.tasks[0])
    assert new_messages(setup, [question], first=True) == [greeting, question]
    assert new_messages(setup, [question], first=False) == [question]
    answer = AssistantMessage(content="Sure")
    assert new_messages(setup_with([greeting], data.tasks[0]), [answer], first=True) == [greeting, answer]
    assert new_messages(setup_with([], data.tasks[0]), [], first=True) == []


def test_sessions_resume_a_task_history(run_bench, data: DomainData) -> None:
    task = data.task("history_plan_upgrade")

    def agent(request: ChatRequest) -> ChatResponse:
        if own_tool_turns(request) < 3:  # two calls come from the history
            return tool_reply("change_plan", {"customer_id": "C-1004", "plan_id": "home-300"})
        return text_reply("Done: Home 300 costs 47.95 per month.")

    out = run_bench({"agent": agent, "user": lambda r: text_reply("Perfect. ###STOP###")}, agent="llm-fc", user="llm-user", task_ids=[task.id])
    assert out.conversation(task.id)["reward"] == 1.0
    first_agent = out.requests("agent")[0].messages
    assert [m["role"] for m in first_agent] == ["system", "assistant", "user", "assistant", "tool", "assistant", "tool", "assistant", "user"]
    assert first_agent[4]["tool_call_id"] == "past-1"
    assert first_agent[-1]["content"] == "Thanks. While I have you: please move me up to the Home 300 plan."
    first_user = out.requests("user")[0].messages
    assert [m["role"] for m in first_user] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert first_user[-1]["content"] == "Done: Home 300 costs 47.95 per month."


class HasEveryModel:
    """Model access that claims every role (start() only asks whether one is configured)."""

    def has(self, role: str) -> bool:
        return True

    def config(self, role: str) -> ModelConfig:
        return ModelConfig(model="m")


@pytest.mark.parametrize(
    ("agent", "mode", "tool"),
    [
        (FunctionCallingAgent(), Mode.NO_USER, "done"),
        (TextActionAgent(name="llm-react"), Mode.NO_USER, "done"),
        (TextActionAgent(name="llm-react"), Mode.DEFAULT, "respond"),
    ],
)
def test_a_domain_tool_with_a_reserved_name_is_refused(data: DomainData, agent, mode: Mode, tool: str) -> None:
    schema = {"type": "function", "function": {"name": tool, "description": "", "parameters": {"type": "object", "properties": {}}}}
    setup = attrs.evolve(setup_with([], data.tasks[0]), mode=mode, agent_tools=[schema], models=HasEveryModel())
    with pytest.raises(ConfigError, match=f"tool named '{tool}'"):
        agent.start(setup)
