"""tau2's NL_ASSERTION reward component: how a run's judge is asked, what a run without one is refused, resumes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from bench_kernel import ComponentScore, ConfigError, Judge, RewardComponent, RewardContext, RunConfig, RunContext, Task

from .assertions import NL, needing_a_judge, nl_component
from .rounds import JudgeRounds


@attrs.define(kw_only=True)
class NLAssertionComponent(RewardComponent):
    """NL assertions, judged by the run's judge (computed only when in the basis: it costs model calls)."""

    name: str = NL
    description: str = "Natural-language assertions judged by the run's judge."

    async def score(self, context: RewardContext) -> ComponentScore:
        """tau2's NL_ASSERTION check."""
        return await nl_component(context.task, context.messages, context.judge, context.seed, context.models, context.profile, context.events)

    def prepare_judge(self, judge: Judge | None, config: RunConfig, tasks: Sequence[Task]) -> Judge | None:
        """The run's judge asked in rounds (`--judge-retries`, `--judge-panel`) by everyone who asks it; a run whose
        tasks have assertions to judge is refused without one."""
        if judge is not None:
            return JudgeRounds.around(judge, retries=config.judge_retries, panel=config.judge_panel or 1)
        needing = needing_a_judge(tasks)
        if needing:
            raise ConfigError(f"{len(needing)} of {len(tasks)} tasks have NL assertions to judge (e.g. {needing[0]!r}): choose a judge with --judge")
        return None

    async def resume(self, ctx: RunContext) -> Mapping[str, Any]:
        """Judge again the stored conversations whose judge failed (and, with `--retry-attributed judge`, those whose
        failure is attributed to the judge): never played again (docs/judges.md)."""
        from .rejudging import rejudge_stored  # only a resume judges again: a new run never imports it

        rejudged = await rejudge_stored(ctx, attributed_to_judge="judge" in (ctx.config.retry_attributed or ()))
        return {"rejudged": rejudged} if rejudged else {}
