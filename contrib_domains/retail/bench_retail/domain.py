"""The retail domain: what `bench` loads when a run names it."""

from __future__ import annotations

from pathlib import Path

import attrs

from bench_kernel import Domain, DomainData, DomainOptions, packaged_or_external, read_tasks

from .records import load_state, reference_hash
from .tools import RetailTools


@attrs.define(kw_only=True)
class RetailDomain(Domain):
    """An online shop's customer service: orders, returns, exchanges, addresses and payments."""

    name: str = "retail"
    description: str = "Online shop customer service (tau2-bench retail tools): cancel, modify, return and exchange orders."

    def load(self, options: DomainOptions) -> DomainData:
        """Read tau2's retail files from options.data_dir or $BENCH_TAU2_DATA_DIR, else our packaged suite."""
        return self._load_from(packaged_or_external(__package__, options, self.name), options)

    def _load_from(self, data_dir: Path, options: DomainOptions) -> DomainData:
        return DomainData(
            name=self.name,
            tasks=read_tasks(data_dir / "tasks.json", options),
            policy=(data_dir / "policy.md").read_text(encoding="utf-8"),
            agent_toolkit=RetailTools,
            agent_state=load_state(data_dir / "db.json"),
            # tau2 runs gold actions without syncing (retail has nothing to sync anyway).
            sync_gold_actions=False,
            reference_hash=reference_hash,
            tool_results="tau2",  # tool messages exactly as tau2 renders them
            failed_gold_actions_scored=True,  # tau2 swallows a failing gold action (15 of its 114 tasks have one)
            source=str(data_dir),
        )
