"""`bench check --expected` against tau2's sample of reference hashes (read from ../shared, never copied)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from bench_kernel.testing import cli

REFERENCE = Path(__file__).resolve().parents[1] / ".." / "shared" / "reference" / "tau2"


@pytest.mark.parametrize(("domain", "exit_code"), [("airline", 0), ("retail", 1)])
def test_every_sample_hash_matches(domain: str, exit_code: int) -> None:
    expected = REFERENCE / "expected_hashes_sample.json"
    if not (REFERENCE / domain / "db.json").exists() or not expected.exists():
        pytest.skip(f"tau2 reference data absent under {REFERENCE}")
    result = CliRunner().invoke(cli, ["check", "--plugin", domain, "--data-dir", str(REFERENCE / domain), "--expected", str(expected)])
    assert result.exit_code == exit_code, result.output  # retail: tau2's own 15 broken gold actions
    assert "expected hashes: 3 of 3 gold DB hashes match" in result.output
    assert "initial DB hash matches" in result.output
