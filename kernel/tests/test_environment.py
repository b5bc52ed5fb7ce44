"""Tests of toolkits and the environment: schemas, execution, routing, functions and assertions."""

from __future__ import annotations

import json

import pytest
from toy_domain import CounterTools, ToyDomain

from bench_kernel import DomainOptions, ToolCall, ToolError, build_environment
from bench_kernel.schema.tasks import EnvAssertion, EnvFunctionCall
from bench_kernel.tasks.domain import DomainData
from bench_kernel.tools.environment import Environment, ToolKind, Toolkit, tool
from bench_kernel.tools.state import State


@pytest.fixture
def data() -> DomainData:
    return ToyDomain().load(DomainOptions())


@pytest.fixture
def env(data: DomainData) -> Environment:
    return build_environment(data, None)


@pytest.fixture
def solo_env(data: DomainData) -> Environment:
    return build_environment(data, None, solo=True)


def names(schemas: list[dict] | None) -> list[str]:
    return [s["function"]["name"] for s in schemas or []]


def call(tool_name: str, requestor: str = "assistant", /, call_id: str = "c1", **arguments: object) -> ToolCall:
    return ToolCall(id=call_id, name=tool_name, arguments=arguments, requestor=requestor)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- schemas


def test_agent_and_user_schemas_list_only_marked_tools(env: Environment) -> None:
    assert names(env.agent_schemas()) == ["get_counter", "increment"]
    assert names(env.user_schemas()) == ["look_at_lamp", "switch_lamp"]
    assert "counter_is" not in CounterTools.specs(), "assertion helpers are not tools"


def test_schema_carries_docstring_arguments_and_defaults(env: Environment) -> None:
    increment = next(s for s in env.agent_schemas() if s["function"]["name"] == "increment")
    assert increment["type"] == "function"
    function = increment["function"]
    assert function["description"] == "Increment a counter."
    assert function["parameters"]["required"] == ["name"]
    assert function["parameters"]["properties"]["by"]["type"] == "integer"
    assert function["parameters"]["properties"]["by"]["default"] == 1
    assert function["parameters"]["properties"]["name"]["description"] == "The counter's name."


def test_user_schemas_honour_the_task_allow_list(env: Environment) -> None:
    assert names(env.user_schemas(["switch_lamp", "unknown"])) == ["switch_lamp"]
    assert env.user_schemas([]) is None


def test_solo_agent_sees_user_tools_and_the_user_none(solo_env: Environment) -> None:
    assert names(solo_env.agent_schemas()) == ["get_counter", "increment", "look_at_lamp", "switch_lamp"]
    assert solo_env.user_schemas() is None


def test_tool_kinds_and_mutates(env: Environment) -> None:
    specs = CounterTools.specs()
    assert specs["get_counter"].kind is ToolKind.READ and not specs["get_counter"].mutates
    assert specs["increment"].kind is ToolKind.WRITE and specs["increment"].mutates
    assert env.mutates(call("increment", name="a"))
    assert not env.mutates(call("get_counter", name="a"))
    assert not env.mutates(call("no_such_tool"))
    assert env.mutates(call("switch_lamp", "user", on=True))
    assert not env.mutates(call("switch_lamp", on=True)), "the agent cannot reach the user's lamp"


def test_solo_mode_mutates_follows_routing(solo_env: Environment) -> None:
    assert solo_env.mutates(call("switch_lamp", on=True))


# --------------------------------------------------------------------------- execute


def test_unknown_tool_is_an_error_message(env: Environment) -> None:
    result = env.execute(call("x", call_id="c9"))
    assert result.content == "Error: Tool 'x' not found."
    assert result.error is True
    assert result.id == "c9" and result.requestor == "assistant"


def test_tool_error_becomes_error_text(env: Environment) -> None:
    result = env.execute(call("get_counter", name="zz"))
    assert (result.content, result.error) == ("Error: Counter zz not found", True)


@pytest.mark.parametrize("arguments", [{"nme": "a"}, {}, {"name": "a", "by": 1, "extra": 2}])
def test_bad_arguments_are_an_error_message_not_an_exception(env: Environment, arguments: dict) -> None:
    before = env.hashes()
    result = env.execute(ToolCall(id="c1", name="increment", arguments=arguments))
    assert result.error is True
    assert result.content.startswith("Error: invalid arguments:")
    assert env.hashes() == before


def test_successful_call_returns_plain_json_and_mutates(env: Environment) -> None:
    before = env.hashes()
    result = env.execute(call("increment", name="a", by=2))
    assert result.error is False
    assert json.loads(result.content) == {"value": 2}, "numbers stay numbers by default"
    assert env.agent_tools.state.counters["a"] == {"value": 2}
    assert env.hashes()[0] != before[0] and env.hashes()[1] == before[1]


def test_a_domain_that_asks_for_tau2s_rendering_gets_strings_in_plain_dicts(data: DomainData) -> None:
    import attrs

    env = build_environment(attrs.evolve(data, tool_results="tau2"), None)
    assert json.loads(env.execute(call("increment", name="a", by=2)).content) == {"value": "2"}
    with pytest.raises(ValueError, match="tool_results"):
        attrs.evolve(data, tool_results="yaml")


def test_execute_counts_every_call(env: Environment) -> None:
    env.execute(call("get_counter", name="a"))
    env.execute(call("nope"))
    assert env.tool_calls == 2


def test_user_requestor_goes_to_the_user_toolkit(env: Environment) -> None:
    result = env.execute(call("switch_lamp", "user", call_id="u1", on=True))
    assert (result.content, result.error, result.requestor, result.id) == ("ok", False, "user", "u1")
    assert env.user_tools.state.device["lamp"] == {"on": True}


def test_agent_cannot_call_user_tools_outside_solo_mode(env: Environment) -> None:
    result = env.execute(call("switch_lamp", on=True))
    assert result.error and result.content == "Error: Tool 'switch_lamp' not found."
    assert env.user_tools.state.device["lamp"] == {"on": False}


def test_user_cannot_call_agent_tools(env: Environment) -> None:
    result = env.execute(call("increment", "user", name="a"))
    assert result.error and "not found" in result.content
    assert env.agent_tools.state.counters["a"] == {"value": 0}


def test_solo_mode_routes_user_tools_from_the_agent(solo_env: Environment) -> None:
    result = solo_env.execute(call("switch_lamp", on=True))
    assert (result.content, result.error, result.requestor) == ("ok", False, "assistant")
    assert solo_env.user_tools.state.device["lamp"] == {"on": True}
    assert solo_env.execute(call("increment", name="a")).error is False


def test_solo_mode_refuses_user_requestor(solo_env: Environment) -> None:
    result = solo_env.execute(call("switch_lamp", "user", on=True))
    assert result.error and result.content == "Error: This domain has no user tools."


def test_domain_without_user_tools_refuses_user_calls(data: DomainData) -> None:
    env = Environment(agent_tools=CounterTools(data.agent_state.fork()))
    assert env.user_schemas() is None
    assert env.hashes()[1] is None
    assert env.execute(call("switch_lamp", "user", on=True)).content == "Error: This domain has no user tools."


def test_sync_runs_after_successful_calls_only(data: DomainData) -> None:
    synced: list[int] = []
    env = build_environment(data, None)
    env.sync = lambda e: synced.append(e.tool_calls)
    env.execute(call("get_counter", name="a"))
    env.execute(call("increment", name="a"), sync=False)
    env.execute(call("nope"))
    assert synced == [1]


# --------------------------------------------------------------------------- functions and assertions


def test_run_function_reaches_non_tool_public_methods(env: Environment) -> None:
    assert env.run_function(EnvFunctionCall(env_type="assistant", func_name="counter_is", arguments={"name": "b", "value": 41}))
    assert env.run_function(EnvFunctionCall(env_type="user", func_name="lamp_is", arguments={"on": False}))


@pytest.mark.parametrize("func_name", ["_private", "__init__", "__class__", "missing", "state"])
def test_run_function_rejects_private_missing_and_non_callable_names(env: Environment, func_name: str) -> None:
    with pytest.raises(ToolError, match=f"Function '{func_name}' not found."):
        env.run_function(EnvFunctionCall(env_type="assistant", func_name=func_name))


def test_run_function_rejects_hidden_methods(data: DomainData) -> None:
    class Guarded(CounterTools):
        hidden_methods = frozenset({"counter_is"})

    env = Environment(agent_tools=Guarded(data.agent_state.fork()))
    with pytest.raises(ToolError):
        env.run_function(EnvFunctionCall(env_type="assistant", func_name="counter_is", arguments={"name": "a", "value": 0}))


def test_run_function_on_a_missing_side_raises(data: DomainData) -> None:
    env = Environment(agent_tools=CounterTools(data.agent_state.fork()))
    with pytest.raises(ToolError, match="no user toolkit"):
        env.run_function(EnvFunctionCall(env_type="user", func_name="lamp_is", arguments={"on": True}))


def test_run_function_syncs(data: DomainData) -> None:
    env = build_environment(data, None)
    synced: list[bool] = []
    env.sync = lambda e: synced.append(True)
    env.run_function(EnvFunctionCall(env_type="user", func_name="lamp_is", arguments={"on": True}))
    assert synced == [True]


@pytest.mark.parametrize(("value", "assert_value", "met"), [(0, True, True), (1, True, False), (1, False, True), (0, False, False)])
def test_check_assertion_compares_with_assert_value(env: Environment, value: int, assert_value: bool, met: bool) -> None:
    assertion = EnvAssertion(env_type="assistant", func_name="counter_is", arguments={"name": "a", "value": value}, assert_value=assert_value)
    assert env.check_assertion(assertion).met is met


def test_check_assertion_with_a_non_bool_result_fails_with_a_reason(env: Environment) -> None:
    check = env.check_assertion(EnvAssertion(env_type="assistant", func_name="get_counter", arguments={"name": "a"}))
    assert check.met is False
    assert "not a bool" in check.detail


def test_check_assertion_truthy_non_bool_does_not_pass(env: Environment) -> None:
    check = env.check_assertion(EnvAssertion(env_type="user", func_name="look_at_lamp", assert_value=True))
    assert check.met is False and "'off'" in check.detail


def test_check_assertion_that_raises_fails_with_the_error(env: Environment) -> None:
    check = env.check_assertion(EnvAssertion(env_type="assistant", func_name="counter_is", arguments={"name": "zz", "value": 1}))
    assert check.met is False
    assert "raised" in check.detail and "zz" in check.detail


def test_check_assertion_uses_its_message_as_detail(env: Environment) -> None:
    check = env.check_assertion(EnvAssertion(env_type="user", func_name="lamp_is", arguments={"on": False}, message="lamp stays off"))
    assert check.met and check.detail == "lamp stays off"
    assert check.subject.startswith("user:lamp_is(")


# --------------------------------------------------------------------------- a toolkit written from scratch


class Notes(Toolkit):
    @tool(ToolKind.WRITE)
    def add_note(self, key: str, text: str) -> int:
        """Add a note.

        Args:
            key: Where to put it.
            text: What it says.
        """
        self.state.notes[key] = {"text": text}
        return len(self.state.notes)

    @tool(ToolKind.THINK)
    def think(self, thought: str) -> str:
        """Think out loud.

        Args:
            thought: The thought.
        """
        return ""


def test_a_new_toolkit_works_end_to_end() -> None:
    env = Environment(agent_tools=Notes(State.from_records({"notes": {}})))
    assert names(env.agent_schemas()) == ["add_note", "think"]
    assert env.mutates(call("add_note", key="k", text="t")) and not env.mutates(call("think", thought="hm"))
    result = env.execute(call("add_note", key="k", text="t"))
    assert (result.content, result.error) == ("1", False), "a bare int is plain JSON by default"
    assert env.execute(call("think", thought="hm")).content == ""
