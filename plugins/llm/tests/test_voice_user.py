"""voice-user: a whole full-duplex call against the fake OpenAI server, the context as heard on the line, the model's
interrupt and backchannel decisions, determinism."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from bench_duplex import Chunk, TurnTakingUser
from bench_llm.components import VoiceUser
from bench_llm.line import Heard, Line, split_at_contained
from bench_llm.prompts import voice_user_prompt
from bench_llm.texts import own_render
from bench_llm.voice import DECISION_ROLE, VoiceUserSession, behaviour

from bench_kernel import (
    ChatRequest,
    ChatResponse,
    ConfigError,
    ConversationSetup,
    DomainData,
    EventLog,
    Mode,
    ModelConfig,
    ModelError,
    RunConfig,
    Store,
    get_plugin_manager,
    run,
)
from bench_kernel.testing import FakeOpenAIServer

TASK = "upgrade_by_email"
OPENING = "Hi, um, I'd like to upgrade my plan. My email is ada at example dot net."
CLOSING = "Great, thank you. Bye! ###STOP###"
INCOMPLETE = "[CURRENTLY SPEAKING, INCOMPLETE]"


def caller(body: dict[str, Any]) -> dict[str, Any]:
    """The user model: opens the call, and says goodbye once it has spoken and the agent has answered."""
    messages = body["messages"]
    spoke = any(m["role"] == "assistant" and m.get("content") for m in messages)
    content = CLOSING if spoke and messages[-2]["role"] == "user" else OPENING
    return {"role": "assistant", "content": content}


def play(tmp_path: Path, server: FakeOpenAIServer, name: str) -> tuple[Store, str]:
    """One full-duplex conversation of the mock domain: the oracle agent, voice-user on the fake server."""
    plugins = get_plugin_manager(["mock", "llm", "openai", "duplex"])
    assert plugins.failures() == []
    models = {"user": ModelConfig(backend="openai", model="fake-model", base_url=server.base_url, max_retries=0)}
    config = RunConfig(
        domain="mock",
        plugins=["mock", "llm", "openai"],
        agent="oracle",
        user="voice-user",
        mode=Mode.FULL_DUPLEX,
        task_ids=[TASK],
        baseline=False,
        models=models,
    )
    summary = run(config, tmp_path / f"{name}.db", plugins=plugins)
    assert summary.status == "complete"
    return Store(tmp_path / f"{name}.db"), summary.run_id


@pytest.fixture
def served(fake_openai_server: Callable[..., FakeOpenAIServer]) -> FakeOpenAIServer:
    """The fake OpenAI server answering as the caller."""
    pytest.importorskip("bench_openai")
    return fake_openai_server(caller)


def test_a_full_duplex_call_ends_with_the_users_stop(tmp_path: Path, served: FakeOpenAIServer) -> None:
    store, run_id = play(tmp_path, served, "a")
    [row] = store.conversations(run_id)
    store.close()
    assert (row["termination_reason"], row["error"]) == ("user_stop", None)
    assert row["user"] == "voice-user"


def test_the_user_model_hears_the_line_with_roles_flipped(tmp_path: Path, served: FakeOpenAIServer) -> None:
    play(tmp_path, served, "a")[0].close()
    first, *_, last = served.completions
    # Nobody speaks at first: the caller opens after its own-silence threshold (5 s), prompted only by the silence note.
    assert [m["role"] for m in first["messages"]] == ["system", "system", "system"]
    assert "phoned a company's support line" in first["messages"][0]["content"]
    note = re.fullmatch(r"\[Both parties silent for (\d+\.\d) seconds\]", first["messages"][1]["content"])
    assert note is not None and 5.0 <= float(note.group(1)) <= 6.0
    assert "you are the customer" in first["messages"][2]["content"]
    roles = [m["role"] for m in last["messages"]]
    assert roles[:3] == ["system", "system", "assistant"] and roles[-1] == "system"
    assert last["messages"][2]["content"] == OPENING
    agent_lines = [m["content"] for m in last["messages"] if m["role"] == "user"]
    assert agent_lines and all(INCOMPLETE not in line for line in agent_lines)
    assert last["seed"] == first["seed"]


def test_the_same_seed_sends_the_same_requests(tmp_path: Path, fake_openai_server: Callable[..., FakeOpenAIServer]) -> None:
    pytest.importorskip("bench_openai")
    one, two = fake_openai_server(caller), fake_openai_server(caller)
    play(tmp_path, one, "a")[0].close()
    play(tmp_path, two, "b")[0].close()
    assert one.completions == two.completions and len(one.completions) >= 2


def test_it_refuses_a_turn_based_conversation(data: DomainData) -> None:
    setup = attrs.evolve(session_setup(data, StubModels(lambda role, r: ChatResponse(content="YES"))), duplex=None, mode=Mode.DEFAULT)
    with pytest.raises(ConfigError, match=r"full-duplex line only.*--mode full-duplex"):
        VoiceUser().start(setup)


# ------------------------------------------------------------------ decisions, at the session level (no run, no channel)


@attrs.define
class StubModels:
    """The conversation's model access, answered by `answer(role, request)`; records every request."""

    answer: Callable[[str, ChatRequest], ChatResponse]
    roles: tuple[str, ...] = ("user",)
    requests: list[tuple[str, ChatRequest]] = attrs.field(factory=list)
    in_flight: int = 0
    most_in_flight: int = 0

    def has(self, role: str) -> bool:
        return role in self.roles

    def config(self, role: str) -> ModelConfig:
        return ModelConfig(backend="stub", model=role)

    async def complete(self, role: str, request: ChatRequest) -> ChatResponse:
        self.requests.append((role, request))
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        await asyncio.sleep(0)  # both decisions of a tick are in flight together when they run in parallel
        self.in_flight -= 1
        return self.answer(role, request)

    def decisions(self) -> list[str]:
        return [decision_kind(r) for _, r in self.requests if decision_kind(r)]


def decision_kind(request: ChatRequest) -> str:
    """Which decision a request asks, from its prompt ('' for a reply request)."""
    text = request.messages[-1]["content"] if len(request.messages) == 1 else ""
    return "interrupt" if "cut in" in text else "backchannel" if "listening sound" in text else ""


def answers(interrupt: str = "NO", backchannel: str = "NO", reply: str = "Sorry, which plan was that?") -> Callable[..., ChatResponse]:
    """A model answering each decision and the reply as given."""

    def answer(role: str, request: ChatRequest) -> ChatResponse:
        kind = decision_kind(request)
        return ChatResponse(content=interrupt if kind == "interrupt" else backchannel if kind == "backchannel" else reply)

    return answer


def session_setup(data: DomainData, models: StubModels, level: str = "regular") -> ConversationSetup:
    task = next(t for t in data.tasks if t.id == TASK)
    return ConversationSetup(
        task=task,
        domain="mock",
        mode=Mode.FULL_DUPLEX,
        seed=11,
        policy="",
        agent_tools=[],
        user_tools=None,
        models=models,
        events=EventLog(),
        duplex={"speech_complexity": level},
    )


def agent_talks(session: VoiceUserSession, ticks: int) -> list[Chunk]:
    """The agent explaining at length from tick 1 on (checks run every 10 ticks: first at tick 10); the user's chunks."""

    async def go() -> list[Chunk]:
        said = []
        for tick in range(ticks):
            heard = Chunk(text=f"part {tick} of a long explanation. ", speech=True, utterance="a1") if tick else Chunk()
            said.append(await session.step(tick, heard, []))
        return said

    return asyncio.run(go())


def voice_session(data: DomainData, models: StubModels, level: str = "regular") -> VoiceUserSession:
    session = VoiceUser().start(session_setup(data, models, level))
    assert isinstance(session, VoiceUserSession)
    return session


def test_an_interrupt_wins_and_the_reply_hears_the_agent_mid_sentence(data: DomainData) -> None:
    models = StubModels(answers(interrupt="YES", backchannel="YES"))
    chunks = agent_talks(voice_session(data, models), 12)
    assert [c.action for c in chunks[:10]] == ["wait"] * 10
    assert chunks[10].action == "generate_message" and chunks[10].speech
    assert sorted(models.decisions()) == ["backchannel", "interrupt"] and models.most_in_flight == 2
    assert set(chunks[10].info["decisions"]) == {"interrupt", "backchannel"}
    assert chunks[10].info["decisions"]["interrupt"]["yes"] is True
    role, reply = models.requests[-1]
    assert role == "user" and [m["role"] for m in reply.messages] == ["system", "user", "system"]
    assert reply.messages[1]["content"].endswith(f"part 10 of a long explanation. {INCOMPLETE}")


def test_a_backchannel_when_the_persona_does_not_cut_in(data: DomainData) -> None:
    models = StubModels(answers(interrupt="NO", backchannel="YES"))
    chunks = agent_talks(voice_session(data, models), 14)
    said = "".join(c.text for c in chunks[10:]).strip()
    assert chunks[10].action == "backchannel" and said in {"uh-huh", "mm-hmm"}
    assert chunks[10].info["decisions"]["backchannel"]["yes"] is True
    assert all(decision_kind(r) for _, r in models.requests)  # a continuer needs no reply from the model
    [(_, prompt)] = [(k, r) for k, r in models.requests if decision_kind(r) == "backchannel"]
    assert prompt.messages[0]["content"].count("AGENT: part 1 of a long explanation.") == 1


def test_anything_but_an_exact_yes_is_no(data: DomainData) -> None:
    models = StubModels(answers(interrupt="Yes, definitely", backchannel="YES!"))
    chunks = agent_talks(voice_session(data, models), 12)
    assert chunks[10].action == "wait"
    assert chunks[10].info["decisions"]["interrupt"]["yes"] is False
    assert chunks[10].info["decisions"]["backchannel"]["yes"] is False


def test_a_failing_decision_is_no_and_is_recorded(data: DomainData) -> None:
    def answer(role: str, request: ChatRequest) -> ChatResponse:
        raise ModelError("decision endpoint down")

    models = StubModels(answer)
    session = voice_session(data, models)
    chunks = agent_talks(session, 12)
    assert chunks[10].action == "wait" and "ModelError" in chunks[10].info["decisions"]["interrupt"]["error"]
    events = session.setup.events.of_kind("voice_user.decision_error")
    assert sorted(e.data["decision"] for e in events) == ["backchannel", "interrupt"]
    assert events[0].data["tick"] == 10


def test_the_decisions_role_answers_them_when_configured(data: DomainData) -> None:
    models = StubModels(answers(interrupt="YES"), roles=("user", DECISION_ROLE))
    agent_talks(voice_session(data, models), 12)
    assert [role for role, r in models.requests if decision_kind(r)] == [DECISION_ROLE, DECISION_ROLE]
    assert [role for role, r in models.requests if not decision_kind(r)] == ["user"]


def test_control_never_asks_for_decisions(data: DomainData) -> None:
    models = StubModels(answers(interrupt="YES", backchannel="YES"))
    chunks = agent_talks(voice_session(data, models, "control"), 31)
    assert models.requests == [] and {c.action for c in chunks} == {"wait"}
    assert [behaviour(level) for level in ("control_audio", "control_accents_behavior")] == [(False, False), (True, True)]


def test_the_backchannel_phrase_follows_the_seed(data: DomainData) -> None:
    def phrases(seed: int) -> list[str]:
        session = voice_session(data, StubModels(answers()))
        session.setup = attrs.evolve(session.setup, seed=seed)
        return [session.backchannel_text(0) for _ in range(6)]

    assert phrases(11) == phrases(11) and set(phrases(11)) <= {"uh-huh", "mm-hmm"}
    assert len({tuple(phrases(seed)) for seed in range(5)}) > 1


def test_a_backchannel_inside_the_agents_turn_is_read_where_it_was_said() -> None:
    agent = [Heard(t, f"a{t} ", True) for t in range(0, 10)]
    user = [Heard(4, "uh-", True), Heard(5, "huh", True)]
    pieces = split_at_contained(agent, [user])
    assert [[h.tick for h in p] for p in pieces] == [[0, 1, 2, 3, 4, 5], [6, 7, 8, 9]]
    line = Line(tick_s=0.2, integration_ticks=2, silence_ticks=20, agent=agent, user=user, now=9)
    items = line.items(lambda s: f"[silent {s}]", "[...]")
    assert [(i.kind, i.text) for i in items] == [("agent", "a0 a1 a2 a3 a4 a5"), ("user", "uh-huh"), ("agent", "a6 a7 a8 a9 [...]")]


def test_the_voice_texts_are_bench_llms_own_and_a_profile_overrides_them(data: DomainData) -> None:
    setup = session_setup(data, StubModels(answers()))
    prompt = voice_user_prompt(setup)
    assert "{{" not in prompt and setup.task.user_scenario.render() in prompt and "Keep your answers brief" in prompt
    assert "Your own devices" in voice_user_prompt(attrs.evolve(setup, user_tools=[{"type": "function"}]))
    assert own_render(setup.profile, "voice_silence", seconds="4.0") == "[Both parties silent for 4.0 seconds]"
    # Not in bench's profile (its hash, and every earlier run's id, did not change); a profile's text wins.
    assert "voice_silence" not in setup.profile.texts
    custom = attrs.evolve(setup.profile, texts={**setup.profile.texts, "voice_silence": "(quiet {{seconds}} s)"})
    assert own_render(custom, "voice_silence", seconds="4.0") == "(quiet 4.0 s)"


def test_tau2_profile_takes_the_voice_guidelines_from_tau2s_data_dir(tmp_path: Path) -> None:
    tau2_profile = pytest.importorskip("bench_tau2.tau2_profile")
    folder = tmp_path / "tau2" / "user_simulator"
    folder.mkdir(parents=True)
    for name, text in {
        "simulation_guidelines.md": "TEXT RULES\n",
        "simulation_guidelines_tools.md": "TOOL RULES\n",
        "simulation_guidelines_voice.md": "VOICE RULES\n<PERSONA_GUIDELINES>\n",
    }.items():
        (folder / name).write_text(text, encoding="utf-8")
    texts = {"user": "TEXT RULES\n\n<scenario>\n{{scenario}}\n</scenario>", "user_tools": "TOOL RULES\n\n<scenario>\n{{scenario}}\n</scenario>"}
    dump = tau2_profile.Tau2Dump(
        source={"data_dir": str(tmp_path)}, texts=texts, tools={}, failed_domains={}, done_tool={}, sampling={}, seed={}, conversation={}, messages={}
    )
    found = tau2_profile.with_voice_texts(dump).texts
    assert found["voice_user"] == "VOICE RULES\n{{persona}}\n\n<scenario>\n{{scenario}}\n</scenario>"
    assert "voice_user_tools" not in found  # no voice tools file: bench's own text stays
    missing = attrs.evolve(dump, source={"data_dir": str(tmp_path / "elsewhere")})
    assert tau2_profile.with_voice_texts(missing) is missing


def test_a_regular_call_through_the_voice_channel_decides_and_ends(tmp_path: Path, fake_openai_server: Callable[..., FakeOpenAIServer]) -> None:
    pytest.importorskip("bench_openai")
    engines = pytest.importorskip("bench_voice.engines")
    if engines.missing_engines():
        pytest.skip(f"bench-voice[engines] extra not installed: {engines.INSTALL}")
    if "attach" not in vars(TurnTakingUser):
        pytest.skip("the kernel does not hand the conversation's line to a TurnTakingUser yet (TurnTakingUser.attach)")
    asked: list[str] = []

    def model(body: dict[str, Any]) -> dict[str, Any]:
        if len(body["messages"]) > 1:
            return caller(body)
        asked.append("backchannel" if "listening sound" in body["messages"][0]["content"] else "interrupt")
        # The first continuer question gets a yes; a garbled answer to the rest counts as no.
        return {"role": "assistant", "content": "YES" if asked.count("backchannel") == 1 and asked[-1] == "backchannel" else "yes?"}

    server = fake_openai_server(model)
    plugins = get_plugin_manager(["mock", "llm", "openai", "voice", "duplex"])
    models = {"user": ModelConfig(backend="openai", model="fake-model", base_url=server.base_url, max_retries=0)}
    config = RunConfig(
        domain="mock",
        plugins=["mock", "llm", "openai", "voice"],
        agent="oracle",
        user="voice-user",
        channel="voice",
        mode=Mode.FULL_DUPLEX,
        task_ids=[TASK],
        baseline=False,
        models=models,
        duplex={"speech_complexity": "regular"},
    )
    summary = run(config, tmp_path / "regular.db", plugins=plugins)
    store = Store(tmp_path / "regular.db")
    [row] = store.conversations(summary.run_id)
    said = [json.loads(m["message_json"]) for m in store.messages(f"{summary.run_id}/agent/{TASK}/0")]
    store.close()
    assert (row["termination_reason"], row["error"]) == ("user_stop", None)
    assert "interrupt" in asked and "backchannel" in asked
    assert any(m["role"] == "user" and m["content"] in ("uh-huh", "mm-hmm") for m in said)
