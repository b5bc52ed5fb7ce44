"""`bench play`, driven from a script through click's runner: the stored conversation scores like any run's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bench_gym.play import line_action
from click.testing import CliRunner, Result

from bench_kernel import Store
from bench_kernel.testing import bench_cli

UPGRADE = [
    'find_customer_by_email {"email": "ada.okafor@example.net"}',
    'change_plan {"customer_id": "C-1001", "plan_id": "fiber-1000"}',
    "Done: you are on Fiber 1000 now.",
]


def play(db: Path, lines: list[str], *args: str) -> Result:
    return CliRunner().invoke(bench_cli(["gym"]), ["play", *args, "--db", str(db)], input="\n".join(lines) + "\n", catch_exceptions=False)


def conversations(db: Path) -> list[dict[str, Any]]:
    store = Store(db)
    try:
        return [row for run in store.runs() for row in store.conversations(run["id"])]
    finally:
        store.close()


def test_a_person_plays_the_agent_and_the_conversation_is_scored_and_stored(tmp_path: Path) -> None:
    db = tmp_path / "play.db"
    result = play(db, UPGRADE, "--plugin", "mock", "--task-id", "upgrade_by_email")
    assert result.exit_code == 0, result.output
    output = result.output
    assert "You are the agent in task upgrade_by_email of domain mock" in output
    assert "--- instructions ---" in output and "Home internet helpdesk" in output  # the policy
    assert "  change_plan(customer_id: string, plan_id: string)" in output  # the tools
    assert "customer: You want faster internet at home." in output
    assert 'tool result: {"id": "C-1001"' in output and '"plan_id": "fiber-1000"' in output
    assert "The conversation ended (user_stop). Reward 1: ACTION 1, COMMUNICATE 1, DB 1, ENV_ASSERTION 1" in output
    rows = {row["arm"]: row for row in conversations(db)}
    assert (rows["agent"]["reward"], rows["agent"]["agent"], rows["agent"]["agent_cost"]) == (1.0, "human", 0.0)
    assert rows["baseline"]["agent"] == "do-nothing"  # with its baseline, as `bench run` stores it
    assert "bench report mock-human-" in output


def test_malformed_input_is_explained_and_asked_again(tmp_path: Path) -> None:
    db = tmp_path / "play.db"
    lines = [UPGRADE[0], '{"content": ', 'change_plan {"customer_id": "C-1001"', ":help", ":tools", *UPGRADE[1:]]
    result = play(db, lines, "--plugin", "mock", "--task-id", "upgrade_by_email", "--no-baseline")
    assert result.exit_code == 0, result.output
    assert "not sent: not valid JSON" in result.output
    assert "not sent: the arguments of change_plan are not valid JSON" in result.output
    assert ":quit    leave without finishing" in result.output
    assert [row["reward"] for row in conversations(db)] == [1.0]


def test_leaving_stores_nothing_of_the_conversation(tmp_path: Path) -> None:
    db = tmp_path / "play.db"
    result = play(db, [UPGRADE[0], ":quit"], "--plugin", "mock", "--task-id", "upgrade_by_email", "--no-baseline")
    assert result.exit_code == 0, result.output
    assert "You left: nothing of this conversation is stored." in result.output
    assert conversations(db) == []
    result = play(db, [UPGRADE[0]], "--plugin", "mock", "--task-id", "upgrade_by_email", "--no-baseline")  # input ends
    assert "You left" in result.output and conversations(db) == []


def test_a_person_plays_the_customer_with_device_tools(tmp_path: Path) -> None:
    db = tmp_path / "play.db"
    lines = ["My internet is down.", "check_router_light {}", "toggle_wifi {}", "restart_router {}", "Thanks. ###STOP###"]
    result = play(db, lines, "--plugin", "mock", "--as", "user", "--task-id", "wifi_switched_off", "--no-baseline")
    assert result.exit_code == 0, result.output
    assert "You are the user in task wifi_switched_off" in result.output
    assert "agent: Please do this on your device: check_router_light({})" in result.output
    assert "device result: The status light is red." in result.output
    assert "Reward 1:" in result.output
    [row] = conversations(db)
    assert (row["reward"], row["agent"], row["user"]) == (1.0, "oracle", "human")


def test_the_agent_alone_calls_done(tmp_path: Path) -> None:
    db = tmp_path / "play.db"
    result = play(db, [UPGRADE[0], UPGRADE[1], "done"], "--plugin", "mock", "--task-id", "upgrade_by_email", "--mode", "no-user", "--no-baseline")
    assert result.exit_code == 0, result.output
    assert "call done when the work is done" in result.output
    assert "The conversation ended (agent_stop). Reward 1" in result.output


def test_naming_your_own_side_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(bench_cli(["gym"]), ["play", "--plugin", "mock", "--agent", "oracle"])
    assert result.exit_code == 2 and "you play the agent: name the other side with --user" in result.output


def test_bench_play_takes_the_domain_options_as_bench_run_declares_them() -> None:
    group = bench_cli(["gym"])
    run, play = ({p.name: p for p in group.commands[name].params} for name in ("run", "play"))
    shared = ["domain", "split", "tasks_file", "data_dir", "retrieval", "retrieval_options"]
    assert [(play[n].opts, play[n].help, play[n].envvar, repr(play[n].type)) for n in shared] == [
        (run[n].opts, run[n].help, run[n].envvar, repr(run[n].type)) for n in shared
    ]
    flags = [flag for p in play.values() for flag in p.opts]
    assert len(flags) == len(set(flags))  # --domain (-d) once
    missing = CliRunner().invoke(group, ["play", "--plugin", "mock", "--tasks-file", "no-such.json"])
    assert missing.exit_code == 2 and "'--tasks-file': File 'no-such.json' does not exist" in missing.output
    variant = CliRunner().invoke(group, ["play", "--plugin", "mock", "--retrieval", "bm25"])  # reaches the run, as with `bench run`
    assert variant.exit_code == 1 and "domain 'mock' (plugin 'mock') has no knowledge-retrieval variants" in variant.output


def test_what_a_typed_line_means() -> None:
    tools = ["get_customer", "list_plans"]
    assert line_action("hello there", tools) == "hello there"
    assert line_action("list_plans", tools) == {"role": "assistant", "tool_calls": [{"name": "list_plans", "arguments": {}}]}
    assert line_action('get_customer {"customer_id": "C-1"}', tools)["tool_calls"][0]["arguments"] == {"customer_id": "C-1"}
    assert line_action('{"name": "list_plans", "arguments": {}}', tools)["tool_calls"][0]["name"] == "list_plans"
    assert line_action('{"content": "hi"}', tools) == {"content": "hi"}
    assert line_action("get_customers are slow", tools) == "get_customers are slow"
    with pytest.raises(ValueError, match="JSON object"):
        line_action('get_customer ["C-1"]', tools)
