"""The practice domain shipped with the kernel (`--plugin practice`): it conforms, it is loaded only when named, and an
agent asking for a device action in the words the scripted user acts on solves its dual-control task."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from importlib.resources import files
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench_kernel import (
    Agent,
    AgentSession,
    AssistantMessage,
    ConfigError,
    ConversationSetup,
    Message,
    Mode,
    OpenAIChat,
    RunConfig,
    Store,
    device_request,
    get_plugin_manager,
    hookimpl,
    installed_entry_points,
    run,
)
from bench_kernel.cli import cli
from bench_kernel.plugins import collect
from bench_kernel.testing import (
    check_do_nothing_fails,
    check_gold_deterministic,
    check_gold_replays,
    check_shared_records,
    check_tasks_load,
    check_tool_schemas,
    play_practice,
    practice_data,
)

CHECKS = (check_tasks_load, check_tool_schemas, check_gold_replays, check_gold_deterministic, check_do_nothing_fails, check_shared_records)


@pytest.mark.parametrize("split", [None, "judged"])
@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_the_practice_domain_passes_the_domain_kit(split: str | None, check: object) -> None:
    assert check(practice_data(split)) == []  # type: ignore[operator]


def test_it_loads_only_when_named() -> None:
    assert "practice" not in collect(get_plugin_manager(None)).names("domain")
    assert collect(get_plugin_manager(["practice"])).names("domain") == ["practice"]


@pytest.mark.parametrize("mode", [Mode.DEFAULT, Mode.NO_USER])
def test_the_oracle_solves_every_task_and_doing_nothing_none(mode: Mode, tmp_path: Path) -> None:
    solved = play_practice("practice", tmp_path / "b.db", mode=mode)
    idle = play_practice("practice", tmp_path / "b.db", mode=mode, agent="do-nothing")
    assert {r["task_id"]: r["reward"] for r in solved.conversations()} == dict.fromkeys(["which_items", "take_kettle", "unlock_door"], 1.0)
    assert {r["reward"] for r in idle.conversations()} == {0.0}


def test_the_cli_runs_it_and_its_judged_split_needs_a_judge(tmp_path: Path) -> None:
    db = str(tmp_path / "b.db")
    done = CliRunner().invoke(cli, ["run", "--plugin", "practice", "--db", db, "--format", "json", "--progress", "none"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["conversations"] == 3  # which_items, take_kettle, unlock_door (bench-report's or the kernel's json)
    refused = CliRunner().invoke(cli, ["run", "--plugin", "practice", "--split", "judged", "--db", db])
    # bench-judging scores its NL assertion (with --judge); the kernel alone names the distribution.
    needed = "choose a judge with --judge" if "judging" in installed_entry_points() else "pip install bench-judging"
    assert refused.exit_code == 1 and needed in refused.output


@pytest.fixture
def no_tickets(tmp_path: Path) -> Path:
    """The practice tasks with the ticket of `take_kettle` taken out."""
    tasks = json.loads(files("bench_kernel.builtin.practice").joinpath("tasks.json").read_text(encoding="utf-8"))
    for task in tasks:
        if task["id"] == "take_kettle":
            del task["ticket"]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([t for t in tasks if t["id"] != "judged_kettle"]))
    return path


def test_the_no_user_mode_refuses_tasks_without_a_ticket(no_tickets: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no-user: 1 of 3 tasks have no `ticket`.*'take_kettle'"):
        play_practice("practice", tmp_path / "b.db", mode=Mode.NO_USER, tasks_file=str(no_tickets))
    kept = play_practice("practice", tmp_path / "b.db", mode=Mode.NO_USER, tasks_file=str(no_tickets), task_ids=["which_items", "unlock_door"])
    assert kept.summary.status == "complete"
    assert play_practice("practice", tmp_path / "b.db", tasks_file=str(no_tickets)).summary.status == "complete"


class DoorSession(AgentSession):
    """Asks the customer to unlock the door on their phone, in the words bench's scripted user acts on."""

    def __init__(self, chat: OpenAIChat) -> None:
        self.chat = chat
        self.asked = False

    async def respond(self, incoming: Sequence[Message]) -> AssistantMessage:
        said = self.chat.take(incoming)[-1]
        if not self.asked and "door" in (said.get("content") or ""):
            self.asked = True
            return self.chat.reply(f"Sure. {device_request('unlock_door')} Then tell me what you see.")
        return self.chat.reply("Good: the door is open.")


class DoorAgent(Agent):
    def start(self, setup: ConversationSetup) -> DoorSession:
        return DoorSession(OpenAIChat.start(setup))


class DoorPlugin:
    @hookimpl
    def register_agents(self, register: Callable[[Agent], None]) -> None:
        register(DoorAgent(name="door", calls_models_itself=False))


def test_the_scripted_user_performs_the_device_action_the_agent_asks_for(tmp_path: Path) -> None:
    assert device_request("unlock_door") == "Please do this on your device: unlock_door({})"
    assert device_request("set_apn", {"name": "web", "mms": True}) == ('Please do this on your device: set_apn({"mms": true, "name": "web"})')
    plugins = get_plugin_manager(["practice"], extra=[("door", DoorPlugin())])
    summary = run(
        RunConfig(domain="practice", plugins=["practice"], agent="door", task_ids=["unlock_door"], baseline=False), tmp_path / "b.db", plugins=plugins
    )
    store = Store(tmp_path / "b.db")
    try:
        [row] = store.conversations(summary.run_id)
        requestors = [
            m["requestor"] for m in store.db.query("select requestor from messages where conversation_id = ? and role = 'tool'", [row["id"]])
        ]
    finally:
        store.close()
    assert (row["termination_reason"], row["reward"]) == ("user_stop", 1.0)
    assert requestors == ["user"]  # the customer ran the tool on their phone
