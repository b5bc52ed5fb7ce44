"""Built-in reward components (tau2's five), the product rule and the `goals` task field, registered like any plugin's."""

from __future__ import annotations

from collections.abc import Callable

from bench_kernel.evaluation.evaluator import builtin_components
from bench_kernel.evaluation.rewards import CombinationRule, ProductRule, RewardComponent
from bench_kernel.evaluation.sections import ReportSection
from bench_kernel.markers import hookimpl
from bench_kernel.report.failures import FailedChecks
from bench_kernel.tasks.extensions import TaskExtension
from bench_kernel.tasks.goals import GoalsExtension


@hookimpl
def register_reward_components(register: Callable[[RewardComponent], None]) -> None:
    """DB, ENV_ASSERTION, ACTION, COMMUNICATE and NL_ASSERTION."""
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
def register_task_extensions(register: Callable[[TaskExtension], None]) -> None:
    """The multi-goal task field `goals` (ATOD's goal list), shared by domains and metrics."""
    register(GoalsExtension())
