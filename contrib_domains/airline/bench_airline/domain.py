"""The airline domain: what `bench` loads when a run names it."""

from __future__ import annotations

from pathlib import Path

import attrs

from bench_kernel import Domain, DomainData, DomainOptions, packaged_or_external, read_tasks

from .records import ReferenceHasher, deferred_state
from .tools import AirlineTools


@attrs.define(kw_only=True)
class AirlineDomain(Domain):
    """Flight bookings, changes, cancellations and compensation (tau2-bench's airline, hash-exact)."""

    name: str = "airline"
    description: str = "Airline reservations: book, change, cancel; tau2-bench's airline tools with its exact DB hash."

    def load(self, options: DomainOptions) -> DomainData:
        """Read tau2's files from a data directory when one is given, else our packaged suite."""
        return self._load_from(packaged_or_external(__package__, options, self.name), options)

    def _load_from(self, data_dir: Path, options: DomainOptions) -> DomainData:
        return DomainData(
            name=self.name,
            tasks=read_tasks(data_dir / "tasks.json", options),
            policy=(data_dir / "policy.md").read_text(encoding="utf-8"),
            agent_toolkit=AirlineTools,
            # Read and built while the run waits for its first replies (a problem still stops it, named).
            agent_state=deferred_state(data_dir / "db.json"),
            sync_gold_actions=False,
            reference_hash=ReferenceHasher(),
            tool_results="tau2",  # tool messages exactly as tau2 renders them
            failed_gold_actions_scored=True,  # tau2 swallows a failing gold action and scores against what is left
            source=str(data_dir),
        )
