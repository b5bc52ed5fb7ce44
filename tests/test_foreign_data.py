"""A data directory of another domain is refused before a run, naming what does not fit (tau2's reference data)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from bench_kernel.testing import cli

REFERENCE = Path(__file__).resolve().parents[1] / ".." / "shared" / "reference" / "tau2"


@pytest.mark.parametrize(
    ("plugin", "data", "fragment"),
    [
        ("mock", "mock", "do not fit the mock domain (is this another domain's data?): task 'create_task_1' names create_task"),
        ("retail", "airline", "do not fit the retail domain (is this another domain's data?)"),
        # airline reads its database when first needed: the tasks' tool names give the data away before that
        ("airline", "retail", "do not fit the airline domain (is this another domain's data?)"),
    ],
)
def test_another_domains_data_is_refused_before_the_run(tmp_path: Path, plugin: str, data: str, fragment: str) -> None:
    if not (REFERENCE / data / "db.json").is_file():
        pytest.skip(f"tau2 reference data not found at {REFERENCE / data}")
    db = tmp_path / "r.db"
    result = CliRunner().invoke(cli, ["run", "--plugin", plugin, "--data-dir", str(REFERENCE / data), "--db", str(db)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert fragment in result.output
    assert not db.exists()
