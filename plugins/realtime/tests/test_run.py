"""`bench run --agent realtime` end to end against a fake provider: a solved task, and what each fault does to a run."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import sqlite_utils
from bench_duplex.testing import FakeOpenAIRealtimeServer, ScriptedResponse

from bench_kernel import Mode, ModelConfig, RunConfig, get_plugin_manager, run
from bench_kernel.testing import KIT_DOMAIN, KitPlugin

R = ScriptedResponse


def play(
    tmp_path: Path, server: FakeOpenAIRealtimeServer, *, tasks: list[str], max_seconds: float = 120.0, name: str = "r.db"
) -> tuple[Any, list[dict[str, Any]]]:
    """One run of the kit's domain with the realtime agent on the fake server, a conversation at a time."""
    os.environ["BENCH_TEST_REALTIME_KEY"] = "k"
    plugins = get_plugin_manager(["realtime", "duplex"], [("conformance-kit", KitPlugin())])
    models = {"agent": ModelConfig(backend="openai-realtime", model="gpt-realtime-1.5", base_url=server.url, api_key_env="BENCH_TEST_REALTIME_KEY")}
    config = RunConfig(
        domain=KIT_DOMAIN,
        agent="realtime",
        mode=Mode.FULL_DUPLEX,
        task_ids=tasks,
        baseline=False,
        models=models,
        concurrency=1,
        duplex={"max_seconds": max_seconds},
    )
    summary = run(config, tmp_path / name, plugins=plugins)
    rows = list(
        sqlite_utils.Database(tmp_path / name).query(
            "select task_id, termination_reason, reward, error, agent_cost from conversations order by task_id"
        )
    )
    return summary, rows


def test_a_realtime_agent_solves_a_task_with_a_call_and_its_spoken_answer(tmp_path: Path) -> None:
    # The user asks; the provider looks the note up, then says what it holds; the scripted user thanks and stops.
    script = [R.call("get_note", {"key": "door"}), R.say("The note says 1234."), R.say("Goodbye.")]
    with FakeOpenAIRealtimeServer(script) as server:
        summary, [row] = play(tmp_path, server, tasks=["read-note"])
        [(_, output, error)] = server.tool_results_seen(server.session)
    assert "1234" in output and not error
    assert summary.status == "complete"
    assert (row["termination_reason"], row["reward"]) == ("user_stop", 1.0), row["error"]
    assert row["agent_cost"] is not None and row["agent_cost"] > 0  # usage priced from the realtime rates


def test_a_dropped_socket_is_an_infrastructure_error_retried_on_resume_and_the_run_goes_on(tmp_path: Path) -> None:
    # One conversation at a time: the first meets the drop; the second a provider that never speaks (the time limit).
    with FakeOpenAIRealtimeServer([R.drop()]) as server:
        summary, rows = play(tmp_path, server, tasks=["read-note", "write-note"], max_seconds=30)
        assert (summary.status, summary.infrastructure_errors) == ("incomplete", 1)
        ended = {r["task_id"]: r["termination_reason"] for r in rows}
        assert sorted(ended.values()) == ["infrastructure_error", "max_steps"]
        [dropped] = [r for r in rows if r["termination_reason"] == "infrastructure_error"]
        assert "RealtimeConnectionError" in dropped["error"]
        # The same run again (same endpoint) retries only what failed, the provider answering now; what finished stays.
        solutions = {
            "read-note": [R.call("get_note", {"key": "door"}), R.say("The note says 1234.")],
            "write-note": [R.call("write_note", {"key": "shopping", "text": "milk"}), R.say("Saved it.")],
        }
        server.push(*solutions[dropped["task_id"]], R.say("Goodbye."))
        again, rows = play(tmp_path, server, tasks=["read-note", "write-note"], max_seconds=30)
    assert (again.status, again.skipped, again.finished) == ("complete", 1, 1)
    retried = {r["task_id"]: (r["termination_reason"], r["reward"]) for r in rows}
    assert retried[dropped["task_id"]] == ("user_stop", 1.0)
    assert len(rows) == 2  # nothing duplicated


def test_a_provider_error_event_ends_only_its_conversation_as_the_agents_error(tmp_path: Path) -> None:
    with FakeOpenAIRealtimeServer([R.error("rate limit in the provider")]) as server:
        summary, [row] = play(tmp_path, server, tasks=["read-note"])
    assert summary.status == "complete"
    assert row["termination_reason"] == "agent_error" and "rate limit in the provider" in row["error"]


def test_a_malformed_event_is_the_agents_error(tmp_path: Path) -> None:
    with FakeOpenAIRealtimeServer([R.malformed()]) as server:
        _, [row] = play(tmp_path, server, tasks=["read-note"])
    assert row["termination_reason"] == "agent_error" and "RealtimeError" in row["error"]


def test_a_conversation_that_reaches_the_time_limit_ends_as_max_steps(tmp_path: Path) -> None:
    # The provider never answers: the user checks in twice, then waits until the limit.
    with FakeOpenAIRealtimeServer([]) as server:
        _, [row] = play(tmp_path, server, tasks=["read-note"], max_seconds=30)
    assert (row["termination_reason"], row["reward"]) == ("max_steps", 0.0)


def test_persona_exposure_reaches_the_providers_instructions_and_context_exposure_is_refused(tmp_path: Path) -> None:
    import attrs
    import pytest
    from bench_realtime.agent import instructions

    from bench_kernel import ConfigError
    from bench_kernel.testing import kit_setup

    setup = kit_setup()
    persona = "A retired teacher who speaks slowly."
    shown = attrs.evolve(
        setup, exposure="persona", task=attrs.evolve(setup.task, user_scenario=attrs.evolve(setup.task.user_scenario, persona=persona))
    )
    assert persona in instructions(shown) and persona not in instructions(attrs.evolve(shown, exposure="none"))
    with FakeOpenAIRealtimeServer([]) as server:
        os.environ["BENCH_TEST_REALTIME_KEY"] = "k"
        plugins = get_plugin_manager(["realtime", "duplex"], [("conformance-kit", KitPlugin())])
        models = {"agent": ModelConfig(backend="openai-realtime", model="m", base_url=server.url, api_key_env="BENCH_TEST_REALTIME_KEY")}
        config = RunConfig(
            domain=KIT_DOMAIN,
            agent="realtime",
            mode=Mode.FULL_DUPLEX,
            baseline=False,
            models=models,
            exposure="context",
            duplex={"max_seconds": 10},
        )
        with pytest.raises(ConfigError, match="cannot be given --exposure context"):
            run(config, tmp_path / "refused.db", plugins=plugins)
    assert not (tmp_path / "refused.db").exists()
