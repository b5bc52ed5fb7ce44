"""Hand-built timelines and the figures worked out by hand from tau2's definitions (200 ms ticks unless said).

Windows at 200 ms: a real barge-in must be yielded to within 10 ticks (2.0 s), a backchannel, tic or stray phrase must
not make the agent fall silent within 5 ticks (1.0 s), and the agent must not start speaking within 10 ticks (2.0 s) after
a tic or phrase it heard while silent. Segment [a, b) means ticks a..b-1 carry speech.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from bench_duplex import Timeline, TimelineEntry
from bench_interaction.timeline_metrics import PANEL, conversation_figures, few_events, load_timeline, run_figures


def timeline(
    ticks: int, agent: Sequence[tuple[int, int]] = (), user: Sequence[tuple[int, int]] = (), entries: Sequence[TimelineEntry] = (), tick_ms: int = 200
) -> Timeline:
    """A timeline as the duplex loop stores it, round-tripped through JSON like the stored event's data."""
    built = Timeline(tick_ms=tick_ms, ticks=ticks, agent_speech=list(agent), user_speech=list(user), user=list(entries))
    return load_timeline(json.loads(json.dumps(built.as_data())))


def tic(tick: int, kind: str = "vocal_tic", *, in_turn: bool = True, **more: Any) -> TimelineEntry:
    """A user entry carrying a speech insert."""
    return TimelineEntry(tick=tick, effects=({"type": "speech_insert", "kind": kind, "in_turn": in_turn, **more},))


def approx(figures: dict[str, float | None], expected: dict[str, float | None]) -> None:
    """Every expected figure, floats compared with a tolerance and None exactly."""
    for name, value in expected.items():
        assert figures[name] == (None if value is None else pytest.approx(value)), name


def test_a_plain_response() -> None:
    # User speaks ticks 0-9, agent 15-29: the agent answers 15 - 10 = 5 ticks after the user's end = 1.0 s.
    figures = conversation_figures(timeline(30, agent=[(15, 30)], user=[(0, 10)]))
    approx(
        figures,
        {
            "response_latency_mean": 1.0,
            "response_rate": 1.0,
            "response_total": 1,
            "agent_interruption_rate": 0.0,  # 0 agent interruptions / 1 response-eligible turn
            "yield_latency_mean": None,
            "yield_rate": None,
            "yield_total": 0,
            "response_latency_p50": 1.0,
            "response_latency_p90": 1.0,
            # 30 ticks = 6.0 s, speech from tick 0; nobody speaks on ticks 10-14 = 1.0 s of silence, none overlaps
            "duration_s": 6.0,
            "silence_seconds": 1.0,
            "silence_ratio": 1.0 / 6.0,
            "longest_silence_s": 1.0,
            "overlap_seconds": 0.0,
            "overlap_ratio": 0.0,
            "user_turns": 1,
            "interruption_rate": 0.0,
        },
    )


def test_no_response_then_the_user_speaks_again() -> None:
    # User 0-4, silence, user again 20-24, the agent never speaks: the first turn is a no_response (the user spoke
    # again first); the second has nothing after it, so no event. response_rate 0/1.
    figures = conversation_figures(timeline(30, user=[(0, 5), (20, 25)]))
    approx(
        figures,
        {
            "response_rate": 0.0,
            "response_total": 1,
            "response_latency_mean": None,
            "response_latency_p50": None,
            "agent_interruption_rate": 0.0,
            # silence: ticks 5-19 (15) and 25-29 (5) = 20 ticks = 4.0 s of 30 = 6.0 s; longest 15 ticks = 3.0 s
            "silence_seconds": 4.0,
            "silence_ratio": 4.0 / 6.0,
            "longest_silence_s": 3.0,
        },
    )


def test_a_tie_goes_to_the_agent() -> None:
    # User 0-4; at tick 10 both the agent (10 only) and the user (10-11) start. The first turn's reply (10) is not
    # later than the user's next turn (10): a response, (10 - 5) ticks = 1.0 s. The user's second segment began over
    # the agent (a barge-in) and the agent is silent at 11: yielded after 1 tick = 0.2 s. The agent's segment began
    # while the user spoke: an agent interruption, 1 per response-eligible turn.
    figures = conversation_figures(timeline(20, agent=[(10, 11)], user=[(0, 5), (10, 12)]))
    approx(
        figures,
        {
            "response_latency_mean": 1.0,
            "response_rate": 1.0,
            "response_total": 1,
            "yield_rate": 1.0,
            "yield_latency_mean": 0.2,
            "agent_yield_time_s": 0.2,
            "agent_interrupts_count": 1,
            "agent_interruption_rate": 1.0,
            "user_interruptions": 1,
            "agent_interruptions": 1,
            "user_turns": 2,
            "interruption_rate": 1.0,  # (1 + 1) / 2 user turns
            "overlap_seconds": 0.2,
        },
    )  # tick 10


def test_the_user_one_tick_ahead_of_the_agent_is_no_response() -> None:
    # User 0-4 and 9 (ending with the agent silent), agent from 11: the user spoke again (9) before the agent (11): the
    # first turn is a no_response; the second turn (ends at 10) gets the reply at 11, 0.2 s later.
    figures = conversation_figures(timeline(20, agent=[(11, 20)], user=[(0, 5), (9, 10)]))
    approx(figures, {"response_rate": 0.5, "response_total": 2, "response_latency_mean": 0.2})


@pytest.mark.parametrize("agent_end, correct", [(20, True), (6, False)])
def test_a_backchannel_during_agent_speech(agent_end: int, correct: bool) -> None:
    # Agent from 0, user "mm-hmm" at 5-6 (action backchannel). Talking on through ticks 5-9 is correct; an agent that
    # stops at 6 fell silent within the 1.0 s window: an error. A backchannel is no turn: no response event, no yield event.
    figures = conversation_figures(
        timeline(25, agent=[(0, agent_end)], user=[(5, 7)], entries=[TimelineEntry(tick=5, text="mm-hmm", action="backchannel")])
    )
    approx(
        figures,
        {
            "selectivity_backchannel": 1.0 if correct else 0.0,
            "backchannel_total": 1,
            "backchannel_count": 1,
            "response_total": 0,
            "response_rate": None,
            "agent_interruption_rate": None,
            "yield_total": 0,
            "user_turns": 0,
            "interruption_rate": None,
            "overlap_seconds": 0.4 if correct else 0.2,
        },
    )  # ticks 5-6 both speak, or tick 5 alone


def test_a_barge_in_the_agent_yields_to_within_the_window() -> None:
    # Agent 0-11, the user barges in at 8 (to 14): the agent is first silent at 12, (12 - 8) ticks = 0.8 s.
    # No response event: the agent never speaks after the user's end (15).
    figures = conversation_figures(
        timeline(25, agent=[(0, 12)], user=[(8, 15)], entries=[TimelineEntry(tick=8, text="wait,", action="generate_message")])
    )
    approx(
        figures,
        {
            "yield_rate": 1.0,
            "yield_total": 1,
            "yield_latency_mean": 0.8,
            "agent_yield_time_s": 0.8,
            "user_interruptions": 1,
            "user_turns": 1,
            "interruption_rate": 1.0,
            "response_total": 0,
            "overlap_seconds": 0.8,
        },
    )  # ticks 8-11


@pytest.mark.parametrize("agent_end, yielded, latency", [(30, False, None), (15, False, None), (14, True, 1.8)])
def test_a_barge_in_and_the_two_second_window(agent_end: int, yielded: bool, latency: float | None) -> None:
    # The user barges in at 5 (to 9); the window is ticks 5-14. Agent silent first at 30 or 15: outside, no_yield
    # (yield time without the window: 25 or 10 ticks = 5.0 or 2.0 s); at 14: yielded after 9 ticks = 1.8 s.
    figures = conversation_figures(timeline(35, agent=[(0, agent_end)], user=[(5, 10)]))
    approx(
        figures,
        {
            "yield_rate": 1.0 if yielded else 0.0,
            "yield_total": 1,
            "yield_latency_mean": latency,
            "agent_yield_time_s": (agent_end - 5) * 0.2,
            "user_interruptions": 1,
        },
    )


def test_two_barge_ins_pooled_over_a_run() -> None:
    # The yielded one above (0.8 s, yield time 0.8 s) and one never yielded to (agent 0-29, user 5-9; yield time 5.0 s):
    # pooled yield_rate 1/2, yield latency over the one yield 0.8 s, yield time (0.8 + 5.0) / 2 = 2.9 s.
    figures = run_figures([timeline(25, agent=[(0, 12)], user=[(8, 15)]), timeline(35, agent=[(0, 30)], user=[(5, 10)])])
    approx(
        figures,
        {
            "n_conversations": 2,
            "yield_rate": 0.5,
            "yield_total": 2,
            "yield_latency_mean": 0.8,
            "agent_yield_time_s": 2.9,
            "user_interruptions": 2,
            "yield_rate (mean per conversation)": 0.5,
            "duration_s": 12.0,
        },
    )  # 5.0 s + 7.0 s
    assert set(few_events(figures)) == {"yield_rate"}  # 2 events < 10: flagged


def test_the_agent_interrupts_the_user() -> None:
    # User 0-9, the agent starts at 6 while the user still speaks: an agent interruption. That user segment ends over
    # the agent, so it is no turn; the user's next turn 25-29 is answered at 35, (35 - 30) ticks = 1.0 s.
    # agent_interruption_rate = 1 interruption / 1 response-eligible turn.
    figures = conversation_figures(timeline(40, agent=[(6, 20), (35, 40)], user=[(0, 10), (25, 30)]))
    approx(
        figures,
        {
            "agent_interrupts_count": 1,
            "agent_interruption_rate": 1.0,
            "agent_interruptions": 1,
            "response_total": 1,
            "response_latency_mean": 1.0,
            "user_turns": 2,
            "interruption_rate": 0.5,  # 1 interruption / 2 user turns
            "overlap_seconds": 0.8,
        },
    )  # ticks 6-9


@pytest.mark.parametrize("agent_start, correct, latency", [(12, False, 0.4), (21, True, 2.2)])
def test_an_in_turn_vocal_tic_while_the_agent_is_silent(agent_start: int, correct: bool, latency: float) -> None:
    # User 0-9 with a cough inserted at tick 3, agent silent. The agent starting within [0, 10 + 10] (at 12) counts as
    # answering the tic, an error (tau2's rule, even though the turn was real); at 21 it is outside: correct.
    # The turn is still a response event: (12 - 10) or (21 - 10) ticks.
    figures = conversation_figures(timeline(30, agent=[(agent_start, 30)], user=[(0, 10)], entries=[tic(3, text="[cough]")]))
    approx(figures, {"selectivity_vocal_tic": 1.0 if correct else 0.0, "vocal_tic_total": 1, "response_latency_mean": latency, "response_rate": 1.0})


def test_an_in_turn_vocal_tic_while_the_agent_speaks_is_no_barge_in() -> None:
    # Agent 0-19; the user starts at 5 (to 7) with a tic: scored as a vocal tic (before a barge-in), and the agent
    # talking on through ticks 5-9 is correct. No yield event, no user interruption.
    figures = conversation_figures(
        timeline(
            25,
            agent=[(0, 20)],
            user=[(5, 8)],
            entries=[TimelineEntry(tick=5, action="generate_message", effects=({"type": "speech_insert", "kind": "vocal_tic", "in_turn": True},))],
        )
    )
    approx(figures, {"selectivity_vocal_tic": 1.0, "vocal_tic_total": 1, "yield_total": 0, "user_interruptions": 0})


@pytest.mark.parametrize("agent_start, correct", [(19, False), (20, True)])
def test_an_out_of_turn_vocal_tic_while_the_agent_is_silent(agent_start: int, correct: bool) -> None:
    # User 0-4, then a cough at tick 8 while the user is silent (its span is the trigger tick, 8-9, as tau2 marks it).
    # The agent starting within [8, 9 + 10 = 19] answers the cough: at 19 an error, at 20 correct.
    figures = conversation_figures(
        timeline(25, agent=[(agent_start, 25)], user=[(0, 5)], entries=[tic(8, in_turn=False, duration_ms=600, text="[cough]")])
    )
    approx(figures, {"selectivity_vocal_tic": 1.0 if correct else 0.0, "vocal_tic_total": 1, "response_latency_mean": (agent_start - 5) * 0.2})


@pytest.mark.parametrize("agent_end, total", [(20, 0), (15, 1), (14, 1)])
def test_an_out_of_turn_vocal_tic_while_the_agent_speaks(agent_end: int, total: int) -> None:
    # Agent from 0, a cough at 10 while the user is silent. Stopping within 1.0 s of it ((end - 10) ticks <= 5) is an
    # error; talking on is not scored at all (tau2 records only the error here), so selectivity stays null.
    figures = conversation_figures(timeline(25, agent=[(0, agent_end)], entries=[tic(10, in_turn=False, duration_ms=400)]))
    approx(figures, {"vocal_tic_total": total, "selectivity_vocal_tic": 0.0 if total else None})


def test_non_directed_speech_in_turn_and_out_of_turn() -> None:
    # "Hold on a second." is the user's whole segment 0-5 while the agent is silent; the agent first speaks at 20 > 6 + 10:
    # correct. Then "Not now." at 25 while the agent speaks (20-27): it stops (28 - 25) = 3 ticks later, within 1.0 s:
    # an error. selectivity_non_directed 1/2. The turn 0-5 is answered at 20: (20 - 6) ticks = 2.8 s.
    figures = conversation_figures(
        timeline(
            30,
            agent=[(20, 28)],
            user=[(0, 6)],
            entries=[tic(0, "non_directed", text="Hold on a second."), tic(25, "non_directed", in_turn=False, duration_ms=600, text="Not now.")],
        )
    )
    approx(figures, {"selectivity_non_directed": 0.5, "non_directed_total": 2, "response_latency_mean": 2.8})


def test_the_stop_chunk_is_not_a_turn() -> None:
    # User 0-4, agent 8-24, the user's stop token alone on the last tick 24 (tick 23 silent): that tick is dropped,
    # 24 ticks remain. Without the rule the stop chunk would be a barge-in the agent never yields to.
    figures = conversation_figures(timeline(25, agent=[(8, 25)], user=[(0, 5), (24, 25)]))
    approx(figures, {"duration_s": 4.8, "yield_total": 0, "response_total": 1, "response_latency_mean": 0.6, "user_turns": 1})
    # The user speaking on 23-24 is a real (two-tick) segment: kept, a barge-in not yielded to within what remains.
    kept = conversation_figures(timeline(25, agent=[(8, 25)], user=[(0, 5), (23, 25)]))
    approx(kept, {"duration_s": 5.0, "yield_total": 1, "yield_rate": 0.0})


def test_overlap_and_silence() -> None:
    # Nobody speaks on ticks 0-4 (the wait before the first word is left out); user 5-14, agent 13-24, user 30-34.
    # From tick 5 to the end: 35 ticks = 7.0 s. Both speak on 13-14: 0.4 s. Neither on 25-29 and 35-39: 10 ticks =
    # 2.0 s, the longest 5 ticks = 1.0 s. The agent began over the user (an interruption); that user segment ends over
    # the agent, so the only response-eligible turn is the last, with nothing after it: no response event.
    figures = conversation_figures(timeline(40, agent=[(13, 25)], user=[(5, 15), (30, 35)]))
    approx(
        figures,
        {
            "duration_s": 8.0,
            "overlap_seconds": 0.4,
            "overlap_ratio": 2 / 35,
            "silence_seconds": 2.0,
            "silence_ratio": 10 / 35,
            "longest_silence_s": 1.0,
            "agent_interruptions": 1,
            "user_turns": 2,
            "interruption_rate": 0.5,
            "response_total": 0,
            "agent_interruption_rate": None,
        },
    )


def test_latency_percentiles() -> None:
    # Three answered turns: 0-1 -> 3 (0.2 s), 10-11 -> 14 (0.4 s), 20-21 -> 27 (1.0 s). Mean 1.6 / 3; p50 the middle,
    # 0.4; p90 at rank (3 - 1) * 0.9 = 1.8: 0.4 + 0.8 * (1.0 - 0.4) = 0.88.
    figures = conversation_figures(timeline(30, agent=[(3, 5), (14, 16), (27, 29)], user=[(0, 2), (10, 12), (20, 22)]))
    approx(figures, {"response_total": 3, "response_latency_mean": 1.6 / 3, "response_latency_p50": 0.4, "response_latency_p90": 0.88})


def test_another_tick_length() -> None:
    # At 100 ms ticks the windows are twice as many ticks: agent 0-39, barge-in at 10, agent silent at 28: within
    # 20 ticks, yielded after 18 ticks = 1.8 s.
    figures = conversation_figures(timeline(50, agent=[(0, 28)], user=[(10, 20)], tick_ms=100))
    approx(figures, {"yield_rate": 1.0, "yield_latency_mean": 1.8, "duration_s": 5.0})


@pytest.mark.parametrize("ticks", [0, 50])
def test_an_empty_conversation_gives_nulls(ticks: int) -> None:
    # Nothing said (no tick, or 10 s of silence): every figure that needs an event or speech is null, counts are 0.
    figures = conversation_figures(timeline(ticks))
    assert all(figures[name] is None for name in PANEL)
    approx(
        figures,
        {
            "response_total": 0,
            "yield_total": 0,
            "agent_interrupts_count": 0,
            "duration_s": ticks * 0.2,
            "overlap_seconds": None,
            "overlap_ratio": None,
            "silence_seconds": None,
            "silence_ratio": None,
            "longest_silence_s": None,
            "agent_yield_time_s": None,
            "interruption_rate": None,
            "response_latency_p50": None,
            "response_latency_p90": None,
        },
    )
    assert run_figures([])["response_rate"] is None


def test_unknown_effects_and_adjacent_runs() -> None:
    # A burst and muffling on the user's speech change nothing; stored runs 0-4 and 5-9 are one segment 0-9.
    figures = conversation_figures(
        timeline(
            30,
            agent=[(15, 30)],
            user=[(0, 5), (5, 10)],
            entries=[TimelineEntry(tick=2, effects=({"type": "burst", "file": "dog.wav"}, {"type": "muffling"}, {"type": "new"}))],
        )
    )
    approx(figures, {"response_latency_mean": 1.0, "response_total": 1, "user_turns": 1, "vocal_tic_total": 0})


def test_effects_applied_count_per_utterance_or_tick_and_the_continuous_ones_come_from_the_conditions() -> None:
    from bench_interaction.metric import continuous_effects, effects_applied

    muffled = {"type": "muffling"}
    entries = [TimelineEntry(tick=t, text="x", utterance="u1", effects=(muffled,)) for t in (5, 6, 7)]
    entries += [
        TimelineEntry(tick=9, effects=({"type": "frame_drop", "ms": 150},)),
        TimelineEntry(tick=12, effects=({"type": "frame_drop", "ms": 150},)),
        TimelineEntry(tick=20, effects=({"type": "speech_insert", "kind": "non_directed", "in_turn": False},)),
    ]
    found = effects_applied(Timeline(ticks=30, user=entries))
    # Muffling is marked on each tick of its utterance: one application; frame drops count per tick.
    assert found == {"muffling": 1, "frame_drop": 2, "non_directed (out of turn)": 1}
    conditions = {"background_file": "a.wav", "telephony": True, "missing_files": ["b.wav"]}
    assert continuous_effects(conditions) == ["background noise (a.wav)", "telephony", "1 noise files missing"]
    assert continuous_effects({"background_file": "a.wav", "missing_files": ["a.wav"]}) == ["1 noise files missing"]
