"""Profiles in the kernel (docs/profiles.md): bench's own profile, templates, seeds, sampling, tool presentation, the
seam a profile directory is read through (bench-profiles' reader; here a stand-in), what a run does with the profile
it gets, and the fake server's recording that profile work is checked with. Reading directories: bench-profiles' tests."""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import random
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import httpx
import pytest
from click.testing import CliRunner, Result
from json_profiles import use_json_profiles, write_json_profile
from plugin_factory import needs_report
from seam_plugins import Registers
from toy_domain import TASKS, ToyDomain

from bench_kernel import Agent, AgentSession, ConversationSetup
from bench_kernel import plugins as plugins_module
from bench_kernel.builtin.participants import OracleSession
from bench_kernel.cli import cli
from bench_kernel.errors import ConfigError, PluginError
from bench_kernel.modelhub.api import ModelConfig
from bench_kernel.plugins import load_profile
from bench_kernel.profiles.profile import OPTIONAL_TEXTS, PLACEHOLDER, PLACEHOLDERS, Profile, bench_profile, conversation_seed, trial_seeds
from bench_kernel.run.config import RunConfig
from bench_kernel.run.runner import profile_fits
from bench_kernel.schema.messages import Mode
from bench_kernel.store.store import Store
from bench_kernel.tasks.domain import DomainData, DomainOptions, build_environment
from bench_kernel.testing.fake_openai import FakeOpenAIServer, Reply, read_recording, replay_responder

BENCH_SHA256 = "a7aa7e585064312fd9e560e53a0b8aa07a73b76cd83d1685e60e754ee37d05a1"
"""bench's own profile's content hash before its reader left the kernel (issue 33): runs under it keep their ids."""
TAU2_FIRST_TRIAL_SEED = 626729
"""tau2's seed for trial 0 of a run seeded 300 (random.Random(300).randint(0, 1000000)), as its recorded requests carry it."""


def schema(name: str, description: str = "") -> dict[str, Any]:
    """A function tool schema."""
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {"type": "object"}}}


def with_tools(domain: str, agent: list[dict[str, Any]], user: list[dict[str, Any]] | None = None) -> Profile:
    """Bench's own profile with tool schemas for one domain."""
    return attrs.evolve(load_profile(None), tools={domain: {"agent": agent, "user": user}})


def toy_data() -> DomainData:
    return ToyDomain().load(DomainOptions())


def toy_schemas() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The toy domain's own agent and user tool schemas (bench's generator)."""
    data = toy_data()
    env = build_environment(data, data.tasks[0])
    user = env.user_schemas()
    assert user is not None
    return env.agent_schemas(), user


# --------------------------------------------------------------------------- bench's own profile


def test_bench_profile_is_the_default_and_complete() -> None:
    profile = load_profile(None)

    assert profile is bench_profile()
    assert profile.name == "bench" and profile.path is None
    assert sorted(key for key in PLACEHOLDERS if not profile.texts.get(key)) == sorted(OPTIONAL_TEXTS)
    for role in ("agent", "user", "judge"):
        assert "temperature" in profile.sampling[role], role
    assert profile.seed_policy == "conversation"
    assert profile.greeting == "Hi! How can I help you today?"
    assert profile.user_stop_tokens == ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")
    assert profile.solo_stop_token == "###STOP###"
    assert profile.done_tool["function"]["name"] == "done"
    assert profile.tools == {} and profile.discoverable == {}


def test_bench_profiles_texts_use_only_their_keys_placeholders() -> None:
    for key, text in bench_profile().texts.items():
        assert {m.group(1) for m in PLACEHOLDER.finditer(text)} <= PLACEHOLDERS[key], key


def test_bench_profile_hash_is_pinned_and_the_same_in_another_process() -> None:
    other_process = subprocess.run(
        [sys.executable, "-c", "from bench_kernel import load_profile; print(load_profile(None).sha256)"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "12345"},
    )

    assert load_profile(None).sha256 == BENCH_SHA256
    assert other_process.stdout.strip() == BENCH_SHA256


# --------------------------------------------------------------------------- templates


def test_texts_are_used_byte_for_byte_and_rendered_in_one_pass() -> None:
    profile = attrs.evolve(bench_profile(), texts={"agent": "Line one\r\nServe {{domain}}.\n\n", "mine": "P={{policy}} D={{domain}}"})

    assert profile.text("agent") == "Line one\r\nServe {{domain}}.\n\n"
    assert profile.render("agent", domain="toy", policy="") == "Line one\r\nServe toy.\n\n"
    assert profile.render("mine", policy="{{policy}} {{domain}}", domain="toy") == "P={{policy}} {{domain}} D=toy"
    with pytest.raises(ConfigError, match="profile 'bench' has no text 'user'"):
        profile.text("user")


# --------------------------------------------------------------------------- seeds


def test_trial_policy_gives_tau2s_seed_per_trial() -> None:
    profile = attrs.evolve(bench_profile(), seed_policy="trial")

    seeds = {(task["id"], trial): profile.conversation_seed(300, task["id"], trial) for task in TASKS for trial in range(3)}

    assert {seeds[(task["id"], 0)] for task in TASKS} == {TAU2_FIRST_TRIAL_SEED}
    per_trial = [{seeds[(task["id"], trial)] for task in TASKS} for trial in range(3)]
    assert all(len(seeds_of_trial) == 1 for seeds_of_trial in per_trial)
    assert len(set.union(*per_trial)) == 3
    assert profile.conversation_seed(301, "inc-a", 0) != TAU2_FIRST_TRIAL_SEED


def test_conversation_policy_gives_the_sha256_seed() -> None:
    profile = load_profile(None)

    seeds = [profile.conversation_seed(300, task["id"], trial) for task in TASKS for trial in range(2)]

    assert seeds == [conversation_seed(300, task["id"], trial) for task in TASKS for trial in range(2)]
    assert len(set(seeds)) == len(seeds)


def test_seeds_leave_the_global_random_generator_alone() -> None:
    profile = attrs.evolve(bench_profile(), seed_policy="trial")
    trial_seeds.cache_clear()  # so the draws below really happen
    before = random.getstate()

    profile.conversation_seed(4242, "inc-a", 5)
    load_profile(None).conversation_seed(4242, "inc-a", 5)

    assert random.getstate() == before


# --------------------------------------------------------------------------- sampling


def test_profile_sampling_goes_under_each_roles_own() -> None:
    profile = attrs.evolve(bench_profile(), sampling={"agent": {"temperature": 0.0, "top_p": 0.5}, "user": {"temperature": 0.0}})
    models = {
        "agent": ModelConfig(model="a", sampling={"temperature": 0.7}),
        "user": ModelConfig(model="u"),
        "tts": ModelConfig(model="t", sampling={"speed": 1.5}),
    }

    merged = profile.with_sampling(models)

    assert merged["agent"].sampling == {"temperature": 0.7, "top_p": 0.5}
    assert merged["user"].sampling == {"temperature": 0.0}
    assert merged["tts"] == models["tts"]
    assert set(merged) == set(models)  # a role without a model (judge) is not added
    assert models["agent"].sampling == {"temperature": 0.7}  # the caller's configuration is left as it was


# --------------------------------------------------------------------------- tool presentation


def test_without_tools_for_the_domain_its_own_schemas_are_sent() -> None:
    agent, user = toy_schemas()
    profile = with_tools("elsewhere", [schema("x")])

    assert profile.present_tools("toy", "agent", agent) == agent
    assert profile.present_tools("toy", "user", user) == user


def test_with_tools_for_the_domain_its_schemas_are_sent_in_its_order() -> None:
    agent, _ = toy_schemas()
    own = [schema("increment", "profile's"), schema("get_counter", "profile's"), schema("not_offered")]

    sent = with_tools("toy", own).present_tools("toy", "agent", agent)

    assert sent == own[:2]


def test_a_domain_tool_the_profile_lacks_is_refused_naming_it() -> None:
    agent, _ = toy_schemas()
    profile = with_tools("toy", [schema("get_counter")])

    with pytest.raises(ConfigError, match=r"profile 'bench' has no schema for the toy agent tool\(s\) increment"):
        profile.present_tools("toy", "agent", agent)


def test_a_solo_agent_gets_the_profiles_user_schemas_after_its_own() -> None:
    agent, user = toy_schemas()
    profile = with_tools("toy", [schema("increment", "p"), schema("get_counter", "p")], [schema("switch_lamp", "p"), schema("look_at_lamp", "p")])

    sent = profile.present_tools("toy", "agent", agent + user, solo=True)

    assert sent == [schema("increment", "p"), schema("get_counter", "p"), schema("switch_lamp", "p"), schema("look_at_lamp", "p")]
    with pytest.raises(ConfigError, match="switch_lamp"):
        with_tools("toy", [schema("increment"), schema("get_counter")], [schema("look_at_lamp")]).present_tools(
            "toy", "agent", agent + user, solo=True
        )


def test_a_tool_on_both_sides_is_sent_to_the_agent_with_the_agents_schema() -> None:
    profile = with_tools("toy", [schema("get_counter", "agent side")], [schema("get_counter", "user side")])

    assert profile.present_tools("toy", "agent", [schema("get_counter")], solo=True) == [schema("get_counter", "agent side")]


def test_in_the_default_mode_an_agent_tool_only_on_the_profiles_user_side_is_refused() -> None:
    data = toy_data()
    profile = with_tools("toy", [schema("get_counter")], [schema("increment"), schema("look_at_lamp"), schema("switch_lamp")])

    with pytest.raises(ConfigError, match="increment"):
        profile_fits(profile, data, data.tasks, Mode.DEFAULT)


def test_a_profile_with_no_user_schemas_for_a_domain_whose_user_has_tools_is_refused() -> None:
    data = toy_data()
    agent, _ = toy_schemas()
    profile = with_tools("toy", agent, None)

    with pytest.raises(ConfigError, match="user tool"):
        profile_fits(profile, data, data.tasks, Mode.DEFAULT)


# --------------------------------------------------------------------------- the reader seam


def test_without_bench_profiles_a_profile_directory_is_one_error_naming_it(
    use_plugins: Callable[..., None], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(plugins_module, "installed_entry_points", dict)
    directory = write_json_profile(tmp_path / "mine", name="mine")

    with pytest.raises(ConfigError, match=r"comes from the plugin bench-profiles, which is not installed \(pip install bench-profiles\)"):
        load_profile(directory)
    result = invoke("run", "--db", str(tmp_path / "runs.db"), "--format", "none", "--profile", str(directory))
    assert result.exit_code != 0 and "Traceback" not in result.output
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"Error: --profile {directory}: ") and "pip install bench-profiles" in line
    assert load_profile(None) is bench_profile()  # bench's own needs no plugin


def test_without_bench_profiles_bench_profile_names_the_distribution(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(cli.commands, "profile", raising=False)  # as when no plugin added it

    result = invoke("profile", "show")

    assert result.exit_code == 2
    assert "`bench profile` comes from the plugin bench-profiles, which is not installed (pip install bench-profiles)" in result.output


def test_the_reader_is_the_profiles_plugins_and_gets_bench_profile_as_its_base(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    use_json_profiles(monkeypatch)

    mine = load_profile(write_json_profile(tmp_path / "mine", name="mine", greeting="Toy desk."))

    assert (mine.name, mine.greeting, mine.path) == ("mine", "Toy desk.", str((tmp_path / "mine").resolve()))
    assert mine.texts == bench_profile().texts and mine.sha256 != BENCH_SHA256
    assert load_profile(str(tmp_path / "mine")) == mine


def test_a_reader_plugin_that_fails_to_load_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    broken = md.EntryPoint(name="profiles", value="no_such_profiles_module", group="bench")
    monkeypatch.setattr(plugins_module, "installed_entry_points", lambda: {"profiles": broken})

    with pytest.raises(PluginError, match=r"plugin 'profiles': .*no_such_profiles_module.* \(it reads profile directories"):
        load_profile(write_json_profile(tmp_path / "mine", name="mine"))


def test_config_hash_needs_the_loaded_profile_of_a_run_with_a_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="pass the profile loaded from"):
        RunConfig(domain="toy", profile=str(tmp_path)).config_hash()


# --------------------------------------------------------------------------- through `bench run`


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    """Run `bench ARGS` in-process."""
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=True)


def run_toy(db: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """`bench run` into db on the toy domain without a report; the run's id."""
    result = invoke("run", "--db", str(db), "--format", "none", *args, env=env)
    assert result.exit_code == 0, result.output
    [run_id] = re.findall(r"^run (\S+): \d+ conversations run", result.stderr, re.MULTILINE)
    return run_id


def recorded_profile(db: Path, run_id: str) -> dict[str, Any]:
    """The name, hash and path of a stored run's profile, as its configuration records them."""
    store = Store(db)
    try:
        record = store.run(run_id)
        assert record is not None
        profile = record.config["profile"]
        return {key: profile[key] for key in ("name", "sha256", "path")}
    finally:
        store.close()


@pytest.fixture
def json_profiles(use_plugins: Callable[..., None], monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """The toy domain's CLI, with the stand-in reader as the installed `profiles` plugin."""
    use_json_profiles(monkeypatch)
    return use_plugins


def test_the_profile_is_part_of_the_run_identity_and_stored_by_name_hash_and_path(json_profiles: Callable[..., None], tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    directory = write_json_profile(tmp_path / "mine", name="mine", texts={"agent": "Serve {{domain}}."})
    mine = load_profile(directory)

    default_id = run_toy(db, "--task-id", "inc-a")
    mine_id = run_toy(db, "--task-id", "inc-a", "--profile", str(directory))
    again_id = run_toy(db, "--task-id", "inc-a", "--profile", str(directory))
    from_env_id = run_toy(db, "--task-id", "inc-a", env={"BENCH_PROFILE": str(directory)})

    assert default_id != mine_id == again_id == from_env_id
    store = Store(db)
    assert sorted(r["id"] for r in store.runs()) == sorted([default_id, mine_id])
    assert {r["id"]: r["conversations"] for r in store.runs()}[mine_id] == 2  # resumed twice, nothing run again
    store.close()
    assert recorded_profile(db, mine_id) == {"name": "mine", "sha256": mine.sha256, "path": str(directory.resolve())}
    assert recorded_profile(db, default_id) == {"name": "bench", "sha256": BENCH_SHA256, "path": None}


def test_resuming_a_named_run_with_an_edited_profile_is_refused(json_profiles: Callable[..., None], tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    directory = write_json_profile(tmp_path / "mine", name="mine", texts={"agent": "Serve {{domain}}."})
    run_toy(db, "--task-id", "inc-a", "--run-id", "fixed", "--profile", str(directory))
    write_json_profile(directory, name="mine", texts={"agent": "Serve {{domain}}!"})

    result = invoke("run", "--db", str(db), "--format", "none", "--task-id", "inc-a", "--run-id", "fixed", "--profile", str(directory))

    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "changed: profile" in result.stderr


def test_bench_runs_names_each_runs_profile(json_profiles: Callable[..., None], tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    directory = write_json_profile(tmp_path / "mine", name="mine")
    short_hash = load_profile(directory).sha256[:12]
    run_toy(db, "--task-id", "inc-a", "--profile", str(directory))

    [row] = json.loads(invoke("runs", "--db", str(db), "--format", "json").stdout)
    as_table = invoke("runs", "--db", str(db))

    assert "mine" in json.dumps(row) and short_hash in json.dumps(row)
    assert "mine" in as_table.stdout and short_hash in as_table.stdout


@needs_report()
def test_the_report_header_names_the_profile(use_plugins: Callable[..., None], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    use_json_profiles(monkeypatch, keep=("report",))
    use_plugins(report=True)
    db = tmp_path / "runs.db"
    directory = write_json_profile(tmp_path / "mine", name="mine")
    mine = load_profile(directory)
    run_id = run_toy(db, "--task-id", "inc-a", "--profile", str(directory))

    report = invoke("report", run_id, "--db", str(db), "--format", "json")

    assert json.loads(report.stdout)["header"]["profile"] == f"mine (sha256 {mine.sha256[:12]}, {directory.resolve()})"


def test_a_profile_lacking_a_domain_tool_is_refused_before_anything_is_stored(json_profiles: Callable[..., None], tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    agent, user = toy_schemas()
    directory = write_json_profile(tmp_path / "old", name="old", tools={"toy": {"agent": agent[:1], "user": user}})

    result = invoke("run", "--db", str(db), "--format", "none", "--profile", str(directory))

    assert result.exit_code != 0 and isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("Error: ") and "increment" in errors[0], result.stderr
    if db.exists():
        store = Store(db)
        assert store.runs() == []
        store.close()


def test_a_readers_error_is_one_clean_cli_error(json_profiles: Callable[..., None], tmp_path: Path) -> None:
    directory = tmp_path / "bad"
    directory.mkdir()

    result = invoke("run", "--db", str(tmp_path / "runs.db"), "--format", "none", "--profile", str(directory))

    assert result.exit_code != 0 and "Traceback" not in result.output
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("Error: ") and "profile.json" in line


def test_the_profiles_greeting_opens_a_default_mode_conversation(json_profiles: Callable[..., None], tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    directory = write_json_profile(tmp_path / "mine", name="mine", greeting="Toy desk, go ahead.")

    run_id = run_toy(db, "--task-id", "inc-a", "--no-baseline", "--profile", str(directory))

    store = Store(db)
    [first, *_] = store.messages(f"{run_id}/agent/inc-a/0")
    store.close()
    assert (first["role"], first["content"]) == ("assistant", "Toy desk, go ahead.")


@attrs.define(kw_only=True)
class Observing(Agent):
    """The oracle, keeping every conversation's setup."""

    name: str = "observing"
    setups: list[ConversationSetup] = attrs.field(factory=list)

    def start(self, setup: ConversationSetup) -> AgentSession:
        self.setups.append(setup)
        return OracleSession(setup)


@pytest.mark.parametrize("agent_hears_it", [True, False])
def test_the_profile_says_whether_the_greeting_is_in_the_agents_history(
    json_profiles: Callable[..., None], tmp_path: Path, agent_hears_it: bool
) -> None:
    """AgentChangeBench's orchestrator greets the user but starts the agent's history empty; tau2's gives it both."""
    directory = write_json_profile(tmp_path / "mine", name="mine", greeting="Toy desk.", greeting_in_agent_history=agent_hears_it)
    observing = Observing()
    json_profiles(extra=[("observing", Registers(agents=[observing]))])

    run_id = run_toy(tmp_path / "runs.db", "--agent", "observing", "--task-id", "inc-a", "--no-baseline", "--profile", str(directory))

    [setup] = observing.setups
    assert [m.content for m in setup.history] == (["Toy desk."] if agent_hears_it else [])
    store = Store(tmp_path / "runs.db")
    [first, *_] = store.messages(f"{run_id}/agent/inc-a/0")
    store.close()
    assert (first["role"], first["content"]) == ("assistant", "Toy desk.")  # the conversation still opens with it


def test_a_run_gives_participants_the_profiles_tools_and_seeds(json_profiles: Callable[..., None], tmp_path: Path) -> None:
    agent, user = toy_schemas()
    profile_agent = [{**s, "function": {**s["function"], "description": "profile's"}} for s in reversed(agent)]
    profile_user = list(reversed(user))
    tools = {"toy": {"agent": profile_agent, "user": profile_user}}
    directory = write_json_profile(tmp_path / "tau2ish", name="tau2ish", seed_policy="trial", tools=tools)
    observing = Observing()
    json_profiles(extra=[("observing", Registers(agents=[observing]))])

    run_id = run_toy(tmp_path / "runs.db", "--agent", "observing", "--trials", "2", "--no-baseline", "--profile", str(directory))

    assert len(observing.setups) == 2 * len(TASKS)
    assert all(s.agent_tools == profile_agent and s.user_tools == profile_user for s in observing.setups)
    store = Store(tmp_path / "runs.db")
    seeds = {(c["task_id"], c["trial"]): c["seed"] for c in store.conversations(run_id)}
    store.close()
    assert {seeds[(task["id"], 0)] for task in TASKS} == {TAU2_FIRST_TRIAL_SEED}
    assert {seeds[(task["id"], 1)] for task in TASKS} == {trial_seeds(300, 2)[1]} != {TAU2_FIRST_TRIAL_SEED}


# --------------------------------------------------------------------------- the fake server's recording


def post(http: httpx.Client, body: str) -> Any:
    """POST a completion with the body's bytes as written (key order included)."""
    response = http.post("/chat/completions", content=body.encode(), headers={"Content-Type": "application/json"})
    return response.json()


BODIES = [
    '{"model": "m", "messages": [{"role": "user", "content": "Grüße"}], "tools": [], "seed": 7, "temperature": 0}',
    '{"temperature": 0.5, "model": "m", "messages": []}',
]


def test_the_recording_keeps_every_exchange_in_order_with_the_body_as_sent() -> None:
    with (
        FakeOpenAIServer(replies=[Reply.tool_call("increment", {"name": "a"}), Reply.error(429)]) as server,
        httpx.Client(base_url=server.base_url) as http,
    ):
        replies = [post(http, BODIES[0]), post(http, BODIES[1])]
        http.get("/models")
        replies.append(post(http, BODIES[0]))

    recording = server.recording()
    assert [e["n"] for e in recording] == [1, 2, 3]
    assert {e["path"] for e in recording} == {"/v1/chat/completions"}
    assert [list(e["body"]) for e in recording] == [list(json.loads(b)) for b in (BODIES[0], BODIES[1], BODIES[0])]
    assert [e["body"] for e in recording] == [json.loads(b) for b in (BODIES[0], BODIES[1], BODIES[0])]
    assert [e["reply"] for e in recording] == replies


def test_a_written_recording_reads_back_the_same(tmp_path: Path) -> None:
    with FakeOpenAIServer(replies=[Reply.text("one"), Reply.tool_call("f", {"x": "ü"})]) as server, httpx.Client(base_url=server.base_url) as http:
        for body in BODIES:
            post(http, body)
    path = tmp_path / "recording.jsonl"

    server.write_recording(path)

    read = read_recording(path)
    assert read == server.recording()
    assert [list(e["body"]) for e in read] == [list(e["body"]) for e in server.recording()]
    assert len(path.read_text(encoding="utf-8").splitlines()) == 2


def test_replay_answers_in_order_then_errors() -> None:
    with (
        FakeOpenAIServer(replies=[Reply.text("first"), Reply.tool_call("f", {"x": 1})]) as recorder,
        httpx.Client(base_url=recorder.base_url) as http,
    ):
        recorded = [post(http, body) for body in BODIES]

    with FakeOpenAIServer(replay_responder(recorder.recording())) as replayer, httpx.Client(base_url=replayer.base_url) as http:
        replayed = [post(http, body) for body in BODIES]
        beyond = http.post("/chat/completions", json={"model": "m", "messages": []})

    assert [r["choices"][0]["message"] for r in replayed] == [r["choices"][0]["message"] for r in recorded]
    assert [r["choices"][0]["finish_reason"] for r in replayed] == ["stop", "tool_calls"]
    assert beyond.status_code == 500
    assert len(replayer.errors) == 1 and "no more replies" in str(replayer.errors[0])
