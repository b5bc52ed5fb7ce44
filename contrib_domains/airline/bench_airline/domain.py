"""The airline domain: what `bench` loads when a run names it."""

from __future__ import annotations

import os
from importlib.resources import as_file, files
from pathlib import Path

import attrs
from bench_kernel import ConfigError, Domain, DomainData, DomainOptions, read_tasks
from bench_kernel.serialization import read_json

from .records import ReferenceHasher, state_from_json
from .tools import AirlineTools

DATA_DIR_VARIABLE = "BENCH_TAU2_DATA_DIR"


def tau2_data_dir(options: DomainOptions, domain: str = "airline") -> Path | None:
    """The tau2 data directory to read, from options.data_dir or $BENCH_TAU2_DATA_DIR, if any.

    Either may point at the domain's own directory or at one holding a sub-directory per domain.
    """
    given = options.data_dir or os.environ.get(DATA_DIR_VARIABLE)
    if not given:
        return None
    root = Path(given)
    for candidate in (root, root / domain):
        if (candidate / "db.json").is_file():
            return candidate
    raise ConfigError(f"no {domain} db.json in {root} or {root / domain}")


@attrs.define(kw_only=True)
class AirlineDomain(Domain):
    """Flight bookings, changes, cancellations and compensation (tau2-bench's airline, hash-exact)."""

    name: str = "airline"
    description: str = "Airline reservations: book, change, cancel; tau2-bench's airline tools with its exact DB hash."

    def load(self, options: DomainOptions) -> DomainData:
        """Read tau2's files from a data directory when one is given, else our packaged suite."""
        given = tau2_data_dir(options, self.name)
        if given is not None:
            return self._load_from(given, options)
        with as_file(files(__package__).joinpath("data")) as packaged:
            return self._load_from(Path(packaged), options)

    def _load_from(self, data_dir: Path, options: DomainOptions) -> DomainData:
        return DomainData(
            name=self.name,
            tasks=read_tasks(data_dir / "tasks.json", options),
            policy=(data_dir / "policy.md").read_text(encoding="utf-8"),
            agent_toolkit=AirlineTools,
            agent_state=state_from_json(read_json(data_dir / "db.json")),
            sync_gold_actions=False,
            reference_hash=ReferenceHasher(),
            source=str(data_dir),
        )
