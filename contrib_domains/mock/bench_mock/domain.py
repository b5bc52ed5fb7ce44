"""The mock domain: what `bench` loads when a run names it."""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path

import attrs

from bench_kernel import Domain, DomainData, DomainOptions, State, read_json, read_tasks

from .tools import HelpdeskTools, RouterTools, sync_line_status


@attrs.define(kw_only=True)
class MockDomain(Domain):
    """A small home-internet helpdesk: the agent manages accounts, the customer handles the router."""

    name: str = "mock"
    description: str = "Home-internet helpdesk (dual control): plans, line status, tickets and a router."

    def load(self, options: DomainOptions) -> DomainData:
        """Read the packaged data (or options.data_dir), then the tasks of options.tasks_file and options.split."""
        # as_file gives a real directory for a package installed on disk, which is where pip puts it.
        with as_file(files(__package__).joinpath("data")) as packaged:
            data_dir = Path(options.data_dir or packaged)
            return DomainData(
                name=self.name,
                tasks=read_tasks(data_dir / "tasks.json", options),
                policy=(data_dir / "policy.md").read_text(encoding="utf-8"),
                solo_policy=(data_dir / "policy_solo.md").read_text(encoding="utf-8"),
                agent_toolkit=HelpdeskTools,
                agent_state=State.from_records(read_json(data_dir / "db.json")),
                user_toolkit=RouterTools,
                user_state=State.from_records(read_json(data_dir / "user_db.json")),
                sync=sync_line_status,
                source=str(data_dir),
            )
