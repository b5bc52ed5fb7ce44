"""A real AgentChangeBench results file: our channels and TSR equal the ones it stores, for every simulation."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from bench_changebench.extensions import ActionSetsExtension, GoalShiftsExtension, expected_steps
from bench_changebench.scoring import action_score, communicate_score, tool_calls, tsr

from bench_kernel import AssistantMessage, Message, Task, TaskVocabulary, ToolCall, ToolMessage, UserMessage, structure_tasks

REFERENCE = Path(os.environ.get("BENCH_REFERENCE") or Path(__file__).resolve().parents[3] / ".." / "shared" / "reference")
SAMPLE = REFERENCE / "agentchangebench" / "results" / "banking_gpt-4.1_tsr_sample.json"


def message(raw: dict[str, Any]) -> Message:
    """A message of the file, as the kernel models it (only what the formulas read)."""
    calls = [
        ToolCall(id=c["id"], name=c["name"], arguments=c["arguments"], requestor=c.get("requestor", "assistant")) for c in raw.get("tool_calls") or []
    ]
    if raw["role"] == "tool":
        return ToolMessage(id=raw["id"], content=raw.get("content"), requestor=raw.get("requestor", "assistant"), error=bool(raw.get("error")))
    kind = AssistantMessage if raw["role"] == "assistant" else UserMessage
    return kind(content=raw.get("content"), tool_calls=calls or None)


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    if not SAMPLE.is_file():
        pytest.skip(f"AgentChangeBench's results sample is not at {SAMPLE} (it lives in ../shared/reference)")
    return json.loads(SAMPLE.read_text())


def test_every_simulations_channels_and_tsr_are_reproduced(document: dict[str, Any]) -> None:
    vocabulary = TaskVocabulary(extensions=(GoalShiftsExtension(), ActionSetsExtension()))
    tasks: dict[str, Task] = {t.id: t for t in structure_tasks(document["tasks"], vocabulary, source=str(SAMPLE))}
    assert len(document["simulations"]) == 13
    for sim in document["simulations"]:
        task, stored = tasks[sim["task_id"]], sim["reward_info"]["info"]["tsr_details"]
        messages = [message(m) for m in sim["messages"]]
        info = task.evaluation_criteria.communicate_info if task.evaluation_criteria else None
        verdicts = [v["met"] for v in stored["nl_assertion_details"]]
        channels = {
            "communicate": communicate_score(info, messages) if info else None,
            "action": action_score(expected_steps(task), tool_calls(messages)),
            "nl": sum(verdicts) / len(verdicts) if verdicts else None,
        }
        where = f"{sim['task_id']} trial {sim['trial']}"
        assert channels["communicate"] == pytest.approx(stored["communicate_info"]) if info else stored["communicate_info"] is None, where
        assert channels["action"] == pytest.approx(stored["action"]), where
        assert channels["nl"] == pytest.approx(stored["nl_assertion"]), where
        assert tsr(channels) == pytest.approx(stored["overall_tsr"]), where
        assert tsr(channels) == pytest.approx(sim["reward_info"]["reward"]), where
