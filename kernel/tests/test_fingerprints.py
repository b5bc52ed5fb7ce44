"""Code fingerprints: `source_fingerprint` covers a whole package, and an edited generated agent starts a new run that
says why (the rescore of the old run is bench-trust's: plugins/trust/tests/test_rescore.py)."""

from __future__ import annotations

import importlib
import json
import re
import sqlite3
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner, Result
from plugin_factory import forget_modules

from bench_kernel import source_fingerprint
from bench_kernel.cli import cli
from bench_kernel.scaffold.new import new_plugin


def invoke(*args: str) -> Result:
    """`bench ARGS` in-process."""
    return CliRunner().invoke(cli, list(args), catch_exceptions=True)


def test_source_fingerprint_covers_the_whole_package(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "agent.py").write_text("A = 1\n")
    (package / "helpers.py").write_text("B = 1\n")
    first = source_fingerprint(package / "agent.py")

    (package / "helpers.py").write_text("B = 2\n")

    assert len(first) == 64 and source_fingerprint(package / "agent.py") != first


def test_editing_a_generated_agent_starts_a_new_run_and_says_why(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    name = f"fp_{uuid.uuid4().hex[:8]}"
    target = new_plugin("agent", name, tmp_path / name)
    module = f"bench_{name}"
    sys.path.insert(0, str(target))
    db = tmp_path / "bench.db"
    args = ("run", "--agent", name, "--db", str(db), "--format", "none", "--progress", "none", "--task-id", "inc-a")

    def run_once() -> Result:
        forget_modules(module, f"{module}.agent")
        use_plugins(extra=[(name, importlib.import_module(module))])
        return invoke(*args)

    try:
        first, again = run_once(), run_once()
        with (target / module / "agent.py").open("a") as source:
            source.write("\n# fixed\n")
        edited = run_once()
    finally:
        sys.path.remove(str(target))
        forget_modules(module, f"{module}.agent")

    ids = [re.findall(r"run (\S+): \d+ conversations run", r.stderr)[0] for r in (first, again, edited)]
    assert ids[0] == ids[1] and "already stored" in again.stderr  # unchanged code: the run resumes
    assert ids[2] != ids[0]
    assert f"the code of agent {name} changed since run {ids[0]}: this is a new run" in edited.stderr
    assert f"with bench-trust, `bench rescore {ids[0]}` scores" in edited.stderr  # the command's distribution, installed or not
    config = json.loads(sqlite3.connect(db).execute("select config_json from runs where id = ?", [ids[2]]).fetchone()[0])
    assert set(config["fingerprints"]) == {f"agent {name}"}
