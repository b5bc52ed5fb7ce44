"""The components plugins registered, by kind and name (out of plugins.py: naming it needs no hookspecs)."""

from __future__ import annotations

import importlib.metadata as md
from typing import Any

import attrs

from bench_kernel.errors import UnknownComponentError, did_you_mean

GROUP = "bench"
"""The entry-point group, and pluggy's project name, of bench plugins."""


@attrs.define
class Registry:
    """Every component the loaded plugins registered, by kind and name, with its plugin."""

    components: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    origins: dict[tuple[str, str], str] = attrs.field(factory=dict)
    migrations: list[Any] = attrs.field(factory=list)

    def get(self, kind: str, name: str) -> Any:
        """The component of this kind and name (for metrics: "plugin:name"), or a clear error listing what exists."""
        found = self.components.get(kind, {})
        if name not in found:
            known = ", ".join(found) or "none"
            missing = without_entry_point(name.replace("_", "-"))  # the plugin named like its component, never loaded
            hint = f"; {missing}" if missing else ""
            raise UnknownComponentError(f"no {kind} named {name!r}{did_you_mean(name, found)} (registered: {known}){hint}")
        return found[name]

    def names(self, kind: str) -> list[str]:
        """Registered names of one kind, sorted."""
        return list(self.components.get(kind, {}))

    def origin(self, kind: str, name: str) -> str:
        """The plugin that registered a component."""
        return self.origins[(kind, name)]


def without_entry_point(name: str) -> str | None:
    """What to say when `bench-NAME` is installed but declares no `bench` entry point (None when that is not so)."""
    try:
        dist = md.distribution(f"bench-{name}")
    except (md.PackageNotFoundError, ValueError):
        return None
    if dist.metadata["Name"] == "bench-kernel" or any(ep.group == GROUP for ep in dist.entry_points):
        return None  # the kernel loads always, through its built-ins; a plugin under another name gets a "did you mean"
    groups = sorted({ep.group for ep in dist.entry_points})
    declared = f" (its entry points: {', '.join(groups)})" if groups else ""
    module = f"bench_{name.replace('-', '_')}"
    return (
        f"{dist.metadata['Name']} is installed but declares no [project.entry-points.bench]{declared}, so bench "
        "cannot load it as a plugin. A library that registers no hooks (as bench-knowledge and bench-compose are) is used "
        "by the plugins that depend on it and needs no --plugin; a plugin needs `[project.entry-points.bench]` with "
        f'`{name} = "{module}"` in its pyproject.toml, then a new install'
    )
