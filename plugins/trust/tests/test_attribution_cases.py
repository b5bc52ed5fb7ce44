"""The labelled set of scripted conversations (attribution_cases.py), played through the real loop: the rules' accuracy."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("bench_mock", reason="the labelled set plays the mock domain (pip install -e contrib_domains/mock)")

from attribution_cases import CASES, confusion, play_cases


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, str | None, str | None]]:
    return play_cases(tmp_path_factory.mktemp("cases") / "cases.db")


def test_the_set_is_large_and_covers_every_label(results: dict[str, tuple[str, str | None, str | None]]) -> None:
    assert len(CASES) >= 40 and len(results) == len(CASES)
    truths = {truth for truth, _, _ in results.values()}
    assert truths == {"agent", "user-simulator", "task", "judge", "infrastructure"}


def test_user_simulator_and_agent_faults_are_found_at_least_nine_times_in_ten(results: dict[str, tuple[str, str | None, str | None]]) -> None:
    _, accuracy = confusion(results)
    assert accuracy["user-simulator"] >= 0.9 and accuracy["agent"] >= 0.9, accuracy


def test_only_the_cases_marked_ambiguous_may_be_missed(results: dict[str, tuple[str, str | None, str | None]]) -> None:
    missed = {name: (truth, label, rule) for name, (truth, label, rule) in results.items() if truth != label}
    assert all(name.startswith("x-") for name in missed), missed


def test_every_failure_names_its_rule(results: dict[str, tuple[str, str | None, str | None]]) -> None:
    assert all(rule for _, _, rule in results.values())
    assert results["u-invents-flatmate"][2] == "user_invented_fact"
    assert results["u-stop-confirm-upgrade"][2] == "user_stopped_early"
    assert results["j-false-says-correct"][2] == "inconsistent_verdict"
    assert results["i-agent-503"][2] == "transport_failure"
    assert results["t-gold-unknown-plan"][2] == "task_flagged"


def test_the_benchmark_script_prints_the_confusion_table(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = Path(__file__).resolve().parents[3] / "benchmarks" / "attribution_accuracy.py"
    if not script.is_file():
        pytest.skip("the benchmark scripts are in the repository, not in the wheel")
    done = subprocess.run([sys.executable, str(script), "--db", str(tmp_path / "b.db")], capture_output=True, text=True, check=True)
    assert "accuracy user-simulator" in done.stdout and "truth \\ label" in done.stdout
