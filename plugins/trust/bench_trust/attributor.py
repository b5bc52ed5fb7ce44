"""The attributor bench-trust registers, light to import: the rules (`attribution`) load with the first failure."""

from __future__ import annotations

import attrs

from bench_kernel import Attribution, Attributor, FinishedConversation


@attrs.define(kw_only=True)
class RulesAttributor(Attributor):
    """The attributor bench-trust registers: the rules of `attribution`, first match wins, the agent's by default."""

    name: str = "rules"
    description: str = "docs/attribution.md's rules: infrastructure, judge, task, user-simulator, then agent"

    def attribute(self, conversation: FinishedConversation) -> Attribution | None:
        """The rules' label of a failed conversation."""
        from .attribution import rules_attribution  # a run whose conversations all pass never imports the rules

        return rules_attribution(conversation)
