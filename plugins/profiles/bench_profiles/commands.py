"""`bench profile show` and `bench profile copy`: what a profile holds, and a copy of bench's own to start from."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import attrs
import click

from bench_kernel import BENCH_PROFILE_DIR, ConfigError, Profile, format_option, load_profile


def summary(profile: Profile) -> dict[str, Any]:
    """What `bench profile show` prints: identity, provenance, constants, texts and tool coverage."""
    return {
        "name": profile.name,
        "sha256": profile.sha256,
        "path": profile.path or "built in",
        "description": profile.description,
        "source": dict(profile.source),
        "seed_policy": profile.seed_policy,
        "sampling": {r: dict(v) for r, v in profile.sampling.items()},
        "greeting": profile.greeting,
        "greeting_in_agent_history": profile.greeting_in_agent_history,
        "user_stop_tokens": list(profile.user_stop_tokens),
        "solo_stop_token": profile.solo_stop_token,
        "messages": attrs.asdict(profile.messages),
        "judge": attrs.asdict(profile.judge),
        "texts": {key: f"{len(text)} characters" for key, text in sorted(profile.texts.items())},
        "tools": {
            domain: {side: len(schemas) if schemas is not None else None for side, schemas in sides.items()}
            for domain, sides in sorted(profile.tools.items())
        }
        or "the domains' own schemas",
    }


def copy_builtin(directory: Path) -> None:
    """Write bench's own profile's files into a new or empty directory."""
    if directory.exists() and any(directory.iterdir()):
        raise ConfigError(f"{directory}: not empty; choose a new directory")
    shutil.copytree(BENCH_PROFILE_DIR, directory, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))


@click.group(name="profile")
def profile_group() -> None:
    """Profiles: the prompts, tool schemas, sampling and seeds models see (docs/profiles.md)."""


@profile_group.command(name="show")
@click.argument("directory", required=False, type=click.Path(file_okay=False, exists=True))
@format_option("table", "json")
def profile_show_command(directory: str | None, fmt: str) -> None:
    """What a profile directory holds, over bench's own (bench's own without DIRECTORY)."""
    shown = summary(load_profile(directory))
    if fmt == "json":
        click.echo(json.dumps(shown, indent=2, ensure_ascii=False))
        return
    for key, value in shown.items():
        click.echo(f"{key}: {value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}")


@profile_group.command(name="copy")
@click.argument("directory", type=click.Path(file_okay=False))
def profile_copy_command(directory: str) -> None:
    """Write bench's own profile into DIRECTORY, to start a profile of your own from it."""
    copy_builtin(Path(directory))
    click.echo(f"bench's own profile written to {directory}: rename it in profile.toml, edit its texts, then `bench run --profile {directory}`")
