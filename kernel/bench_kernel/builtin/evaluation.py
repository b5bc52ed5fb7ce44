"""Built-in reward components (tau2's but NL_ASSERTION, bench-judging's), the product rule and the json report format."""

from __future__ import annotations

from collections.abc import Callable

from bench_kernel.evaluation.evaluator import builtin_components
from bench_kernel.evaluation.rewards import CombinationRule, ProductRule, RewardComponent
from bench_kernel.evaluation.sections import ReportFormat
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


@hookimpl
def register_report_formats(register: Callable[[ReportFormat], None]) -> None:
    """The report as JSON (its text formats, the default table among them, are bench-report's)."""
    from bench_kernel.report.report import JsonFormat  # on collection, not when `bench --help` loads plugins

    register(JsonFormat())
