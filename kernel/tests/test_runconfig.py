"""Run files, BENCH_* variables and options: precedence and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench_kernel.errors import ConfigError
from bench_kernel.modelhub.prices import Price
from bench_kernel.run.runconfig import build_run_config, model_overrides, read_run_file

RUN_FILE = """
[run]
domain = "mock"
agent = "llm-fc"
trials = 4

[models.agent]
model = "gpt-4.1-mini"
api_key_env = "OPENAI_API_KEY"
sampling = { temperature = 0.0 }

[prices]
"my-model" = [0.5, 1.5]
"""


def test_the_command_line_overrides_the_run_file(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_text(RUN_FILE)
    overrides = {"trials": 2, "models": {"agent": {"base_url": "http://127.0.0.1:9/v1"}}, "prices": {}}
    config = build_run_config(read_run_file(path), overrides)
    assert (config.domain, config.agent, config.trials) == ("mock", "llm-fc", 2)
    agent = config.models["agent"]
    assert (agent.model, agent.base_url, agent.sampling) == ("gpt-4.1-mini", "http://127.0.0.1:9/v1", {"temperature": 0.0})
    assert config.prices == {"my-model": Price(0.5, 1.5)}


def test_keys_are_named_by_variable_and_execution_settings_stay_out_of_the_hash(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_text(RUN_FILE)
    config = build_run_config(read_run_file(path), {})
    identity = config.identity()
    assert identity["models"]["agent"]["api_key_env"] == "OPENAI_API_KEY"
    assert "concurrency" not in identity and "cache" not in identity and "timeout_s" not in identity["models"]["agent"]
    fast = build_run_config(read_run_file(path), {"concurrency": 256, "cache": True, "max_in_flight": 1024})
    assert fast.config_hash() == config.config_hash()
    assert "max_in_flight" not in identity and config.models["agent"].max_concurrency is None  # the run decides


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"max_in_flight": 0}, "max_in_flight must be at least 1, not 0 @ $.run.max_in_flight"),
        ({"max_in_flight": 5000}, "max_in_flight must be at most 4096, not 5000 @ $.run.max_in_flight"),
    ],
)
def test_max_in_flight_out_of_range_is_refused(overrides: dict[str, int], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        build_run_config({}, overrides)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[run]\ntrials = 'many'\n", "trials"),
        ("[runs]\n", "unknown section [runs]"),
        ("[models.agent]\nbase_url = 'x'\n", "needs a name"),
        ("[models.\"Critic!\"]\nmodel = 'm'\n", "invalid model role name"),
        ("[prices]\nm = 3\n", "prices"),
        ("[run\n", "not valid TOML"),
    ],
)
def test_bad_run_files_name_the_problem(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        build_run_config(read_run_file(path), {}, source=str(path))


def test_model_overrides_collect_role_options() -> None:
    assert model_overrides({"agent_model": "m", "user_base_url": "u", "judge_sampling": None}) == {"agent": {"model": "m"}, "user": {"base_url": "u"}}


def test_the_embeddings_role_has_its_own_options() -> None:
    assert model_overrides({"embeddings_model": "text-embedding-3-large", "embeddings_base_url": "http://x/v1"}) == {
        "embeddings": {"model": "text-embedding-3-large", "base_url": "http://x/v1"}
    }


def test_key_value_options_and_model_options_outside_a_run() -> None:
    from bench_kernel import model_option_configs, parse_key_values

    assert parse_key_values(["a=1", "b=text", 'c={"x": [1]}', "d="]) == {"a": 1, "b": "text", "c": {"x": [1]}, "d": ""}
    with pytest.raises(ConfigError, match=r"expected ROLE\.KEY=VALUE, got 'nothing'"):
        parse_key_values(["nothing"], "ROLE.KEY=VALUE")
    configs = model_option_configs(["judge-2.model=m", "judge-2.base_url=http://127.0.0.1:9/v1", "judge-2.timeout_s=5"])
    assert configs["judge-2"].model == "m" and configs["judge-2"].timeout_s == 5
    assert model_option_configs({"tts.model": "joe", "tts.backend": "piper"})["tts"].backend == "piper"
    with pytest.raises(ConfigError):
        model_option_configs(["judge-2.temprature=0", "judge-2.model=m"])
