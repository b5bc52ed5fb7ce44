"""The fault drill (benchmarks/fault_drill.py), briefly: every kind of endpoint fault, each typed where it belongs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

DRILL = Path(__file__).resolve().parents[1] / "benchmarks" / "fault_drill.py"


@pytest.fixture(scope="module")
def fault_drill() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fault_drill", DRILL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fault_drill"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("agent", ["llm-fc", "llm-react"])
def test_every_fault_kind_is_injected_and_typed(fault_drill: ModuleType, tmp_path: Path, agent: str) -> None:
    # A fault on every 3rd request, the kinds in turn: 12 conversations make about 65 requests, so every kind comes twice.
    report = fault_drill.drill(tmp_path, conversations=12, concurrency=4, every=3, hang_s=1.5, timeout_s=1.0, agent=agent)
    print("\n".join(report.lines()))
    assert set(report.injected) == set(fault_drill.FAULTS) and min(report.injected.values()) >= 1, report.injected
    verdicts = report.verdicts()
    retries = next(name for name in verdicts if name.startswith("retried faults"))
    assert all(ok for name, ok in verdicts.items() if name != retries), verdicts
    # Not asserted: retries = retried faults. A call that fails after retrying is ledgered with attempts=1 until the
    # ledger keeps its real attempts, and a slow machine can time out a healthy request; the drill prints both.
    assert report.terminations.get("user_stop", 0) >= 1
    # A broken reply ends its conversation, except a text agent's unreadable action, which goes to the customer.
    broken = report.injected["non_json"] + (0 if agent == "llm-react" else report.injected["bad_arguments"])
    assert report.terminations.get("agent_error", 0) + report.terminations.get("user_error", 0) == broken
    assert report.reply_problems == (report.injected["bad_arguments"] if agent == "llm-react" else 0)


def test_the_proxy_draws_faults_from_its_seed(fault_drill: ModuleType) -> None:
    def draws(seed: int) -> list[str | None]:
        proxy = fault_drill.FaultProxy("http://127.0.0.1:1/v1", rate=0.3, seed=seed)
        return [proxy._draw() for _ in range(200)]

    assert draws(1) == draws(1) != draws(2)
    assert 40 <= sum(d is not None for d in draws(1)) <= 80
