"""MM-tau-p²'s counters and the mm-tap composite on hand-built conversations, degenerate cases included."""

from __future__ import annotations

import pytest
from bench_mmtap.counts import count
from bench_mmtap.metric import composite, ratio

from bench_kernel import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage


def test_a_misheard_field_a_useful_repeat_request_and_a_recovery() -> None:
    messages: list[Message] = [
        AssistantMessage(content="Hi! How can I help you today?"),
        UserMessage(content="My number is 612 555 0142."),  # 1: misheard
        AssistantMessage(content="Sorry, I could not catch that. Could you repeat your phone number?"),
        UserMessage(content="My number is 612 555 0142."),  # 3: heard, a restatement
        AssistantMessage(content="Shall I suspend your line? Please confirm."),
        UserMessage(content="Yes, go ahead."),
        AssistantMessage(tool_calls=[ToolCall(id="a", name="suspend_line", arguments={"phone": "612-555-0142"})]),
        ToolMessage(id="a", content="ok"),
        AssistantMessage(tool_calls=[ToolCall(id="b", name="refuel_data", arguments={"gb": 2})]),  # not confirmed
        ToolMessage(id="b", content="Error: bad", error=True),
        AssistantMessage(tool_calls=[ToolCall(id="c", name="refuel_data", arguments={"gb": 2.0})]),
        ToolMessage(id="c", content="ok"),
    ]
    said = ["612-555-0142"]
    turns = [
        (1, {"fields": said, "fields_said": 1, "fields_heard": 0, "misheard": [{"kind": "phone"}]}),
        (3, {"fields": said, "fields_said": 1, "fields_heard": 1, "misheard": []}),
    ]
    c = count(messages, turns, {"suspend_line", "refuel_data"}).as_dict()
    assert ratio(c, "CFA") == 0.5
    assert (c["errors"], c["recovered"]) == (2, 2)  # the misheard turn (heard at 3) and the tool error (fixed at 11)
    assert ratio(c, "RTC") == pytest.approx((2 + 2) / 2)
    assert ratio(c, "CP") == 1.0 and ratio(c, "CR") == 1.0
    assert ratio(c, "UES") == pytest.approx(1 / 3)  # one of three user messages restates an earlier one
    assert ratio(c, "TE") == pytest.approx(5 / 6)  # the repeat request is not a necessary message
    assert (c["irreversible"], c["confirmed"]) == (3, 1) and ratio(c, "IAS") == pytest.approx(1 / 3)
    assert (c["critical_irreversible"], c["critical_confirmed"]) == (1, 1) and ratio(c, "SR") == 1.0


def test_no_asr_error_and_no_tool_call_leave_their_ratios_undefined() -> None:
    c = count([AssistantMessage(content="Hello."), UserMessage(content="Bye.")], [], set()).as_dict()
    assert ratio(c, "ERR") is None and ratio(c, "IAS") is None and ratio(c, "CFA") is None and ratio(c, "CR") is None
    assert ratio(c, "TE") == 1.0 and ratio(c, "UES") == 0.0


def test_the_composite_with_every_term() -> None:
    figures = {
        "pass^1": 0.8,
        "CFA (micro)": 0.5,
        "MRS": 1.2,
        "ARGA": 0.3,
        "ERR (micro)": 0.6,
        "TE (micro)": 0.9,
        "UES (micro)": 0.25,
        "TO": 0.2,
        "IAS (micro)": 1.0,
    }
    expected = 0.35 * 0.4 + 0.35 * (1.2 + 0.3 + 0.6) / 3 + 0.2 * (0.9 + 1 / 1.25 + 1 / 1.2) / 3 + 0.1 * 1.0
    assert composite(figures)["mm-tap"] == pytest.approx(expected)
    assert composite(figures)["mm-tap terms left out (undefined)"] == 0


def test_undefined_terms_leave_their_group_and_a_negative_turn_overhead_counts_above_one() -> None:
    figures = {
        "pass^1": 1.0,
        "CFA (micro)": 1.0,
        "MRS": None,
        "ARGA": None,
        "ERR (micro)": None,
        "TE (micro)": 1.0,
        "UES (micro)": 0.0,
        "TO": -0.5,
        "IAS (micro)": None,
    }
    # Only the CFA and efficiency groups remain: their weights (0.35, 0.2) are renormalised.
    efficiency = (1.0 + 1.0 + 2.0) / 3
    assert composite(figures)["mm-tap"] == pytest.approx((0.35 * 1.0 + 0.2 * efficiency) / 0.55)
    assert composite(figures)["mm-tap terms left out (undefined)"] == 4


def test_weights_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from bench_mmtap.metric import weights

    monkeypatch.setenv("BENCH_MMTAP_WEIGHTS", "0.25,0.25,0.25,0.25")
    assert weights() == (0.25, 0.25, 0.25, 0.25)
    monkeypatch.setenv("BENCH_MMTAP_WEIGHTS", "0.5,0.5,0.5,0.5")
    with pytest.raises(ValueError, match="summing to 1"):
        weights()


def conversation(agent_messages: int, misheard: bool, reward: float | None) -> tuple[dict[str, int], bool, float | None]:
    return {"agent_messages": agent_messages}, misheard, reward


def test_paired_figures_mrs_to_and_arga() -> None:
    from bench_mmtap.metric import paired_figures

    voice = [conversation(6, True, 1.0), conversation(8, True, 0.0), conversation(4, False, 1.0), conversation(6, False, 0.0)]
    found = paired_figures(voice, [1.0, 1.0, 1.0, 0.0], 16)
    assert found["pass^1"] == 0.5 and found["ARGA"] == 0.5
    assert found["MRS"] == pytest.approx(0.5 / 0.75)
    assert found["TO"] == pytest.approx(24 / 16 - 1)


def test_paired_figures_degenerate_cases() -> None:
    from bench_mmtap.metric import paired_figures

    voice = [conversation(3, False, 1.0), conversation(3, False, 1.0)]
    # the text arm never passes: MRS is undefined (not infinite); fewer spoken turns than typed: TO < 0
    found = paired_figures(voice, [0.0, None], 12)
    assert found["MRS"] is None and found["TO"] == pytest.approx(-0.5)
    assert found["ARGA"] is None  # no conversation with a misheard field
    unpaired = paired_figures(voice, None, 0)
    assert unpaired["MRS"] is None and unpaired["TO"] is None and unpaired["pass^1"] == 1.0
