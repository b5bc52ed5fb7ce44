"""Profiles (docs/profiles.md): loading and inheritance, the content hash, templates, errors, seeds, sampling,
tool presentation, the run identity and header, and the fake server's recording that profile work is checked with."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import httpx
import pytest
from click.testing import CliRunner, Result
from plugin_factory import needs_report
from seam_plugins import Registers
from toy_domain import TASKS, ToyDomain

from bench_kernel import Agent, AgentSession, ConversationSetup
from bench_kernel.builtin.participants import OracleSession
from bench_kernel.cli import cli
from bench_kernel.errors import ConfigError
from bench_kernel.modelhub.api import ModelConfig
from bench_kernel.profiles.profile import BUILTIN_DIR, OPTIONAL_TEXTS, PLACEHOLDERS, Profile, conversation_seed, load_profile, trial_seeds
from bench_kernel.run.runner import profile_fits
from bench_kernel.schema.messages import Mode
from bench_kernel.store.store import Store
from bench_kernel.tasks.domain import DomainData, DomainOptions, build_environment
from bench_kernel.testing.fake_openai import FakeOpenAIServer, Reply, read_recording, replay_responder

MINIMAL_TOML = 'format = 1\nname = "mine"\n'
TAU2_FIRST_TRIAL_SEED = 626729
"""tau2's seed for trial 0 of a run seeded 300 (random.Random(300).randint(0, 1000000)), as its recorded requests carry it."""


def write_profile(directory: Path, toml: str | None = MINIMAL_TOML, *, texts: Mapping[str, str] = {}, tools: Mapping[str, str] = {}) -> Path:
    """A profile directory: profile.toml (None leaves it out), texts/<key>.md and tools/<name>.json, written as given."""
    directory.mkdir(parents=True)
    if toml is not None:
        (directory / "profile.toml").write_text(toml, encoding="utf-8")
    for key, text in texts.items():
        (directory / "texts").mkdir(exist_ok=True)
        (directory / "texts" / f"{key}.md").write_bytes(text.encode())
    for name, text in tools.items():
        (directory / "tools").mkdir(exist_ok=True)
        (directory / "tools" / f"{name}.json").write_text(text, encoding="utf-8")
    return directory


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

    assert profile.name == "bench" and profile.path is None
    assert sorted(key for key in PLACEHOLDERS if not profile.texts.get(key)) == sorted(OPTIONAL_TEXTS)
    for role in ("agent", "user", "judge"):
        assert "temperature" in profile.sampling[role], role
    assert profile.seed_policy == "conversation"
    assert profile.greeting == "Hi! How can I help you today?"
    assert profile.user_stop_tokens == ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")
    assert profile.solo_stop_token == "###STOP###"
    assert profile.done_tool["function"]["name"] == "done"
    assert re.fullmatch(r"[0-9a-f]{64}", profile.sha256)


def test_bench_profile_hash_is_the_same_in_another_process_and_for_a_copy_of_its_directory(tmp_path: Path) -> None:
    other_process = subprocess.run(
        [sys.executable, "-c", "from bench_kernel.profiles.profile import load_profile; print(load_profile(None).sha256)"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "12345"},
    )
    copy = shutil.copytree(BUILTIN_DIR, tmp_path / "copy")

    assert other_process.stdout.strip() == load_profile(None).sha256
    assert load_profile(copy).sha256 == load_profile(None).sha256


# --------------------------------------------------------------------------- partial profiles and the content hash


def test_a_partial_profile_inherits_everything_else_from_bench(tmp_path: Path) -> None:
    bench = load_profile(None)

    mine = load_profile(write_profile(tmp_path / "mine", texts={"agent": "Serve {{domain}} by {{policy}}."}))

    assert (mine.name, mine.path) == ("mine", str((tmp_path / "mine").resolve()))
    assert mine.texts["agent"] == "Serve {{domain}} by {{policy}}."
    assert {key: text for key, text in mine.texts.items() if key != "agent"} == {k: t for k, t in bench.texts.items() if k != "agent"}
    assert set(mine.texts) == set(bench.texts)
    assert mine.tools == {} and mine.done_tool == bench.done_tool
    assert mine.sampling == bench.sampling and mine.seed_policy == bench.seed_policy
    assert (mine.greeting, mine.user_stop_tokens, mine.solo_stop_token) == (bench.greeting, bench.user_stop_tokens, bench.solo_stop_token)
    assert mine.messages == bench.messages and mine.meaning == bench.meaning
    assert mine.sha256 != bench.sha256


def test_the_hash_is_of_content_not_of_provenance_or_place(tmp_path: Path) -> None:
    texts = {"agent": "Serve {{domain}}."}
    here = load_profile(write_profile(tmp_path / "here", MINIMAL_TOML + '[source]\ntool = "by hand"\n', texts=texts))
    there = load_profile(write_profile(tmp_path / "there", MINIMAL_TOML + '[source]\ntool = "bench tau2 profile"\nversion = "1"\n', texts=texts))

    assert here.path != there.path and here.source != there.source
    assert here.sha256 == there.sha256


def test_one_byte_of_a_text_changes_the_hash(tmp_path: Path) -> None:
    one = load_profile(write_profile(tmp_path / "one", texts={"agent": "Serve {{domain}}."}))
    other = load_profile(write_profile(tmp_path / "other", texts={"agent": "Serve {{domain}}!"}))

    assert one.sha256 != other.sha256


def test_the_key_order_of_a_tool_schema_changes_the_hash(tmp_path: Path) -> None:
    function = {"name": "get_counter", "parameters": {"type": "object"}}
    first = json.dumps({"agent": [{"type": "function", "function": function}], "user": None})
    reordered = json.dumps({"agent": [{"function": function, "type": "function"}], "user": None})

    one = load_profile(write_profile(tmp_path / "one", tools={"toy": first}))
    other = load_profile(write_profile(tmp_path / "other", tools={"toy": reordered}))

    assert one.tools == other.tools  # equal as data: only the order of the keys sent differs
    assert one.sha256 != other.sha256


def test_texts_are_used_byte_for_byte(tmp_path: Path) -> None:
    text = "Line one\r\nServe {{domain}}.\n\n"

    profile = load_profile(write_profile(tmp_path / "p", texts={"agent": text}))

    assert profile.text("agent") == text
    assert profile.render("agent", domain="toy", policy="") == "Line one\r\nServe toy.\n\n"


# --------------------------------------------------------------------------- templates


def test_render_replaces_in_one_pass(tmp_path: Path) -> None:
    profile = load_profile(write_profile(tmp_path / "p", texts={"agent": "P={{policy}} D={{domain}}"}))

    assert profile.render("agent", policy="{{policy}} {{domain}}", domain="toy") == "P={{policy}} {{domain}} D=toy"


def test_an_unknown_placeholder_in_a_known_text_is_refused_at_load_naming_file_and_allowed_ones(tmp_path: Path) -> None:
    directory = write_profile(tmp_path / "p", texts={"agent": "Serve {{domain}} for {{ticket}}."})

    with pytest.raises(ConfigError) as refused:
        load_profile(directory)

    message = str(refused.value)
    assert str(directory / "texts" / "agent.md") in message
    assert "{{ticket}}" in message and "domain, policy" in message


def test_a_plugins_own_text_may_use_any_placeholder(tmp_path: Path) -> None:
    profile = load_profile(write_profile(tmp_path / "p", texts={"my_plugin_hint": "{{anything}} and {{else}}"}))

    assert profile.render("my_plugin_hint", anything="this", **{"else": "that"}) == "this and that"


# --------------------------------------------------------------------------- errors

PROFILE_ERRORS: list[tuple[Any, ...]] = [
    ("missing-profile-toml", None, {}, "profile.toml", "file not found"),
    ("invalid-toml", "format = = 1\n", {}, "profile.toml", "not valid TOML"),
    ("unknown-top-level-key", MINIMAL_TOML + "colour = 1\n", {}, "profile.toml", "(colour) @ $"),
    ("wrong-format", 'format = 2\nname = "mine"\n', {}, "profile.toml", "@ $.format"),
    ("bad-name", 'format = 1\nname = "my profile"\n', {}, "profile.toml", "@ $.name"),
    ("unknown-seed-policy", MINIMAL_TOML + '[seed]\npolicy = "per-task"\n', {}, "profile.toml", "@ $.seed.policy"),
    ("seed-in-sampling", MINIMAL_TOML + "[sampling.user]\nseed = 3\n", {}, "profile.toml", "@ $.sampling.user.seed"),
    ("unknown-messages-key", MINIMAL_TOML + "[messages]\ncolour = 1\n", {}, "profile.toml", "(colour) @ $.messages"),
    (
        "unknown-messages-field",
        MINIMAL_TOML + '[messages]\ntool_call_fields = ["id", "colour"]\n',
        {},
        "profile.toml",
        "'colour'",
        "@ $.messages.tool_call_fields",
    ),
    ("tools-not-an-object", MINIMAL_TOML, {"toy": json.dumps([schema("a")])}, "tools/toy.json", "@ $"),
    ("tools-unknown-side", MINIMAL_TOML, {"toy": json.dumps({"agent": [], "judge": []})}, "tools/toy.json", "@ $"),
    ("tools-without-agent", MINIMAL_TOML, {"toy": json.dumps({"user": []})}, "tools/toy.json", "@ $"),
    (
        "schema-without-name",
        MINIMAL_TOML,
        {"toy": json.dumps({"agent": [schema("a"), {"type": "function", "function": {}}]})},
        "tools/toy.json",
        "@ $.agent[1]",
    ),
    ("user-schema-without-name", MINIMAL_TOML, {"toy": json.dumps({"agent": [], "user": [{"type": "function"}]})}, "tools/toy.json", "@ $.user[0]"),
    (
        "tool-listed-twice",
        MINIMAL_TOML,
        {"toy": json.dumps({"agent": [schema("a"), schema("b"), schema("a")]})},
        "tools/toy.json",
        "'a'",
        "@ $.agent[2]",
    ),
]


@pytest.mark.parametrize(
    ("toml", "tools", "file", "fragments"),
    [pytest.param(toml, tools, file, fragments, id=name) for name, toml, tools, file, *fragments in PROFILE_ERRORS],
)
def test_a_broken_profile_is_one_config_error_naming_file_and_path(
    tmp_path: Path, toml: str | None, tools: dict[str, str], file: str, fragments: list[str]
) -> None:
    directory = write_profile(tmp_path / "p", toml, tools=tools)

    with pytest.raises(ConfigError) as refused:
        load_profile(directory)

    message = str(refused.value)
    assert message.startswith(f"{directory / file}: "), message
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_profile_that_is_not_a_directory_is_refused_naming_it(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "profile"
    if kind == "file":
        target.write_text(MINIMAL_TOML)

    with pytest.raises(ConfigError, match=re.escape(f"{target}: no profile directory there")):
        load_profile(target)


# --------------------------------------------------------------------------- seeds


def test_trial_policy_gives_tau2s_seed_per_trial(tmp_path: Path) -> None:
    profile = load_profile(write_profile(tmp_path / "p", MINIMAL_TOML + '[seed]\npolicy = "trial"\n'))

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


def test_seeds_leave_the_global_random_generator_alone(tmp_path: Path) -> None:
    profile = load_profile(write_profile(tmp_path / "p", MINIMAL_TOML + '[seed]\npolicy = "trial"\n'))
    trial_seeds.cache_clear()  # so the draws below really happen
    before = random.getstate()

    profile.conversation_seed(4242, "inc-a", 5)
    load_profile(None).conversation_seed(4242, "inc-a", 5)

    assert random.getstate() == before


# --------------------------------------------------------------------------- sampling


def test_profile_sampling_goes_under_each_roles_own(tmp_path: Path) -> None:
    profile = load_profile(write_profile(tmp_path / "p", MINIMAL_TOML + "[sampling.agent]\ntemperature = 0.0\ntop_p = 0.5\n"))
    models = {
        "agent": ModelConfig(model="a", sampling={"temperature": 0.7}),
        "user": ModelConfig(model="u"),
        "tts": ModelConfig(model="t", sampling={"speed": 1.5}),
    }

    merged = profile.with_sampling(models)

    assert merged["agent"].sampling == {"temperature": 0.7, "top_p": 0.5}
    assert merged["user"].sampling == {"temperature": 0.0}  # bench's, inherited by the partial profile
    assert merged["tts"] == models["tts"]
    assert set(merged) == set(models)  # a role without a model (judge) is not added
    assert models["agent"].sampling == {"temperature": 0.7}  # the caller's configuration is left as it was


# --------------------------------------------------------------------------- tool presentation


def test_without_tools_for_the_domain_its_own_schemas_are_sent() -> None:
    agent, user = toy_schemas()
    profile = with_tools("elsewhere", [schema("x")])

    assert profile.present_tools("toy", "agent", agent) == agent
    assert profile.present_tools("toy", "user", user) == user


def test_with_tools_for_the_domain_its_schemas_are_sent_byte_for_byte_in_its_order(tmp_path: Path) -> None:
    agent, _ = toy_schemas()
    text = (
        '{"agent": [{"function": {"parameters": {"type": "object"}, "name": "increment", "description": "Add."}, "type": "function"}, '
        '{"type": "function", "function": {"name": "get_counter"}}, {"type": "function", "function": {"name": "not_offered"}}], '
        '"user": null}'
    )
    profile = load_profile(write_profile(tmp_path / "p", tools={"toy": text}))

    sent = profile.present_tools("toy", "agent", agent)

    own = json.loads(text)["agent"]
    assert [json.dumps(s) for s in sent] == [json.dumps(own[0]), json.dumps(own[1])]


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


def toy_tools_file(agent: Sequence[dict[str, Any]], user: Sequence[dict[str, Any]] | None) -> str:
    return json.dumps({"agent": list(agent), "user": None if user is None else list(user)})


def test_the_profile_is_part_of_the_run_identity_and_stored_by_name_hash_and_path(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    directory = write_profile(tmp_path / "mine", texts={"agent": "Serve {{domain}}."})
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
    assert recorded_profile(db, default_id) == {"name": "bench", "sha256": load_profile(None).sha256, "path": None}


def test_resuming_a_named_run_with_an_edited_profile_is_refused(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    directory = write_profile(tmp_path / "mine", texts={"agent": "Serve {{domain}}."})
    run_toy(db, "--task-id", "inc-a", "--run-id", "fixed", "--profile", str(directory))
    (directory / "texts" / "agent.md").write_text("Serve {{domain}}!")

    result = invoke("run", "--db", str(db), "--format", "none", "--task-id", "inc-a", "--run-id", "fixed", "--profile", str(directory))

    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "changed: profile" in result.stderr


def test_bench_runs_names_each_runs_profile(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    directory = write_profile(tmp_path / "mine", texts={"agent": "Serve {{domain}}."})
    short_hash = load_profile(directory).sha256[:12]
    run_toy(db, "--task-id", "inc-a", "--profile", str(directory))

    as_json = invoke("runs", "--db", str(db), "--format", "json")
    as_table = invoke("runs", "--db", str(db))

    [row] = json.loads(as_json.stdout)
    assert "mine" in json.dumps(row) and short_hash in json.dumps(row)
    assert "mine" in as_table.stdout and short_hash in as_table.stdout


@needs_report()
def test_the_report_header_names_the_profile(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    use_plugins(report=True)
    db = tmp_path / "runs.db"
    directory = write_profile(tmp_path / "mine", texts={"agent": "Serve {{domain}}."})
    mine = load_profile(directory)
    run_id = run_toy(db, "--task-id", "inc-a", "--profile", str(directory))

    as_json = invoke("report", run_id, "--db", str(db), "--format", "json")

    assert json.loads(as_json.stdout)["header"]["profile"] == f"mine (sha256 {mine.sha256[:12]}, {directory.resolve()})"


def test_a_profile_lacking_a_domain_tool_is_refused_before_anything_is_stored(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    agent, user = toy_schemas()
    directory = write_profile(tmp_path / "old", tools={"toy": toy_tools_file(agent[:1], user)})

    result = invoke("run", "--db", str(db), "--format", "none", "--profile", str(directory))

    assert result.exit_code != 0 and isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("Error: ") and "increment" in errors[0], result.stderr
    if db.exists():
        store = Store(db)
        assert store.runs() == []
        store.close()


def test_a_broken_profile_is_one_clean_cli_error(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    directory = write_profile(tmp_path / "bad", MINIMAL_TOML + "colour = 1\n")

    result = invoke("run", "--db", str(tmp_path / "runs.db"), "--format", "none", "--profile", str(directory))

    assert result.exit_code != 0 and "Traceback" not in result.output
    assert result.stderr.strip().splitlines() == [f"Error: {directory / 'profile.toml'}: extra fields found (colour) @ $"]


def test_the_profiles_greeting_opens_a_default_mode_conversation(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    directory = write_profile(tmp_path / "mine", MINIMAL_TOML + '[conversation]\ngreeting = "Toy desk, go ahead."\n')

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


@pytest.mark.parametrize(
    ("setting", "agent_hears_it"), [("", True), ("greeting_in_agent_history = true\n", True), ("greeting_in_agent_history = false\n", False)]
)
def test_the_profile_says_whether_the_greeting_is_in_the_agents_history(
    use_plugins: Callable[..., None], tmp_path: Path, setting: str, agent_hears_it: bool
) -> None:
    """AgentChangeBench's orchestrator greets the user but starts the agent's history empty; tau2's gives it both."""
    directory = write_profile(tmp_path / "mine", MINIMAL_TOML + '[conversation]\ngreeting = "Toy desk."\n' + setting)
    observing = Observing()
    use_plugins(extra=[("observing", Registers(agents=[observing]))])

    run_id = run_toy(tmp_path / "runs.db", "--agent", "observing", "--task-id", "inc-a", "--no-baseline", "--profile", str(directory))

    [setup] = observing.setups
    assert [m.content for m in setup.history] == (["Toy desk."] if agent_hears_it else [])
    store = Store(tmp_path / "runs.db")
    [first, *_] = store.messages(f"{run_id}/agent/inc-a/0")
    store.close()
    assert (first["role"], first["content"]) == ("assistant", "Toy desk.")  # the conversation still opens with it
    assert load_profile(directory).greeting_in_agent_history is agent_hears_it


def test_the_greeting_setting_keeps_existing_hashes_unless_it_is_false(tmp_path: Path) -> None:
    plain = write_profile(tmp_path / "plain", MINIMAL_TOML)
    stated = write_profile(tmp_path / "stated", MINIMAL_TOML + "[conversation]\ngreeting_in_agent_history = true\n")
    silent = write_profile(tmp_path / "silent", MINIMAL_TOML + "[conversation]\ngreeting_in_agent_history = false\n")
    assert load_profile(plain).sha256 == load_profile(stated).sha256 != load_profile(silent).sha256


def test_a_run_gives_participants_the_profiles_tools_and_seeds(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    agent, user = toy_schemas()
    profile_agent = [{**s, "function": {**s["function"], "description": "profile's"}} for s in reversed(agent)]
    profile_user = list(reversed(user))
    directory = write_profile(
        tmp_path / "tau2ish", MINIMAL_TOML + '[seed]\npolicy = "trial"\n', tools={"toy": toy_tools_file(profile_agent, profile_user)}
    )
    observing = Observing()
    use_plugins(extra=[("observing", Registers(agents=[observing]))])

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


def test_a_profile_with_no_user_schemas_for_a_domain_whose_user_has_tools_is_refused() -> None:
    data = toy_data()
    agent, _ = toy_schemas()
    profile = with_tools("toy", agent, None)

    with pytest.raises(ConfigError, match="user tool"):
        profile_fits(profile, data, data.tasks, Mode.DEFAULT)


def test_a_partial_profiles_sampling_is_merged_key_by_key_with_benchs(tmp_path: Path) -> None:
    directory = write_profile(tmp_path / "p", MINIMAL_TOML + "\n[sampling.agent]\ntop_p = 0.5\n[sampling.critic]\nseedless = 1\n")

    sampling = load_profile(directory).sampling

    assert sampling["agent"] == {"temperature": 0.0, "top_p": 0.5}  # bench's stated temperature is kept
    assert sampling["critic"] == {"seedless": 1}
    assert sampling["user"] == load_profile(None).sampling["user"]
