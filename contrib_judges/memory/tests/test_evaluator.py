"""The pipeline's steps: existence check (exact core, top-k neighbours over the threshold, judge confirmation),
dependency linking, and the audit of unfinished goals that nothing blocks."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import attrs
from bench_memory.evaluator import RELATED_K, MemoryEvaluator
from bench_memory.index import LexicalIndex
from bench_memory.judges import Candidate, MemoryJudge, RulesJudge
from bench_memory.store import GoalStore, StoredGoal
from bench_memory.turns import Turn, split_turns

from bench_kernel import AssistantMessage, ToolCall, ToolMessage, UserMessage

TURN = Turn(number=1, first=0, last=1, user="", system="")


@attrs.define
class Scripted(MemoryJudge):
    """A judge whose answers the test sets, recording what it was asked."""

    candidates: list[Candidate] = attrs.field(factory=list)
    same: bool = True
    label: str = "none"
    status: str | None = None
    asked_same: list[str] = attrs.field(factory=list)
    asked_relation: list[str] = attrs.field(factory=list)
    audited: list[str] = attrs.field(factory=list)

    async def extract(self, turn: Turn) -> list[Candidate]:
        return list(self.candidates)

    async def same_goal(self, candidate: Candidate, goal: StoredGoal, turn: Turn) -> bool:
        self.asked_same.append(goal.id)
        return self.same

    async def relation(self, candidate: Candidate, goal: StoredGoal, turn: Turn) -> str:
        self.asked_relation.append(goal.id)
        return self.label

    async def audit(self, goal: StoredGoal, turn: Turn, goals: Sequence[StoredGoal]) -> str | None:
        self.audited.append(goal.id)
        return self.status


def cand(core: str, status: str | None = None, speaker: str = "user", intent: str = "book hotel") -> Candidate:
    return Candidate(domain="Hotels", intent=intent, content=core, core_content=core, status=status, speaker=speaker)


def evaluator(judge: MemoryJudge, *cores: str) -> MemoryEvaluator:
    ev = MemoryEvaluator(store=GoalStore("c"), index=LexicalIndex(), judge=judge)
    for core in cores:
        asyncio.run(ev.insert(cand(core), TURN))
    return ev


def test_an_equal_core_content_matches_without_asking_the_judge() -> None:
    judge = Scripted(same=False)
    ev = evaluator(judge, "book hotel rome", "book hotel paris")
    assert asyncio.run(ev.existing(cand("book hotel paris"), TURN)) == "g2" and judge.asked_same == []


def test_neighbours_over_the_threshold_are_confirmed_by_the_judge_in_order() -> None:
    judge = Scripted(same=True)
    ev = evaluator(judge, "check weather", "book hotel paris")
    assert asyncio.run(ev.existing(cand("book hotel"), TURN)) == "g2" and judge.asked_same == ["g2"]  # 'check weather' is below 0.75
    judge.same, judge.asked_same = False, []
    assert asyncio.run(ev.existing(cand("book hotel"), TURN)) is None and judge.asked_same == ["g2"]


def test_only_the_top_k_neighbours_are_considered() -> None:
    judge = Scripted(same=False)
    ev = evaluator(judge, *[f"book hotel paris {n}" for n in "abcdefg"])
    ev.top_k = 3
    asyncio.run(ev.existing(cand("book hotel paris"), TURN))
    assert len(judge.asked_same) == 3


def test_a_new_goal_is_linked_to_its_nearest_goals_as_the_judge_labels_them() -> None:
    judge = Scripted(label="none")
    ev = evaluator(judge, "book hotel paris", "check weather", "book flight rome", "book ride", "book bus", "search salon")
    judge.label, judge.asked_relation = "dependency", []
    asyncio.run(ev.insert(cand("make payment hotel", intent="make payment"), TURN))
    assert len(judge.asked_relation) == RELATED_K == 5  # ATOD's top 3, widened: one family's short labels crowd the top 3
    assert {(g, kind) for g, _, kind in ev.store.edges()} == {("g7", "dependency")}
    assert ev.store.dependencies("g7") == judge.asked_relation


def test_a_system_mention_without_news_inserts_nothing_but_news_does() -> None:
    judge = Scripted(candidates=[cand("book hotel rome", speaker="system"), cand("check weather", "completed", speaker="system")])
    ev = evaluator(judge)
    trace = asyncio.run(ev.step(TURN))
    assert [(g.core_content, g.status) for g in ev.store.goals()] == [("check weather", "completed")]
    assert (trace.candidates, trace.inserted, trace.updated) == (2, 1, 0) and trace.latency_ms >= 0


def test_blocked_and_finished_goals_are_not_audited() -> None:
    judge = Scripted(status="completed")
    ev = evaluator(judge, "book hotel paris", "make payment hotel", "check weather", "book flight rome")
    ev.store.link("g2", "g1", "dependency")
    ev.store.update("g3", turn=1, status="completed")
    ev.store.update("g4", turn=1, status="pending")
    assert [g.id for g in ev.auditable()] == ["g1", "g4"]
    assert asyncio.run(ev.audit(TURN)) == 2 and judge.audited == ["g1", "g4"]
    assert [g.status for g in ev.store.goals()] == ["completed", "open", "completed", "completed"]
    judge.audited = []
    asyncio.run(ev.audit(TURN))
    assert judge.audited == ["g2"]  # its prerequisite finished: no longer blocked


def test_the_rules_judge_audits_generic_news_against_the_one_pending_goal() -> None:
    judge = RulesJudge()
    ev = evaluator(judge, "book hotel paris", "check weather")
    ev.store.update("g1", turn=1, status="pending")
    turn = Turn(number=2, first=2, last=3, user="Any news?", system="Good news, your reservation is confirmed.")
    asyncio.run(ev.audit(turn))
    assert [g.status for g in ev.store.goals()] == ["completed", "open"]
    ev.store.update("g2", turn=2, status="pending")
    ev.store.update("g1", turn=2, status="pending")
    asyncio.run(ev.audit(Turn(number=3, first=4, last=5, user="", system="It is confirmed now.")))
    assert [g.status for g in ev.store.goals()] == ["pending", "pending"]  # two goals in question: no guess


def test_rules_relations() -> None:
    judge = RulesJudge()
    hotel = StoredGoal(
        id="g1",
        domain="Hotels",
        intent="book hotel",
        status="open",
        content="",
        core_content="book hotel",
        slots={},
        history=[],
        first_turn=1,
        last_turn=1,
    )
    pay = Candidate(domain="Payment", intent="make payment", content="pay for the hotel", core_content="make payment hotel", slots={"for": "hotel"})
    other = Candidate(domain="Hotels", intent="search hotel", content="find hotels in Nice", core_content="search hotel nice")
    after = Candidate(domain="RideSharing", intent="book ride", content="a taxi once the hotel is booked", core_content="book ride")
    unrelated = Candidate(domain="Weather", intent="check weather", content="the weather", core_content="check weather")
    labels = [asyncio.run(judge.relation(c, hotel, TURN)) for c in (pay, other, after, unrelated)]
    assert labels == ["dependency", "link", "dependency", "none"]


def test_turns_are_cut_at_user_utterances_with_tool_results_attached() -> None:
    messages = [
        AssistantMessage(content="Hi"),
        UserMessage(content="Book it"),
        AssistantMessage(tool_calls=[ToolCall(id="a", name="book_hotel", arguments={"city": "Paris"})]),
        ToolMessage(id="a", content='{"status": "pending"}'),
        AssistantMessage(content="Pending."),
        UserMessage(tool_calls=[ToolCall(id="b", name="toggle", arguments={})]),
        ToolMessage(id="b", content="ok"),
        UserMessage(content="Thanks"),
    ]
    turns = split_turns(messages)
    assert [(t.number, t.first, t.last) for t in turns] == [(1, 0, 0), (2, 1, 6), (3, 7, 7)]
    assert turns[1].user == "Book it" and turns[1].system == "Pending." and turns[1].tools[0].name == "book_hotel"
    assert "tool book_hotel" in turns[1].transcript() and split_turns([]) == []


def test_the_rules_audit_follows_it_back_to_the_goal_just_named_and_tells_same_family_goals_apart() -> None:
    judge = RulesJudge()
    ev = evaluator(judge, "book hotel")
    asyncio.run(ev.insert(cand("book restaurant", intent="book restaurant"), TURN))
    ev.store.update("g1", turn=1, status="pending", slots={"place": "rome"})
    ev.store.update("g2", turn=1, slots={"place": "oslo"})
    asyncio.run(ev.audit(Turn(number=2, first=2, last=3, user="", system="I asked the restaurant in Oslo; it is awaiting confirmation.")))
    assert [g.status for g in ev.store.goals()] == ["pending", "pending"]  # 'it' is the restaurant, not the pending hotel
    asyncio.run(ev.insert(cand("book hotel nice"), TURN))
    ev.store.update("g3", turn=1, slots={"place": "nice"})
    asyncio.run(ev.audit(Turn(number=3, first=4, last=5, user="", system="Your hotel in Nice is confirmed.")))
    assert [g.status for g in ev.store.goals()] == ["pending", "pending", "completed"]
