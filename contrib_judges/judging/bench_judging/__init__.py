"""bench-judging: tau2's NL_ASSERTION reward component, judged so that it cannot pass by accident (docs/judges.md).

It registers the NL_ASSERTION component, which asks the run's judge (`--judge`) in rounds: every answer checked (one
verdict per assertion), a failed judgment asked again with fresh seeds (`--judge-retries`), a panel's majority
(`--judge-panel`); it judges again, on resume, the stored conversations whose judge failed. It also registers the
`judge.agreement` metric of a panel. It loads with every run whatever `--plugin` names (entry-point group
`bench.always`). Names are exported lazily: registration imports none of the work's modules, so `bench --help` stays
quick.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import bench_kernel

if TYPE_CHECKING:
    from bench_kernel import Metric, RewardComponent

    from .agreement import JudgeAgreement
    from .assertions import JUDGE_ERROR_NOTE, nl_component
    from .component import NLAssertionComponent
    from .rounds import JudgeRounds, Judgment, JudgmentFailed, judge_seed, verdict_problem

__all__ = [
    "JUDGE_ERROR_NOTE",
    "JudgeAgreement",
    "JudgeRounds",
    "Judgment",
    "JudgmentFailed",
    "NLAssertionComponent",
    "judge_seed",
    "nl_component",
    "register_metrics",
    "register_reward_components",
    "verdict_problem",
]

_MODULES = {
    "JudgeAgreement": "agreement",
    "JUDGE_ERROR_NOTE": "assertions",
    "nl_component": "assertions",
    "NLAssertionComponent": "component",
    "JudgeRounds": "rounds",
    "Judgment": "rounds",
    "JudgmentFailed": "rounds",
    "judge_seed": "rounds",
    "verdict_problem": "rounds",
}


def __getattr__(name: str) -> Any:
    """The exported names, each imported from its module when first asked for."""
    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_MODULES[name]}", __name__), name)


@bench_kernel.hookimpl
def register_reward_components(register: Callable[[RewardComponent], None]) -> None:
    """NL_ASSERTION."""
    from .component import NLAssertionComponent

    register(NLAssertionComponent())


@bench_kernel.hookimpl
def register_metrics(register: Callable[[Metric], None]) -> None:
    """`judge.agreement`, a panel's agreement per conversation."""
    from .agreement import JudgeAgreement

    register(JudgeAgreement())
