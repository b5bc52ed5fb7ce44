"""ATOD's released annotated dialogues (data/*/annotated_dialogues.json, schema.json) read as (goals, messages, events).

Each turn is one utterance (USER -> a user message, SYSTEM -> an assistant message, in file order);
a turn's `goal_status_changes` become `goal.status` events at that message. Without any, the
goals' `status_history` is the gold (turn t = message t-1), as the scoring reads it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
from bench_atod import GOAL_STATUSES, Goal, GoalStatusChange

from bench_kernel import (
    AssistantMessage,
    BenchError,
    ConfigError,
    Event,
    Message,
    Registry,
    UserMessage,
    collect,
    get_plugin_manager,
    read_json,
    unstructure,
)

from .api import DialogueEvaluation, evaluate_conversation, failed, make_judge, stable_seed
from .index import make_index
from .metric import EMBEDDINGS_ROLE, JUDGE_ROLE, run_figures
from .offline import DirectModels, goal_from, model_configs


@attrs.frozen(kw_only=True)
class AtodDialogue:
    """One annotated dialogue."""

    id: str
    complexity: str
    goals: list[Goal]
    messages: list[Message]
    events: list[Event]


def read_atod(path: Path) -> list[AtodDialogue]:
    """Every dialogue of an ATOD file; errors name the file and the JSON path."""
    document = read_json(path)
    entries = document.get("dialogues", document) if isinstance(document, dict) else document
    if not isinstance(entries, list):
        raise ConfigError(f"{path}: expected a list of dialogues")
    return [_dialogue(entry, f"{path}: $[{i}]") for i, entry in enumerate(entries)]


def _dialogue(entry: Any, where: str) -> AtodDialogue:
    if not isinstance(entry, dict) or not isinstance(entry.get("goal_list"), list) or not isinstance(entry.get("turns"), list):
        raise ConfigError(f"{where}: a dialogue needs dialogue_id, goal_list and turns")
    goals = [goal_from(raw, f"{where}.goal_list[{j}]") for j, raw in enumerate(entry["goal_list"])]
    messages: list[Message] = []
    events: list[Event] = []
    for k, turn in enumerate(entry["turns"]):
        here = f"{where}.turns[{k}]"
        speaker = str(turn.get("speaker", "")).upper() if isinstance(turn, dict) else ""
        if speaker not in ("USER", "SYSTEM"):
            raise ConfigError(f"{here}: speaker must be USER or SYSTEM")
        text = str(turn.get("utterance") or "")
        messages.append(UserMessage(content=text) if speaker == "USER" else AssistantMessage(content=text))
        for n, change in enumerate(turn.get("goal_status_changes") or []):
            events.append(_event(change, len(messages) - 1, f"{here}.goal_status_changes[{n}]"))
    return AtodDialogue(
        id=str(entry.get("dialogue_id", where)), complexity=str(entry.get("complexity_class", "")), goals=goals, messages=messages, events=events
    )


def _event(change: Any, index: int, where: str) -> Event:
    status = str(change.get("new_status", "")).lower() if isinstance(change, dict) else ""
    if status not in GOAL_STATUSES or not change.get("goal_id"):
        raise ConfigError(f"{where}: expected goal_id and new_status among {', '.join(GOAL_STATUSES)}")
    typed = GoalStatusChange(goal_id=str(change["goal_id"]), status=status)
    return Event(kind=typed.kind, data=unstructure(typed), message_index=index, source="atod")


async def evaluate_atod_file(
    path: Path, *, judge: str = "rules", index: str = "lexical", model_options: dict[str, Any] | None = None, limit: int | None = None
) -> tuple[dict[str, dict[str, float | None]], list[str]]:
    """The evaluator over an ATOD file's dialogues: run-level figures per complexity class and overall, and the errors."""
    configs = model_configs(model_options or {})
    models = DirectModels(configs, collect(get_plugin_manager(None)) if configs else Registry(), None, "atod-file")
    if judge == "llm" and not models.has(JUDGE_ROLE):
        raise ConfigError(f"--judge llm needs the {JUDGE_ROLE} role: --model-option {JUDGE_ROLE}.model=NAME")

    async def complete(request: Any) -> Any:
        return await models.complete(JUDGE_ROLE, request)

    async def embed(request: Any) -> Any:
        return await models.embed(EMBEDDINGS_ROLE, request)

    results: list[tuple[str, DialogueEvaluation]] = []
    try:
        for dialogue in read_atod(path)[:limit]:
            try:
                evaluation = await evaluate_conversation(
                    dialogue.goals,
                    dialogue.messages,
                    dialogue.events,
                    conversation_id=dialogue.id,
                    judge=make_judge(judge, complete if models.has(JUDGE_ROLE) else None, seed=stable_seed(dialogue.id)),
                    index=make_index(index, embed if models.has(EMBEDDINGS_ROLE) else None),
                )
            except BenchError as exc:
                evaluation = failed(dialogue.id, exc)
            results.append((dialogue.complexity or "-", evaluation))
    finally:
        await models.aclose()
    groups = {"all": [e for _, e in results], **{c: [e for k, e in results if k == c] for c in sorted({k for k, _ in results})}}
    figures = {name: _figures([e for e in group if e.scores is not None]) for name, group in groups.items()}
    return figures, [f"{e.conversation_id}: {e.error}" for _, e in results if e.error]


def _figures(scored: list[DialogueEvaluation]) -> dict[str, float | None]:
    return run_figures(
        [e.details()["counts"] for e in scored], [e.scores.detection_f1 for e in scored if e.scores], [t.latency_ms for e in scored for t in e.turns]
    )
