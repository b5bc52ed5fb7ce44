"""Built-in reward components (tau2's but NL_ASSERTION, bench-judging's), the product rule, the failed-checks section
and the table and json report formats, registered like any plugin's."""

from __future__ import annotations

from collections.abc import Callable

from bench_kernel.evaluation.evaluator import builtin_components
from bench_kernel.evaluation.rewards import CombinationRule, ProductRule, RewardComponent
from bench_kernel.evaluation.sections import ReportFormat, ReportSection
from bench_kernel.markers import hookimpl
from bench_kernel.report.failures import FailedChecks


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
def register_report_sections(register: Callable[[ReportSection], None]) -> None:
    """The failed checks of the reward basis, with what was expected and found."""
    register(FailedChecks())


@hookimpl
def register_report_formats(register: Callable[[ReportFormat], None]) -> None:
    """The report as plain-text tables and as JSON."""
    from bench_kernel.report.report import JsonFormat, TableFormat  # on collection, not when `bench --help` loads plugins

    register(TableFormat())
    register(JsonFormat())
