"""Built-in reward components (tau2's but NL_ASSERTION, bench-judging's) and the product rule."""

from __future__ import annotations

from collections.abc import Callable

from bench_kernel.evaluation.evaluator import builtin_components
from bench_kernel.evaluation.rewards import CombinationRule, ProductRule, RewardComponent
from bench_kernel.markers import hookimpl


@hookimpl
def register_reward_components(register: Callable[[RewardComponent], None]) -> None:
    """DB, ENV_ASSERTION, ACTION and COMMUNICATE."""
    for component in builtin_components():
        register(component)


@hookimpl
def register_combination_rules(register: Callable[[CombinationRule], None]) -> None:
    """tau2's product rule."""
    register(ProductRule())
