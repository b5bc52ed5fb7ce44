"""Conversation loops: a full-duplex run is played by the loop a plugin registers, and refused without one."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest
import sqlite_utils
from click.testing import CliRunner, Result

import bench_kernel
from bench_kernel import (
    AgentSession,
    ChannelSession,
    Conversation,
    ConversationLoop,
    ConversationSetup,
    Environment,
    EventLog,
    Limits,
    TerminationReason,
    UserMessage,
    UserSession,
    hookimpl,
)
from bench_kernel.run import planning
from bench_kernel.testing import cli


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=True)


def assert_clean_error(result: Result, *fragments: str) -> None:
    """A non-zero exit with one `Error:` line holding every fragment, and no traceback."""
    assert result.exit_code != 0 and "Traceback" not in result.output, result.output
    [error] = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert all(fragment in error for fragment in fragments), error


@attrs.define(kw_only=True)
class EndAtOnce(ConversationLoop):
    """A loop that ends every conversation with the user's stop, recording what it was given."""

    name: str = "full-duplex"
    played: list[dict[str, Any]] = attrs.field(factory=list)

    def configure(
        self, settings: Mapping[str, Any] | None, channel: str, channels: Collection[str], tasks: Sequence[Any]
    ) -> tuple[dict[str, Any], str]:
        if (settings or {}).get("tick_ms") == 1:
            raise bench_kernel.ConfigError("a tick of 1 ms is too short")
        return {"tick_ms": 200, **(settings or {})}, channel

    async def play(
        self,
        setup: ConversationSetup,
        env: Environment,
        agent: AgentSession,
        user: UserSession | None,
        channel: ChannelSession | None,
        *,
        events: EventLog,
        limits: Limits,
        audio_name: str,
    ) -> Conversation:
        self.played.append({"duplex": setup.duplex, "channel": channel, "user": user is not None, "audio_name": audio_name})
        return Conversation(
            messages=[*setup.history, UserMessage(content="###STOP###", turn_idx=len(setup.history))], termination=TerminationReason.USER_STOP
        )


class LoopPlugin:
    def __init__(self, loop: ConversationLoop) -> None:
        self.loop = loop

    @hookimpl
    def register_conversation_loops(self, register: Callable[[ConversationLoop], None]) -> None:
        register(self.loop)


def test_a_full_duplex_run_plays_every_conversation_with_the_registered_loop(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    loop = EndAtOnce()
    use_plugins(extra=[("loops", LoopPlugin(loop))])
    db = tmp_path / "r.db"
    result = invoke("run", "--db", str(db), "--mode", "full-duplex", "--tick-ms", "100", "--format", "none", "--allow-broken-tasks")
    assert result.exit_code == 0, result.output
    reasons = [r["termination_reason"] for r in sqlite_utils.Database(db).query("select termination_reason from conversations")]
    assert reasons and set(reasons) == {"user_stop"} and len(loop.played) == len(reasons)
    first = loop.played[0]
    assert first["duplex"] == {"tick_ms": 100} and first["channel"] is None and first["user"]
    [config] = [json.loads(r["config_json"]) for r in sqlite_utils.Database(db).query("select config_json from runs")]
    assert config["duplex"] == {"tick_ms": 100}  # the loop's settings are the run's identity


def test_the_loop_completes_and_checks_its_settings_before_anything_is_stored(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    loop = EndAtOnce()
    use_plugins(extra=[("loops", LoopPlugin(loop))])
    db = tmp_path / "r.db"
    assert invoke("run", "--db", str(db), "--mode", "full-duplex", "--format", "none", "--allow-broken-tasks").exit_code == 0
    assert loop.played[0]["duplex"] == {"tick_ms": 200}
    result = invoke("run", "--db", str(tmp_path / "refused.db"), "--mode", "full-duplex", "--tick-ms", "1")
    assert_clean_error(result, "a tick of 1 ms is too short")
    assert not (tmp_path / "refused.db").exists()


@pytest.mark.parametrize(
    ("installed", "message"),
    [
        ({}, "--mode full-duplex needs bench-duplex, which plays full-duplex conversations and is not installed: pip install bench-duplex"),
        ({"duplex": object()}, "--mode full-duplex is played by the plugin 'duplex' (bench-duplex), installed but not loaded: add --plugin duplex"),
    ],
)
def test_without_a_loop_a_full_duplex_run_is_refused_before_anything_is_stored(
    use_plugins: Callable[..., None], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, installed: dict[str, object], message: str
) -> None:
    use_plugins()
    monkeypatch.setattr(planning, "installed_entry_points", lambda: installed)
    result = invoke("run", "--db", str(tmp_path / "r.db"), "--mode", "full-duplex")
    assert_clean_error(result, message)
    assert not (tmp_path / "r.db").exists()


def test_a_full_duplex_run_blocking_bench_duplex_says_so() -> None:
    config = bench_kernel.RunConfig(mode=bench_kernel.Mode.FULL_DUPLEX, plugins=["no:duplex"])
    registry = bench_kernel.collect(bench_kernel.get_plugin_manager([]))
    with pytest.raises(bench_kernel.ConfigError, match=r"full-duplex is played by bench-duplex, which this run blocks \(--plugin no:duplex\)$"):
        planning.with_loop_settings(config, registry, [])


def test_a_full_duplex_run_loads_the_plugin_that_plays_it_with_those_it_names() -> None:
    config = bench_kernel.RunConfig(mode=bench_kernel.Mode.FULL_DUPLEX)
    assert config.implied_plugins()[-1] == "duplex"
    assert "duplex" not in bench_kernel.RunConfig().implied_plugins()


def test_duplex_options_outside_full_duplex_are_refused(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    use_plugins()
    result = invoke("run", "--db", str(tmp_path / "r.db"), "--tick-ms", "100")
    assert result.exit_code != 0 and "--tick-ms applies to --mode full-duplex only (bench-duplex's option)" in result.output


def test_loop_settings_outside_a_loop_played_mode_are_refused_naming_the_distribution(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    use_plugins()
    run_file = tmp_path / "run.toml"
    run_file.write_text("[run]\nduplex = {tick_ms = 100}\n")
    result = invoke("run", "--config", str(run_file), "--db", str(tmp_path / "r.db"))
    assert_clean_error(result, "duplex settings (tick, duration, speech complexity) apply to --mode full-duplex only (bench-duplex's)")
    assert not (tmp_path / "r.db").exists()


def test_a_loop_whose_play_is_a_plain_def_is_refused_at_registration() -> None:
    @attrs.define(kw_only=True)
    class SyncLoop(ConversationLoop):
        name: str = "full-duplex"

        def play(self, *args: Any, **kwargs: Any) -> Conversation:  # type: ignore[override]
            return Conversation()

    plugins = bench_kernel.get_plugin_manager([], extra=[("sync-loop", LoopPlugin(SyncLoop()))])
    bench_kernel.collect(plugins)
    [failure] = plugins.failures()
    assert failure.name == "sync-loop" and "SyncLoop.play is a plain def" in (failure.error or "")


def test_a_loop_whose_configure_is_async_is_refused_at_registration() -> None:
    @attrs.define(kw_only=True)
    class AsyncConfigure(ConversationLoop):
        name: str = "full-duplex"

        async def configure(self, *args: Any, **kwargs: Any) -> tuple[dict[str, Any], str]:  # type: ignore[override]
            return {}, "identity"

    plugins = bench_kernel.get_plugin_manager([], extra=[("async-configure", LoopPlugin(AsyncConfigure()))])
    bench_kernel.collect(plugins)
    [failure] = plugins.failures()
    assert failure.name == "async-configure" and "AsyncConfigure.configure" in (failure.error or ""), failure.error
