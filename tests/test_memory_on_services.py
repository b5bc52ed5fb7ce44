"""The memory evaluator on the services suite: it reproduces the generated dialogues' annotations, and loses ground when
the user's words are paraphrased or its requests packed more densely into fewer utterances.

One run of the whole default suite (oracle agent, planned user; services + memory + atod) gives the clean figures from
the stored metric values. The same stored dialogues are then rewritten (our own rewording map; consecutive requests
merged into one utterance, details already given referred to rather than repeated, the goal events moved with their
messages) and evaluated offline with `evaluate_dialogues`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

import attrs
import pytest
from bench_atod import Goal
from bench_memory import evaluate_dialogues
from click.testing import CliRunner

from bench_kernel import Event, Message, Store, UserMessage, converter
from bench_kernel.testing import cli

Dialogue = tuple[list[Goal], list[Message], list[Event]]

# Our own rewording of the planned user's lines: the same requests in words outside the rules judge's lists.
PARAPHRASES: tuple[tuple[str, str], ...] = (
    (r"I'm looking for (.+?) in (\w+) on ([\d-]+)\. What is there\?", r"Anything good in \2 on \3? I mean \1."),
    (r"Please book the (.+?) \"", r"Set me up with \""),
    (r"Has my (.+?) booking for", "Any word on"),
    (r"Please pay for the (.+?) booking", "Settle what I owe for"),
    (r"What is the balance of my account", "How much money sits in"),
    (r"Please transfer", "Shift"),
    (r"Please send (\w+) a request to pay me", r"Ask \1 to reimburse me"),
    (r"What is the forecast for", "Will it be sunny in"),
    (r"Please add a reminder", "Make sure I don't forget"),
    (r"Please add a calendar entry", "Pencil in"),
    (r"What is in my calendar on", "Am I busy on"),
    (r"Which reminders do I have set\?", "What was I supposed to remember?"),
    (r"forget it, I won't need it", "I've changed my mind about that"),
)


def paraphrase(text: str) -> str:
    """A user line in other words (the first rewording that applies, plus the abandonment's)."""
    for pattern, replacement in PARAPHRASES:
        text = re.sub(pattern, replacement, text)
    return text


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    db = tmp_path_factory.mktemp("memory") / "m.db"
    result = CliRunner().invoke(
        cli, ["run", "--plugin", "services", "--plugin", "memory", "--plugin", "atod", "--no-baseline", "--db", str(db), "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    store = Store(db)
    try:
        yield db, store.runs()[0]["id"]
    finally:
        store.close()


def _dialogues(db: Path, run_id: str) -> list[Dialogue]:
    """Every stored conversation of the run with its task's goals (from the suite) and its events."""
    tasks = {t["id"]: t for t in json.loads(files("bench_services").joinpath("data/tasks.json").read_text(encoding="utf-8"))}
    store = Store(db)
    try:
        out = []
        for row in store.conversations(run_id):
            goals = [converter.structure(g, Goal) for g in tasks[row["task_id"]]["goals"]]
            messages = [converter.structure(json.loads(m["message_json"]), Message) for m in store.messages(row["id"])]  # type: ignore[arg-type]
            events = [
                Event(kind=e["kind"], data=json.loads(e["data_json"] or "{}"), message_index=e["message_index"], source=e["source"] or "")
                for e in store.conversation_events(row["id"])
            ]
            out.append((goals, messages, events))
        return out
    finally:
        store.close()


def paraphrased(dialogue: Dialogue) -> Dialogue:
    """The user's utterances reworded; everything else (tool calls, events) as it was."""
    goals, messages, events = dialogue
    return goals, [attrs.evolve(m, content=paraphrase(m.content or "")) if isinstance(m, UserMessage) else m for m in messages], events


def packed(lines: Sequence[str]) -> str:
    """Requests in one breath: what an earlier one said (place and date, an offer's name) is referred to, not repeated."""
    out: list[str] = []
    for line in lines:
        for earlier in out:
            for detail in re.findall(r" in \w+ on [\d-]+", earlier):
                line = line.replace(detail, "")
            for name in re.findall(r'"[^"]+"', earlier):
                line = re.sub(rf"the (?:[\w ]+ )?{re.escape(name)}", "it", line)
                line = re.sub(rf"(?:for )?{re.escape(name)}", "", line)
        out.append(line)
    return " ".join(out)


def dense(dialogue: Dialogue, size: int = 3) -> Dialogue:
    """Every `size` consecutive user turns merged: the requests in one utterance (`packed`), then the turns' replies and tools.

    Goal events move with their messages (an event at a merged utterance moves to the merged one), so the gold still
    says which goal changed at which message.
    """
    goals, messages, events = dialogue
    starts = [i for i, m in enumerate(messages) if isinstance(m, UserMessage)]
    ends = [*starts[1:], len(messages)]
    order: list[int] = list(range(starts[0] if starts else len(messages)))
    position: dict[int, int] = {}
    merged: dict[int, str] = {}
    for n in range(0, len(starts), size):
        group = list(range(n, min(n + size, len(starts))))
        head = starts[group[0]]
        merged[head] = packed([messages[starts[k]].content or "" for k in group])
        order.append(head)
        position.update({starts[k]: head for k in group})
        order += [i for k in group for i in range(starts[k] + 1, ends[k])]
    new_index = {old: new for new, old in enumerate(order)}
    new_index.update({old: new_index[head] for old, head in position.items()})
    new_messages = [attrs.evolve(messages[i], content=merged[i]) if i in merged else messages[i] for i in order]
    new_events = [attrs.evolve(e, message_index=new_index[e.message_index]) if e.message_index is not None else e for e in events]
    return goals, new_messages, new_events


def figures(dialogues: Sequence[Dialogue]) -> dict[str, float]:
    """Run-level figures of the offline evaluation: detection F1 (macro), status and dependency figures (micro)."""
    results = evaluate_dialogues(dialogues)
    assert not [r.error for r in results if r.error]
    scores = [r.scores for r in results if r.scores is not None]
    compared = sum(s.statuses_compared for s in scores)
    tp, fp, fn = (sum(getattr(s, f"dependency_{k}") for s in scores) for k in ("tp", "fp", "fn"))
    return {
        "detection_f1": sum(s.detection_f1 or 0.0 for s in scores) / len(scores),
        "status_accuracy": sum(s.statuses_correct for s in scores) / compared,
        "final_status_accuracy": sum(s.final_correct for s in scores) / sum(s.final_compared for s in scores),
        "dependency_f1": 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 1.0,
    }


def _stored(db: Path, metric: str) -> list[Any]:
    store = Store(db)
    try:
        return [r["value"] for r in store.db.query("select value from metric_values where metric = ?", [metric])]
    finally:
        store.close()


def test_the_memory_evaluator_reproduces_the_services_annotations(suite: tuple[Path, str]) -> None:
    db, _ = suite
    f1s, accuracies = _stored(db, "memory.detection_f1"), _stored(db, "memory.status_accuracy")
    assert len(f1s) == len(accuracies) == 28  # 16 medium and 12 complex dialogues
    assert set(f1s) == {1.0} and set(accuracies) == {1.0}
    assert set(_stored(db, "memory.final_status_accuracy")) == {1.0}
    assert set(_stored(db, "memory.dependency_f1")) <= {1.0, None} and 1.0 in _stored(db, "memory.dependency_f1")


def test_paraphrased_and_denser_dialogues_measurably_degrade(suite: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    db, run_id = suite
    dialogues = _dialogues(db, run_id)
    clean, reworded, packed = figures(dialogues), figures([paraphrased(d) for d in dialogues]), figures([dense(d) for d in dialogues])
    with capsys.disabled():
        for name, values in (("clean", clean), ("paraphrased", reworded), ("dense", packed)):
            print(f"\nmemory on services, {name}: " + ", ".join(f"{k} {v:.3f}" for k, v in values.items()))
    assert all(v == 1.0 for v in clean.values())  # offline over the stored dialogues, as online
    assert reworded["detection_f1"] < 1.0 and reworded["status_accuracy"] < 1.0 and reworded["dependency_f1"] < 1.0
    # Packed requests lose goals and dependencies (a payment "for it" is taken for an earlier payment); the statuses of the
    # goals still found stay right, since they rest on tool results that name their offers and bookings.
    assert packed["detection_f1"] < 1.0 and packed["dependency_f1"] < 1.0
    assert packed["status_accuracy"] > reworded["status_accuracy"]
