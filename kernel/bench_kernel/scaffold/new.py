"""Render a new plugin distribution (`bench-NAME`, module `bench_NAME`) from templates/common, then templates/KIND."""

from __future__ import annotations

import keyword
import re
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

from bench_kernel.errors import ConfigError
from bench_kernel.scaffold import KINDS

NAME_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
# Names the kernel already uses: a plugin of that name would shadow the kernel or clash with a built-in.
RESERVED = {"kernel", "testing", "oracle", "scripted", "identity", "local", "practice"}
ABOUT = "README.about.md"
"""A kind's text for the README's `{{about}}`."""
DEPENDENCIES = {"judge": ("bench-judging>=0.1",)}
"""What a kind needs at run time besides the kernel: a judge's verdicts are asked for by bench-judging's NL_ASSERTION."""


def check_name(name: str) -> None:
    """Refuse a name that cannot be a module, an entry point and a distribution at once."""
    if not NAME_PATTERN.fullmatch(name) or keyword.iskeyword(name):
        raise ConfigError(
            f"plugin name {name!r} must start with a letter and hold only letters, digits and underscores (it becomes the module bench_{name})"
        )
    if name.lower() in RESERVED:
        raise ConfigError(f"plugin name {name!r} is taken by the kernel; choose another")


def class_prefix(name: str) -> str:
    """`my_library` -> `MyLibrary`: the prefix of the generated classes."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)


def markers(kind: str, name: str) -> dict[str, str]:
    """What each marker in a template becomes."""
    return {
        "{{name}}": name,
        "{{module}}": f"bench_{name}",
        "{{dist}}": f"bench-{name}",
        "{{Class}}": class_prefix(name),
        "{{kind}}": kind,
        "{{description}}": KINDS[kind][0].upper() + KINDS[kind][1:],
        "{{about}}": "",
        "{{dependencies}}": ", ".join(f'"{d}"' for d in ("bench-kernel>=0.1", *DEPENDENCIES.get(kind, ()))),
    }


def render(text: str, values: dict[str, str]) -> str:
    """Replace every marker in text."""
    for marker, value in values.items():
        text = text.replace(marker, value)
    return text


def template_files(kind: str) -> dict[str, Traversable]:
    """Relative output path -> template, the kind's overriding the common ones (a `*.tmpl` is rendered, the rest copied)."""
    root = files("bench_kernel.scaffold").joinpath("templates")
    return {**_walk(root.joinpath("common"), ""), **_walk(root.joinpath(kind), "")}


def _walk(folder: Traversable, prefix: str) -> dict[str, Traversable]:
    found: dict[str, Traversable] = {}
    for entry in folder.iterdir():
        if entry.is_dir() and entry.name != "__pycache__":
            found.update(_walk(entry, f"{prefix}{entry.name}/"))
        elif entry.is_file():
            found[f"{prefix}{entry.name}"] = entry
    return found


def output_path(relative: str, module: str) -> str:
    """Where a template lands: `package/` renamed to the module, `.tmpl` dropped."""
    return "/".join(module if part == "package" else part for part in relative.split("/")).removesuffix(".tmpl")


def new_plugin(kind: str, name: str, directory: Path | None = None) -> Path:
    """Write the distribution `bench-NAME` of a kind of KINDS (`bench new` checks it) into directory (default ./NAME); return it."""
    check_name(name)
    target = Path(directory) if directory is not None else Path(name)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ConfigError(f"{target} exists and is not an empty directory: choose another DIR")
    values = markers(kind, name)
    templates = template_files(kind)
    about = templates.pop(ABOUT, None)
    if about is not None:
        values["{{about}}"] = render(about.read_text(encoding="utf-8"), values).strip()
    for relative, template in sorted(templates.items()):
        path = target / output_path(relative, values["{{module}}"])
        path.parent.mkdir(parents=True, exist_ok=True)
        if relative.endswith(".tmpl"):
            path.write_text(render(template.read_text(encoding="utf-8"), values), encoding="utf-8")
        else:
            path.write_bytes(template.read_bytes())
    return target


# How to see each kind at work once installed (`bench new` prints it; the READMEs say the same).
# The practice domain ships with the kernel; any installed domain takes its place (`--plugin YOUR_DOMAIN`).
TRY: dict[str, list[str]] = {
    "domain": ["bench check --plugin {name}", "bench run --plugin {name}"],
    "metric": ["bench run --plugin practice --plugin {name}", "bench report RUN_ID   (the run id is in `bench runs`)"],
    "channel": ["bench run --plugin practice --plugin {name} --channel {name}"],
    "agent": ["bench run --plugin practice --plugin {name} --agent {name}"],
    "user": ["bench run --plugin practice --plugin {name} --user {name}"],
    "judge": ["bench run --plugin practice --plugin {name} --judge {name} --split judged   (tasks with nl_assertions)"],
    "executor": ["bench run --plugin practice --plugin {name} --executor {name}"],
    "section": ["bench run --plugin practice --plugin {name}", "bench report RUN_ID   (the run id is in `bench runs`)"],
}


def next_steps(kind: str, name: str, target: Path) -> str:
    """What `bench new` prints: what it wrote and the commands that install, test and try it."""
    lines = [f"wrote bench-{name}, {KINDS[kind]}, into {target}", "next:", f"  pip install -e '{target}[test]'", f"  pytest {target}"]
    return "\n".join(lines + [f"  {line.format(name=name)}" for line in TRY[kind]])
