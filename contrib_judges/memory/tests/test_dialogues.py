"""Hand-built annotated dialogues: the rules judge reproduces clean annotations, and loses ground on reworded or denser ones."""

from __future__ import annotations

import pytest
from bench_memory import evaluate_dialogues
from dialogues import COMPLEX, DENSE, MEDIUM, PARAPHRASED, Dialogue, annotated


def figures(dialogue: Dialogue, index: str = "lexical") -> dict[str, float | None]:
    [result] = evaluate_dialogues([(dialogue.goals, dialogue.messages, dialogue.events)], index=index)
    assert result.error is None
    return result.values()


@pytest.mark.parametrize("dialogue", [MEDIUM, COMPLEX, annotated(MEDIUM), annotated(COMPLEX)], ids=lambda d: d.id)
def test_clean_dialogues_are_reproduced_exactly(dialogue: Dialogue) -> None:
    values = figures(dialogue)
    assert values["detection_f1"] == 1.0
    assert values["status_accuracy"] == 1.0 and values["final_status_accuracy"] == 1.0
    assert values["dependency_f1"] == 1.0
    assert values["goals_detected"] == values["goals_gold"] == len(dialogue.goals)


@pytest.mark.parametrize(("dialogue", "clean"), [(PARAPHRASED, COMPLEX), (DENSE, MEDIUM)], ids=["paraphrased", "dense"])
def test_rewording_and_denser_interleaving_degrade_the_rules_judge(dialogue: Dialogue, clean: Dialogue) -> None:
    values = figures(dialogue)
    shown = {k: None if values[k] is None else round(values[k], 3) for k in (  # type: ignore[arg-type]
        "detection_f1", "status_accuracy", "final_status_accuracy", "dependency_f1")}
    print(f"{dialogue.id}: {shown}")  # the measured figures (pytest -s shows them; the README quotes them)
    assert values["status_accuracy"] is not None and values["status_accuracy"] < 1.0
    assert values["final_status_accuracy"] is not None and values["final_status_accuracy"] < 1.0
    if dialogue is PARAPHRASED:
        assert values["detection_f1"] is not None and values["detection_f1"] < 1.0
        assert values["dependency_f1"] is not None and values["dependency_f1"] < 1.0
