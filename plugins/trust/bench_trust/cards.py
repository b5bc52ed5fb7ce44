"""bench-trust's cards among every report's figures (noise, validity, attribution) and under `bench compare`'s (noise)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from bench_kernel import Card, ReportSection, RunView, Section, TerminationReason, task_outcomes

INFRA = TerminationReason.INFRASTRUCTURE_ERROR.value


@attrs.define(kw_only=True)
class TrustCards(ReportSection):
    """The cards of docs/noise.md, docs/audit.md and docs/attribution.md; no section of its own."""

    name: str = "trust"
    title: str = "Trust"
    description: str = "noise, validity and attribution cards among the report's figures; within-noise for bench compare"

    def build(self, view: RunView) -> Section | None:
        """Nothing after the report's tables: the cards sit among its figures."""
        return None

    def cards(self, view: RunView) -> list[Card]:
        """Noise, validity and attribution, in that order."""
        # Imported here, not at import: every run registers these cards, and only a report draws them.
        from .attribution_card import attribution_card, superseded_count
        from .attribution_card import card_lines as attribution_lines
        from .attribution_card import card_rows as attribution_rows
        from .audit.card import validity_card, validity_lines, validity_rows
        from .noise import card_lines, card_rows, noise_card

        rows = view.conversations(arm=None, scored_only=False)
        agent = [r for r in rows if r["arm"] == "agent"]
        outcomes = task_outcomes([r for r in agent if r["termination_reason"] != INFRA])
        k_max = min((o.n for o in outcomes), default=0)
        noise = noise_card(outcomes)
        validity = validity_card(view.store, view.run, rows)
        attribution = attribution_card(agent, superseded_count(view.store, view.run.id), k_max, view.run.config_hash, task_outcomes)
        return [
            Card(
                name="noise",
                title="Noise",
                heading="Noise: what two runs of this size can tell apart",
                figures=noise,
                lines=card_lines(noise),
                rows=card_rows(noise),
            ),
            Card(
                name="validity",
                title="Validity",
                heading="Validity: floors, ceiling and flagged tasks",
                figures=validity,
                lines=validity_lines(validity),
                rows=validity_rows(validity),
            ),
            Card(
                name="attribution",
                title="Attribution",
                heading="Failure attribution",
                figures=attribution,
                lines=attribution_lines(attribution),
                rows=attribution_rows(attribution),
            ),
        ]

    def compare_cards(self, comparison: Mapping[str, Any]) -> list[Card]:
        """Whether the pass^1 difference is within what the two runs can detect."""
        from .noise import comparison_noise, pair_noise_line

        noise = comparison_noise(comparison)
        return [Card(name="noise", title="Noise", figures=noise, lines=[pair_noise_line(noise)])]
