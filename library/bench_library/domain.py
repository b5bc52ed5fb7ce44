"""The library domain: what bench loads when a run names it."""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path

import attrs
from bench_kernel import Domain, DomainData, DomainOptions, State, read_json, read_tasks

from .tools import LibraryTools


@attrs.define(kw_only=True)
class LibraryDomain(Domain):
    """A small lending library: the agent lends books to members under the library's rules."""

    name: str = "library"
    description: str = "A small lending library: books, members and loans."

    def load(self, options: DomainOptions) -> DomainData:
        """Read the packaged data (or options.data_dir), then the tasks of options.tasks_file and options.split."""
        with as_file(files(__package__).joinpath("data")) as packaged:
            data_dir = Path(options.data_dir or packaged)
            return DomainData(
                name=self.name,
                tasks=read_tasks(data_dir / "tasks.json", options),
                policy=(data_dir / "policy.md").read_text(encoding="utf-8"),
                agent_toolkit=LibraryTools,
                agent_state=State.from_records(read_json(data_dir / "db.json")),
                source=str(data_dir),
            )
