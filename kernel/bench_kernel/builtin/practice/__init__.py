"""The practice domain (a pantry, a door lock on the customer's phone), loaded only when named: `--plugin practice`."""

from __future__ import annotations

from collections.abc import Callable
from importlib.resources import as_file, files
from pathlib import Path
from typing import Any

import attrs

from bench_kernel.errors import ToolError
from bench_kernel.markers import hookimpl
from bench_kernel.serialization import read_json
from bench_kernel.tasks.domain import Domain, DomainData, DomainOptions, read_tasks
from bench_kernel.tools.environment import ToolKind, Toolkit, tool
from bench_kernel.tools.state import State


class PantryTools(Toolkit):
    """The agent's tools over one table of pantry items."""

    @tool(ToolKind.READ)
    def list_items(self) -> list[dict[str, Any]]:
        """List every item in the pantry with how many are left."""
        return [dict(item) for item in self.state["items"].values()]

    @tool(ToolKind.WRITE)
    def take_item(self, item_id: str) -> dict[str, Any]:
        """Take one of an item out of the pantry.

        Args:
            item_id (str): The item's id, such as "I-1".
        """
        item = self.state["items"].get(item_id)
        if item is None or item["count"] == 0:
            raise ToolError(f"No '{item_id}' left in the pantry.")
        # A new record, never an edit in place: records are shared by every conversation of a run.
        self.state["items"][item_id] = {**item, "count": item["count"] - 1}
        return dict(self.state["items"][item_id])


class PhoneTools(Toolkit):
    """The customer's phone, which holds the pantry door's lock."""

    @tool(ToolKind.WRITE)
    def unlock_door(self) -> str:
        """Unlock the pantry door from the phone."""
        self.state["doors"]["pantry"] = {**self.state["doors"]["pantry"], "locked": False}
        return "The pantry door is unlocked."

    def door_is_open(self) -> bool:
        """For task files (not a tool): True when the pantry door is unlocked."""
        return not self.state["doors"]["pantry"]["locked"]


@attrs.define(kw_only=True)
class PracticeDomain(Domain):
    """A pantry, its door lock on the customer's phone, and four small tasks."""

    name: str = "practice"
    description: str = "The kernel's practice domain: a pantry, a door lock on the customer's phone, four tasks."

    def load(self, options: DomainOptions) -> DomainData:
        """The packaged data; without --split or --tasks-file, the tasks that need no judge (split `base`)."""
        with as_file(files(__package__)) as folder:
            here = Path(options.data_dir or folder)
            split = options.split or (None if options.tasks_file else "base")
            tasks = read_tasks(here / "tasks.json", attrs.evolve(options, split=split))
            return DomainData(
                name=self.name,
                tasks=tasks,
                policy=(here / "policy.md").read_text(encoding="utf-8"),
                solo_policy=(here / "policy_solo.md").read_text(encoding="utf-8"),
                agent_toolkit=PantryTools,
                agent_state=State.from_records(read_json(here / "db.json")),
                user_toolkit=PhoneTools,
                user_state=State.from_records(read_json(here / "user_db.json")),
                source="practice",
            )


@hookimpl
def register_domains(register: Callable[[Domain], None]) -> None:
    """The practice domain."""
    register(PracticeDomain())
