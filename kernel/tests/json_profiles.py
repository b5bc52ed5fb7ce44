"""A stand-in for bench-profiles in the kernel's tests: a profile directory is `profile.json`, fields over bench's own.

The kernel's tests check the seam (what a run does with the profile a reader returns) without the real reader, which
bench-profiles' tests cover; `use_json_profiles` makes the kernel find this module as the installed `profiles` plugin.
"""

from __future__ import annotations

import importlib.metadata as md
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

import bench_kernel
from bench_kernel import Profile, ProfileReader, hashed_profile, read_json
from bench_kernel import plugins as plugins_module

ENTRY_POINT = md.EntryPoint(name="profiles", value="json_profiles", group="bench")


@attrs.frozen(kw_only=True)
class JsonReader(ProfileReader):
    """Reads DIR/profile.json: the Profile fields it names replace bench's own."""

    name: str = "profiles"

    def read(self, directory: Path, base: Profile) -> Profile:
        """bench's own profile with the file's fields."""
        own: dict[str, Any] = read_json(directory / "profile.json")
        fields = {**attrs.asdict(base, recurse=False), **own, "path": str(directory.resolve())}
        fields.pop("sha256")
        return hashed_profile(**fields)


@bench_kernel.hookimpl
def register_profile_readers(register: Callable[[ProfileReader], None]) -> None:
    """The JSON reader."""
    register(JsonReader())


def use_json_profiles(monkeypatch: pytest.MonkeyPatch, keep: tuple[str, ...] = ()) -> None:
    """Make the kernel see this module as the installed `profiles` plugin (and no other installed plugin but `keep`)."""
    installed = plugins_module.installed_entry_points()
    kept = {name: installed[name] for name in keep}
    monkeypatch.setattr(plugins_module, "installed_entry_points", lambda: {**kept, "profiles": ENTRY_POINT})


def write_json_profile(directory: Path, **fields: Any) -> Path:
    """A directory whose profile.json sets these fields."""
    import json

    directory.mkdir(parents=True, exist_ok=True)
    (directory / "profile.json").write_text(json.dumps(fields), encoding="utf-8")
    return directory
