"""Reading a profile directory (docs/profiles.md): inheritance from bench's own, the content hash, the checks and their
errors, the pinned hashes and run ids of profiles read before the reader left the kernel, and `bench profile`."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from bench_kernel import BENCH_PROFILE_DIR, ConfigError, RunConfig, installed_entry_points, load_profile, trial_seeds
from bench_kernel.testing import bench_cli

MINIMAL_TOML = 'format = 1\nname = "mine"\n'
BENCH_SHA256 = "a7aa7e585064312fd9e560e53a0b8aa07a73b76cd83d1685e60e754ee37d05a1"
TAU2_FIRST_TRIAL_SEED = 626729
"""tau2's seed for trial 0 of a run seeded 300 (random.Random(300).randint(0, 1000000))."""


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


def write_every_part(directory: Path, *, mock_tools: bool = True) -> Path:
    """A profile using every part of the format (the one whose hashes are pinned below)."""
    toml = (
        'format = 1\nname = "pinned"\ndescription = "every part"\n[source]\ntool = "hand"\n'
        '[sampling.agent]\ntop_p = 0.5\n[sampling.critic]\ntemperature = 1.0\n[seed]\npolicy = "trial"\n'
        '[messages]\ntool_call_fields = ["id", "name", "function", "type"]\ntool_message_fields = ["role", "content", "tool_call_id"]\n'
        "ascii_arguments = true\nnull_content = false\n"
        '[conversation]\ngreeting = "Hello."\ngreeting_in_agent_history = false\nuser_stop_tokens = ["###END###"]\nsolo_stop_token = "###END###"\n'
        '[meaning]\n"###END###" = "done"\n'
        '[judge]\ntranscript = "lines"\nstatements = "python_list"\nverdicts = "echo"\nresponse_format = false\nseed = false\n'
    )
    described = {
        name: {"type": "function", "function": {"name": name, "description": f"Does {name}.", "parameters": {"type": "object", "properties": {}}}}
        for name in ("a", "b", "x", "y", "finish")
    }
    texts = {"description": "Finds.", "params": [{"name": "q", "type": "str", "optional": False, "description": "Q."}], "returns": "R."}
    tools = {
        "other": json.dumps(
            {"agent": [described["x"]], "user": [described["y"]], "discoverable": {"agent": {"find_1": texts}, "formats": {"k": "{{v}}"}}}
        ),
        "done": json.dumps(described["finish"]),
    }
    if mock_tools:
        tools["mock"] = json.dumps({"agent": [described["b"], described["a"]], "user": None})
    texts_md = {"agent": "Policy:\n{{policy}}\nDomain {{domain}} é", "judge_line": "{{role}}: {{content}}", "my_plugin_text": "{{anything}}"}
    return write_profile(directory, toml, texts=texts_md, tools=tools)


# --------------------------------------------------------------------------- the hashes runs were made with


def test_hashes_are_those_the_kernel_gave_before_the_reader_moved(tmp_path: Path) -> None:
    """Pinned on main 4809c4a, where the kernel read profile directories itself: same hash, same run ids."""
    every = load_profile(write_every_part(tmp_path / "every"))
    without_mock = load_profile(write_every_part(tmp_path / "without_mock", mock_tools=False))

    assert load_profile(None).sha256 == BENCH_SHA256
    assert every.sha256 == "ff12a45923bd2a7530d64da2651cb04062016e5be69df570a233f532e8d38ecf"
    assert without_mock.sha256 == "72ad286ba755c16bc19fe2bdbdc9c3ac1fd1957ad12e31658d161e26060290a7"
    assert RunConfig(domain="mock").config_hash() == "c9b8e92af8c3bd0575264161f33b1698d9885748049b9560a54acdf9fb20312d"
    config = RunConfig(domain="mock", profile=str(tmp_path / "every"))
    assert config.config_hash(profile=every) == "8642c81d45d6d300ef31c29dbfccff67ebfa2082bfdb4043f8b7123e47c4b648"


WORKSPACE_ALWAYS = {"judging", "report", "trust"}
"""The plugins that load with every run in the workspace the run id below was pinned in (they count in its identity)."""


@pytest.mark.skipif(
    not set(installed_entry_points()) >= WORKSPACE_ALWAYS, reason="the pinned run id was made with bench-judging, -report and -trust installed"
)
def test_the_same_command_line_gives_the_same_run_id(tmp_path: Path) -> None:
    write_every_part(tmp_path / "forrun", mock_tools=False)
    db = tmp_path / "runs.db"

    result = bench(
        "run", "--plugin", "mock", "--agent", "oracle", "--num-tasks", "2", "--profile", str(tmp_path / "forrun"), "--db", str(db), "--format", "none"
    )

    assert result.exit_code == 0, result.output
    assert re.findall(r"^run (\S+): ", result.stderr, re.MULTILINE)[0] == "mock-oracle-a8304090"


# --------------------------------------------------------------------------- inheritance and the content hash


def test_a_copy_of_bench_profiles_directory_is_bench_profile(tmp_path: Path) -> None:
    copy = shutil.copytree(BENCH_PROFILE_DIR, tmp_path / "copy")

    assert load_profile(copy).sha256 == load_profile(None).sha256


def test_a_partial_profile_inherits_everything_else_from_bench(tmp_path: Path) -> None:
    bench_own = load_profile(None)

    mine = load_profile(write_profile(tmp_path / "mine", texts={"agent": "Serve {{domain}} by {{policy}}."}))

    assert (mine.name, mine.path) == ("mine", str((tmp_path / "mine").resolve()))
    assert mine.texts["agent"] == "Serve {{domain}} by {{policy}}."
    assert {key: text for key, text in mine.texts.items() if key != "agent"} == {k: t for k, t in bench_own.texts.items() if k != "agent"}
    assert set(mine.texts) == set(bench_own.texts)
    assert mine.tools == {} and mine.done_tool == bench_own.done_tool
    assert mine.sampling == bench_own.sampling and mine.seed_policy == bench_own.seed_policy
    assert (mine.greeting, mine.user_stop_tokens, mine.solo_stop_token) == (bench_own.greeting, bench_own.user_stop_tokens, bench_own.solo_stop_token)
    assert mine.messages == bench_own.messages and mine.meaning == bench_own.meaning
    assert mine.sha256 != bench_own.sha256


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


def test_the_greeting_setting_keeps_existing_hashes_unless_it_is_false(tmp_path: Path) -> None:
    plain = write_profile(tmp_path / "plain", MINIMAL_TOML)
    stated = write_profile(tmp_path / "stated", MINIMAL_TOML + "[conversation]\ngreeting_in_agent_history = true\n")
    silent = write_profile(tmp_path / "silent", MINIMAL_TOML + "[conversation]\ngreeting_in_agent_history = false\n")
    assert load_profile(plain).sha256 == load_profile(stated).sha256 != load_profile(silent).sha256
    assert load_profile(silent).greeting_in_agent_history is False


def test_texts_are_read_byte_for_byte(tmp_path: Path) -> None:
    text = "Line one\r\nServe {{domain}}.\n\n"

    profile = load_profile(write_profile(tmp_path / "p", texts={"agent": text}))

    assert profile.text("agent") == text
    assert profile.render("agent", domain="toy", policy="") == "Line one\r\nServe toy.\n\n"


def test_tool_schemas_are_kept_byte_for_byte_in_the_files_order(tmp_path: Path) -> None:
    text = (
        '{"agent": [{"function": {"parameters": {"type": "object"}, "name": "increment", "description": "Add."}, "type": "function"}, '
        '{"type": "function", "function": {"name": "get_counter"}}], "user": null}'
    )
    profile = load_profile(write_profile(tmp_path / "p", tools={"toy": text}))

    agent = profile.tools["toy"]["agent"]
    assert agent is not None
    assert [json.dumps(s) for s in profile.present_tools("toy", "agent", list(reversed(agent)))] == [json.dumps(s) for s in json.loads(text)["agent"]]


def test_the_trial_seed_policy_is_read(tmp_path: Path) -> None:
    profile = load_profile(write_profile(tmp_path / "p", MINIMAL_TOML + '[seed]\npolicy = "trial"\n'))

    assert profile.conversation_seed(300, "any", 0) == TAU2_FIRST_TRIAL_SEED
    assert profile.conversation_seed(300, "other", 1) == trial_seeds(300, 2)[1]


def test_a_partial_profiles_sampling_is_merged_key_by_key_with_benchs(tmp_path: Path) -> None:
    directory = write_profile(tmp_path / "p", MINIMAL_TOML + "\n[sampling.agent]\ntop_p = 0.5\n[sampling.critic]\nseedless = 1\n")

    sampling = load_profile(directory).sampling

    assert sampling["agent"] == {"temperature": 0.0, "top_p": 0.5}  # bench's stated temperature is kept
    assert sampling["critic"] == {"seedless": 1}
    assert sampling["user"] == load_profile(None).sampling["user"]


# --------------------------------------------------------------------------- placeholders and discoverable tools


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


def test_a_profile_brings_texts_of_discoverable_tools_and_a_bad_one_names_the_path(tmp_path: Path) -> None:
    texts = {
        "description": "Reads a secret.",
        "params": [{"name": "key", "type": "str", "optional": False, "description": "Which one."}],
        "returns": "The secret.",
    }
    tools: dict[str, Any] = {"agent": [], "discoverable": {"agent": {"read_secret_1": texts}}}
    directory = write_profile(tmp_path / "p", tools={"ctx": json.dumps(tools)})

    profile = load_profile(directory)

    assert profile.discoverable_tools("ctx", "agent") == {"read_secret_1": texts}
    assert profile.discoverable_tools("ctx", "user") is None
    tools["discoverable"]["agent"]["read_secret_1"] = {"params": []}
    (directory / "tools" / "ctx.json").write_text(json.dumps(tools), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"ctx.json: .* @ \$\.discoverable\.agent\.read_secret_1"):
        load_profile(directory)


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
    ("unknown-judge-style", MINIMAL_TOML + '[judge]\nverdicts = "vote"\n', {}, "profile.toml", "'vote'", "@ $.judge.verdicts"),
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
    ("done-without-name", MINIMAL_TOML, {"done": json.dumps({"type": "function"})}, "tools/done.json", "@ $"),
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


# --------------------------------------------------------------------------- the command line


def bench(*args: str) -> Result:
    """`bench ARGS` in-process, with this plugin's commands."""
    return CliRunner().invoke(bench_cli(["profiles"]), list(args))


def test_profile_show_prints_bench_profile_and_a_directorys(tmp_path: Path) -> None:
    own = bench("profile", "show", "--format", "json")
    mine = bench("profile", "show", str(write_every_part(tmp_path / "every")), "--format", "json")
    table = bench("profile", "show")

    assert own.exit_code == mine.exit_code == table.exit_code == 0, own.output + mine.output
    shown, every = json.loads(own.stdout), json.loads(mine.stdout)
    assert (shown["name"], shown["sha256"], shown["path"], shown["tools"]) == ("bench", BENCH_SHA256, "built in", "the domains' own schemas")
    assert shown["texts"]["agent"].endswith(" characters") and shown["judge"]["transcript"] == "bench"
    assert (every["name"], every["seed_policy"]) == ("pinned", "trial")
    assert every["tools"] == {"mock": {"agent": 2, "user": None}, "other": {"agent": 1, "user": 1}}
    assert every["messages"]["tool_call_fields"] == ["id", "name", "function", "type"] and every["greeting_in_agent_history"] is False
    assert f"sha256: {BENCH_SHA256}" in table.stdout.splitlines()


def test_profile_copy_writes_bench_profile_into_a_new_directory_only(tmp_path: Path) -> None:
    target = tmp_path / "start"

    copied = bench("profile", "copy", str(target))
    again = bench("profile", "copy", str(target))

    assert copied.exit_code == 0 and f"`bench run --profile {target}`" in copied.stdout
    assert load_profile(target).sha256 == BENCH_SHA256
    assert again.exit_code != 0 and "not empty; choose a new directory" in again.output


def test_a_run_records_the_profile_directory_and_refuses_a_broken_one_in_one_line(tmp_path: Path) -> None:
    directory = write_profile(tmp_path / "mine", texts={"agent": "Serve {{domain}} by {{policy}}."})
    broken = write_profile(tmp_path / "bad", MINIMAL_TOML + "colour = 1\n")
    db = tmp_path / "runs.db"

    practice = ("run", "--plugin", "practice", "--agent", "oracle", "--num-tasks", "1", "--db", str(db))
    ran = bench(*practice, "--profile", str(directory), "--format", "json")
    refused = bench(*practice, "--profile", str(broken), "--format", "none")

    assert ran.exit_code == 0, ran.output
    assert json.loads(ran.stdout)["header"]["profile"] == f"mine (sha256 {load_profile(directory).sha256[:12]}, {directory.resolve()})"
    assert refused.exit_code != 0 and "Traceback" not in refused.output
    assert refused.stderr.strip().splitlines() == [f"Error: {broken / 'profile.toml'}: extra fields found (colour) @ $"]
