"""Full duplex: the tick loop, the turn-taking user and the turn-based agent, and full-duplex runs end to end."""

from __future__ import annotations

import asyncio
import json
import wave
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs
import pytest
import sqlite_utils
from bench_duplex import (
    Chunk,
    DuplexAgentSession,
    DuplexChannelSession,
    DuplexSettings,
    DuplexUserSession,
    FullDuplexLoop,
    Timeline,
    TurnTakingUser,
    paced_utterance,
    run_duplex,
    silence,
    speech_segments,
    split_stop,
    spread,
    tick_bytes,
)
from bench_mock import MockDomain
from click.testing import CliRunner, Result

from bench_kernel import (
    Channel,
    ChannelSession,
    Conversation,
    ConversationSetup,
    DomainOptions,
    EventLog,
    Limits,
    Message,
    Mode,
    RunConfig,
    TerminationReason,
    ToolCall,
    ToolMessage,
    UserMessage,
    UserSession,
    build_environment,
    get_plugin_manager,
    hookimpl,
    run,
    structure,
)
from bench_kernel.testing import cli

SETTINGS = DuplexSettings(max_seconds=60)


class ScriptedUser(UserSession):
    """A turn-based user that says its messages in order and records what it was told."""

    def __init__(self, *replies: UserMessage) -> None:
        self.replies = list(replies)
        self.received: list[list[Message]] = []

    async def respond(self, incoming: Sequence[Message]) -> UserMessage:
        """The next scripted message."""
        self.received.append(list(incoming))
        return self.replies.pop(0)


@attrs.define
class Recorded(DuplexAgentSession):
    """An agent that plays a script of chunks by tick and records what it heard."""

    script: dict[int, Chunk] = attrs.field(factory=dict)
    heard: list[tuple[int, Chunk, list[ToolMessage]]] = attrs.field(factory=list)

    async def step(self, tick: int, heard: Chunk, results: Sequence[ToolMessage]) -> Chunk:
        """The scripted chunk of this tick, else silence."""
        self.heard.append((tick, heard, list(results)))
        return self.script.get(tick, Chunk())


@attrs.define
class Talker(DuplexUserSession):
    """A user that says one word per tick from `start`, for `ticks` ticks, then stops at `stop_at`."""

    start: int = 0
    ticks: int = 3
    stop_at: int = 10
    heard: list[tuple[int, Chunk]] = attrs.field(factory=list)

    async def step(self, tick: int, heard: Chunk, results: Sequence[ToolMessage]) -> Chunk:
        """A word per tick, then silence, then the stop."""
        self.heard.append((tick, heard))
        if tick == self.stop_at:
            return Chunk(text="###STOP###", stop=True)
        if self.start <= tick < self.start + self.ticks:
            return Chunk(text=f"w{tick} ", speech=True, utterance="u1")
        return Chunk()


def play(
    agent: DuplexAgentSession,
    user: DuplexUserSession,
    settings: DuplexSettings = SETTINGS,
    channel: DuplexChannelSession | None = None,
    events: EventLog | None = None,
    **limits: float,
) -> Conversation:
    env = build_environment(MockDomain(name="mock").load(DomainOptions()), None)
    line = channel or DuplexChannelSession()
    return asyncio.run(run_duplex(env, agent, user, channel=line, settings=settings, events=events or EventLog(), limits=Limits(**limits)))  # type: ignore[arg-type]


def timeline_of(events: EventLog) -> Timeline:
    [event] = events.of_kind("duplex.timeline")
    return structure(event.data, Timeline, source="timeline")


def test_each_side_hears_the_other_one_tick_late() -> None:
    agent = Recorded(script={2: Chunk(text="hello", speech=True, utterance="a1")})
    user = Talker(start=0, ticks=2, stop_at=6)
    play(agent, user)
    # The user spoke at ticks 0 and 1: the agent hears those words at ticks 1 and 2.
    assert [(t, c.text) for t, c, _ in agent.heard if c.text] == [(1, "w0 "), (2, "w1 ")]
    # The agent spoke at tick 2: the user hears it at tick 3.
    assert [(t, c.text) for t, c in user.heard if c.text] == [(3, "hello")]
    assert all(len(c.audio) == tick_bytes(200) for _, c, _ in agent.heard)


def test_tool_calls_run_in_their_tick_and_results_come_next_tick() -> None:
    call = ToolCall(id="c1", name="list_plans", arguments={})
    agent = Recorded(script={3: Chunk(tool_calls=(call,))})
    events = EventLog()
    convo = play(agent, Talker(start=0, ticks=1, stop_at=8), events=events)
    results = {t: r for t, _, r in agent.heard if r}
    assert list(results) == [4] and results[4][0].id == "c1" and not results[4][0].error
    roles = [m.role for m in convo.messages]
    assert roles[:3] == ["user", "assistant", "tool"]  # the user's words ended at tick 1, before the call at tick 3
    assert convo.messages[1].raw_data == {"tick": 3, "end_tick": 3}
    [stamp] = timeline_of(events).tools
    assert (stamp.tick, stamp.requestor, stamp.name) == (3, "agent", "list_plans")
    # The user never sees the agent's calls.
    assert all(not c.tool_calls for _, c in Talker().heard)


def test_a_user_stop_ends_the_conversation_after_the_agent_runs_once_more() -> None:
    agent = Recorded()
    convo = play(agent, Talker(start=0, ticks=2, stop_at=5))
    assert convo.termination is TerminationReason.USER_STOP
    assert agent.heard[-1][0] == 5  # the agent still ran in the stop's tick
    assert convo.messages[-1].content == "###STOP###"


def test_the_time_limit_ends_the_conversation_as_max_steps_and_keeps_its_timeline() -> None:
    events = EventLog()
    convo = play(Recorded(), Talker(stop_at=10_000), settings=DuplexSettings(max_seconds=2), events=events)
    assert convo.termination is TerminationReason.MAX_STEPS
    assert timeline_of(events).ticks == 11  # ticks 0..10: 2 s of 200 ms ticks plus tick 0, as tau2 counts


def test_a_failing_agent_ends_only_its_conversation_as_an_agent_error() -> None:
    @attrs.define
    class Broken(DuplexAgentSession):
        async def step(self, tick: int, heard: Chunk, results: Sequence[ToolMessage]) -> Chunk:
            if tick == 4:
                raise ValueError("garbage from the model")
            return Chunk()

    events = EventLog()
    convo = play(Broken(), Talker(start=0, ticks=2), events=events)
    assert convo.termination is TerminationReason.AGENT_ERROR
    assert convo.error == "agent: ValueError: garbage from the model"
    assert timeline_of(events).ticks == 5


def test_a_step_that_returns_no_chunk_is_the_participants_error() -> None:
    @attrs.define
    class Wrong(DuplexUserSession):
        async def step(self, tick: int, heard: Chunk, results: Sequence[ToolMessage]) -> Chunk:
            return "hello"  # type: ignore[return-value]

    convo = play(Recorded(), Wrong())
    assert convo.termination is TerminationReason.USER_ERROR
    assert "step() must return a Chunk, got str" in (convo.error or "")


def test_speech_runs_segments_and_overlap_are_in_the_timeline() -> None:
    agent = Recorded(script={t: Chunk(text="x", speech=True, utterance="a1") for t in range(2, 5)})
    events = EventLog()
    play(agent, Talker(start=0, ticks=4, stop_at=7), events=events)
    timeline = timeline_of(events)
    assert timeline.user_speech == [(0, 4)] and timeline.agent_speech == [(2, 5)]
    found = [(s.side, s.start_tick, s.end_tick, s.overlapped) for s in speech_segments(timeline)]
    assert found == [("user", 0, 4, False), ("agent", 2, 5, True)]
    assert [e.kind for e in events.events].count("duplex.speech") == 2


def test_text_paced_speech_lasts_as_long_as_the_text_takes_to_say() -> None:
    utterance = paced_utterance("x" * 30, "user", tick_ms=200, index=0)
    assert len(utterance.chunks) == 10  # 30 characters at 15 a second: 2 s, 10 ticks
    assert "".join(c.text for c in utterance.chunks) == "x" * 30
    assert all(c.speech and len(c.audio) == 1600 and c.audio != silence(200) for c in utterance.chunks)
    assert spread("abcd", 3) == ["ab", "c", "d"]
    assert split_stop("Thanks, bye. ###STOP###") == ("Thanks, bye.", "###STOP###")


def test_the_turn_taking_user_waits_for_its_thresholds_before_speaking() -> None:
    inner = ScriptedUser(UserMessage(content="I need help."), UserMessage(content="Bye ###STOP###"))
    user = TurnTakingUser(inner, DuplexChannelSession(), SETTINGS)
    agent = Recorded(script={t: Chunk(text="ok ", speech=True, utterance="a1") for t in range(40, 43)})
    events = EventLog()
    convo = play(agent, user, events=events)
    timeline = timeline_of(events)
    # Nobody speaks at first; the user starts when its own silence exceeds 5 s (25 ticks) and the agent's 1 s.
    assert timeline.user_speech[0][0] == 26
    first = next(e for e in timeline.user if e.action)
    assert (first.tick, first.action) == (26, "generate_message")
    assert convo.termination is TerminationReason.USER_STOP
    assert [m.content for m in convo.messages if m.role == "user"] == ["I need help.", "Bye", "###STOP###"]


def test_the_user_checks_in_twice_when_the_agent_stays_silent_then_waits_for_the_time_limit() -> None:
    inner = ScriptedUser(UserMessage(content="I need help."), UserMessage(content="Bye ###STOP###"))
    events = EventLog()
    convo = play(Recorded(), TurnTakingUser(inner, DuplexChannelSession(), SETTINGS), events=events)
    said = [m.content for m in convo.messages if m.role == "user"]
    # The scenario never moves on unheard: two check-ins, then silence until the limit.
    assert said == ["I need help.", "Hello? Are you still there?", "Hello? I'm still waiting."]
    assert convo.termination is TerminationReason.MAX_STEPS
    assert len(inner.received) == 1


def test_the_user_stops_talking_when_the_agent_talks_over_it() -> None:
    inner = ScriptedUser(UserMessage(content="word " * 40), UserMessage(content="###STOP###"))
    user = TurnTakingUser(inner, DuplexChannelSession(), SETTINGS)
    # The agent barges in at tick 30, four ticks after the user began, and keeps talking for 3 s.
    agent = Recorded(script={t: Chunk(text="y", speech=True, utterance="a1") for t in range(30, 45)})
    events = EventLog()
    play(agent, user, events=events)
    timeline = timeline_of(events)
    stop = [e for e in timeline.user if e.action == "stop_talking"]
    # The user hears the agent from tick 31; after 1 s (5 ticks) of being talked over it stops, at tick 35.
    assert [e.tick for e in stop] == [35]
    assert timeline.user_speech[0] == (26, 35)
    [user_segment] = [s for s in speech_segments(timeline) if s.side == "user"][:1]
    assert user_segment.interrupted


def test_the_turn_taking_user_performs_tool_calls_and_speaks_their_result_after() -> None:
    call = ToolCall(id="u1", name="check_router_light", requestor="user")
    inner = ScriptedUser(UserMessage(tool_calls=[call]), UserMessage(content="It is off."), UserMessage(content="###STOP###"))
    user = TurnTakingUser(inner, DuplexChannelSession(), SETTINGS)
    events = EventLog()
    convo = play(Recorded(), user, events=events)
    stamps = timeline_of(events).tools
    assert [(s.tick, s.requestor, s.name) for s in stamps] == [(26, "user", "check_router_light")]
    assert [m.role for m in convo.messages[:3]] == ["user", "tool", "user"]
    assert convo.messages[2].raw_data["tick"] == 28  # the reply is spoken from the tick after the result arrived


def test_kept_audio_is_a_stereo_recording_of_both_sides(tmp_path: Path) -> None:
    events = EventLog()
    agent = Recorded(
        script={t: Chunk(audio=paced_utterance("hi", "agent", tick_ms=200, index=0).chunks[0].audio, speech=True, text="h") for t in range(3, 5)}
    )
    play(agent, Talker(start=0, ticks=2, stop_at=6), settings=DuplexSettings(keep_audio=str(tmp_path)), events=events)
    timeline = timeline_of(events)
    # The loop names the file only when told a name; without one nothing is written.
    assert timeline.audio_file is None
    env = build_environment(MockDomain(name="mock").load(DomainOptions()), None)
    events = EventLog()
    asyncio.run(
        run_duplex(
            env,
            Recorded(),
            Talker(start=0, ticks=2, stop_at=6),
            channel=DuplexChannelSession(),
            settings=DuplexSettings(keep_audio=str(tmp_path)),
            events=events,
            audio_name="conv",
        )
    )
    path = Path(timeline_of(events).audio_file or "")
    with wave.open(str(path)) as recording:
        assert (recording.getnchannels(), recording.getframerate(), recording.getnframes()) == (2, 8000, 7 * 1600)


# --------------------------------------------------------------------------- runs


def invoke(*args: str) -> Result:
    """`bench ARGS` in-process."""
    return CliRunner().invoke(cli, list(args), catch_exceptions=True)


def test_a_full_duplex_run_of_the_oracle_and_the_scripted_user_scores_every_task(tmp_path: Path) -> None:
    """`--plugin mock --mode full-duplex` loads this plugin's loop by itself; a resume finds every conversation stored."""
    db = tmp_path / "r.db"
    args = ("run", "--plugin", "mock", "--db", str(db), "--mode", "full-duplex", "--num-tasks", "3", "--keep-audio", str(tmp_path / "audio"))
    result = invoke(*args, "--format", "json")
    assert result.exit_code == 0, result.output
    assert '"full-duplex"' in result.stdout
    database = sqlite_utils.Database(db)
    rows = list(database.query("select task_id, reward, termination_reason from conversations where arm = 'agent'"))
    kinds = {r["kind"] for r in database.query("select distinct kind from conversation_events")}
    assert rows and {r["reward"] for r in rows} == {1.0}
    assert {r["termination_reason"] for r in rows} == {"user_stop"}
    assert {"duplex.timeline", "duplex.speech"} <= kinds
    [plugins] = [json.loads(r["plugins_json"]) for r in database.query("select plugins_json from runs")]
    assert "duplex" in {p["name"] for p in plugins}
    assert list((tmp_path / "audio").glob("*.wav")), "kept audio"
    again = invoke(*args, "--format", "none")
    assert again.exit_code == 0 and "0 conversations run" in again.stderr, again.output
    assert len(list(database.query("select id from runs"))) == 1


def test_speech_conditions_other_than_control_need_a_speech_channel(tmp_path: Path) -> None:
    result = invoke("run", "--plugin", "mock", "--db", str(tmp_path / "r.db"), "--mode", "full-duplex", "--speech-complexity", "regular")
    assert result.exit_code != 0 and "--speech-complexity regular needs a speech channel" in result.output
    assert "bench-voice[engines]" in result.output
    assert not (tmp_path / "r.db").exists()


STORED_BEFORE = {
    "keep_audio": None,
    "max_seconds": 1200.0,
    "speech_complexity": "control",
    "tick_ms": 100,
    "turn_taking": {
        "integration_s": 0.5,
        "interruption_check_s": 2.0,
        "silence_annotation_s": 4.0,
        "wait_other_s": 1.0,
        "wait_self_s": 5.0,
        "yield_interrupted_s": 1.0,
        "yield_interrupting_s": 5.0,
    },
}
"""`duplex` in the stored configuration of a `--tick-ms 100` run from before the settings left the kernel."""


def test_the_settings_a_run_stores_and_hashes_are_those_stored_before_they_left_the_kernel(tmp_path: Path) -> None:
    """So a run begun before the move resumes with the same command (same identity, same run id)."""
    settings, channel = FullDuplexLoop().configure({"tick_ms": 100}, "identity", ["identity"], [])
    assert settings == STORED_BEFORE and channel == "identity"
    stored = RunConfig.from_stored({"domain": "mock", "mode": "full-duplex", "duplex": STORED_BEFORE})
    assert stored.identity()["duplex"] == STORED_BEFORE
    db = tmp_path / "r.db"
    assert invoke("run", "--plugin", "mock", "--db", str(db), "--mode", "full-duplex", "--tick-ms", "100", "--num-tasks", "1").exit_code == 0
    [config] = [json.loads(r["config_json"]) for r in sqlite_utils.Database(db).query("select config_json from runs")]
    assert config["duplex"] == STORED_BEFORE


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--speech-complexity", "noisy", "speech complexity 'noisy' is not one of tau2's levels (control, regular, control_audio,"),
        ("--tick-ms", "5", "'tick_ms' must be >= 20: 5"),
        ("--max-duration", "0.5", "'max_seconds' must be >= 1: 0.5"),
    ],
)
def test_settings_out_of_range_are_refused_before_anything_is_stored(tmp_path: Path, option: str, value: str, message: str) -> None:
    result = invoke("run", "--plugin", "mock", "--db", str(tmp_path / "r.db"), "--mode", "full-duplex", option, value)
    assert result.exit_code != 0 and "--mode full-duplex settings" in result.output and message in result.output, result.output
    assert not (tmp_path / "r.db").exists()


class Shout(ChannelSession):
    """A text-only channel: it knows nothing of full duplex."""

    async def to_agent(self, message: UserMessage) -> UserMessage:
        return attrs.evolve(message, content=(message.content or "").upper())


@attrs.define(kw_only=True)
class ShoutChannel(Channel):
    name: str = "shout"

    def start(self, setup: ConversationSetup) -> ChannelSession:
        return Shout()


class ShoutPlugin:
    @hookimpl
    def register_channels(self, register: Callable[[Channel], None]) -> None:
        register(ShoutChannel())


def test_a_channel_written_for_turns_only_carries_the_line_as_the_base_class_does(tmp_path: Path) -> None:
    plugins = get_plugin_manager(["mock", "duplex"], extra=[("shout", ShoutPlugin())])
    config = RunConfig(domain="mock", mode=Mode.FULL_DUPLEX, channel="shout", num_tasks=2)
    summary = run(config, tmp_path / "r.db", plugins=plugins)
    rows = list(sqlite_utils.Database(tmp_path / "r.db").query("select reward from conversations where arm = 'agent'"))
    assert summary.finished and {r["reward"] for r in rows} == {1.0}


def test_a_run_blocking_the_plugin_is_refused_naming_it(tmp_path: Path) -> None:
    result = invoke("run", "--plugin", "mock", "--plugin", "no:duplex", "--db", str(tmp_path / "r.db"), "--mode", "full-duplex")
    assert result.exit_code != 0
    assert "--mode full-duplex is played by bench-duplex, which this run blocks (--plugin no:duplex)" in result.output
    assert not (tmp_path / "r.db").exists()


@pytest.mark.parametrize("name", ["run_duplex", "Timeline", "TurnTakingUser", "RealtimeAdapter", "word_error_rate"])
def test_exported_names_resolve_lazily(name: str) -> None:
    import bench_duplex

    assert getattr(bench_duplex, name).__name__ == name and name in bench_duplex.__all__
