"""`bench report --plots DIR` and `--format html` for a run of every domain plugin: each PNG opened and measured."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench_kernel.testing import bench_cli

matplotlib = pytest.importorskip(
    "matplotlib", reason="plots need matplotlib: pip install 'bench-kernel[plots]' (bash scripts/dev.sh test-extras installs it)"
)
from matplotlib import image  # noqa: E402

DOMAINS = ("mock", "airline", "retail", "telecom", "banking")
PLOTS = ("pass_hat_k", "components", "by_persona", "by_domain", "gsrt", "turns_to_completion", "cost_vs_reward")
SECTIONS = (
    "summary",
    "figures",
    "problems",
    "terminations",
    "flips",
    "noise",
    "validity",
    "attribution",
    "costs",
    "breakdowns",
    "tasks",
    "plugin-sections",
    "plots",
)


def bench(*args: str) -> str:
    result = CliRunner().invoke(bench_cli(list(DOMAINS)), list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("domain", DOMAINS)
def test_plots_and_html_for_every_domain(domain: str, tmp_path: Path) -> None:
    db = str(tmp_path / "r.db")
    bench("run", "--plugin", domain, "--num-tasks", "3", "--trials", "2", "--run-id", "oracle", "--db", db, "--format", "none", "--progress", "none")
    bench(
        "run",
        "--plugin",
        domain,
        "--num-tasks",
        "3",
        "--trials",
        "2",
        "--agent",
        "do-nothing",
        "--run-id",
        "idle",
        "--no-baseline",
        "--db",
        db,
        "--format",
        "none",
        "--progress",
        "none",
    )
    page = bench("report", "oracle", "--db", db, "--plots", str(tmp_path / "plots"), "--plot-with", "idle", "--format", "html", "--by", "domain")
    for name in PLOTS:
        path = tmp_path / "plots" / f"{name}.png"
        assert 5_000 < path.stat().st_size < 1_000_000, name
        pixels = image.imread(path)
        assert pixels.shape == (420, 700, 4), name
        assert pixels[..., :3].std() > 0.01, f"{name} is blank"
    assert re.findall(r'<section id="([^"]+)"', page) == list(SECTIONS)
    assert len(re.findall(r'<img alt="[^"]+" src="data:image/png;base64,', page)) == len(PLOTS)
    assert f"domain {domain}" in page and "By domain" in page
