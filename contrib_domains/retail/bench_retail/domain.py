"""The retail domain: what `bench` loads when a run names it."""

from __future__ import annotations

import os
from importlib.resources import as_file, files
from pathlib import Path

import attrs
from bench_kernel import ConfigError, Domain, DomainData, DomainOptions, read_tasks

from .records import load_state, reference_hash
from .tools import RetailTools

DATA_DIR_ENV = "BENCH_TAU2_DATA_DIR"
DATA_FILES = ("db.json", "tasks.json", "policy.md")


@attrs.define(kw_only=True)
class RetailDomain(Domain):
    """An online shop's customer service: orders, returns, exchanges, addresses and payments."""

    name: str = "retail"
    description: str = "Online shop customer service (tau2-bench retail tools): cancel, modify, return and exchange orders."

    def load(self, options: DomainOptions) -> DomainData:
        """Read tau2's retail files from options.data_dir or $BENCH_TAU2_DATA_DIR, else our packaged suite."""
        chosen = options.data_dir or (Path(os.environ[DATA_DIR_ENV]) if os.environ.get(DATA_DIR_ENV) else None)
        if chosen is not None:
            return self._load_from(find_domain_dir(Path(chosen), self.name), options)
        with as_file(files(__package__).joinpath("data")) as packaged:
            return self._load_from(Path(packaged), options)

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
            source=str(data_dir),
        )


def find_domain_dir(path: Path, name: str) -> Path:
    """The directory holding the domain's files: path itself, or its sub-directory named after the domain."""
    for candidate in (path / name, path):
        if all((candidate / f).is_file() for f in DATA_FILES):
            return candidate
    raise ConfigError(f"no {name} data in {path}: expected {', '.join(DATA_FILES)} there or in {path / name}")
