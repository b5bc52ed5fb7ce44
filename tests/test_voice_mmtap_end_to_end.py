"""mm-tap end to end: a paired voice run with the listening oracle and the byte-coded engines of bench-voice's tests."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from bench_kernel import ModelConfig, RunConfig, get_plugin_manager, run
from bench_kernel.testing import cli


def figures(db: Path, run_id: str) -> dict[str, float | None]:
    report = CliRunner().invoke(cli, ["report", run_id, "--db", str(db), "--format", "json"])
    document = json.loads(report.output[report.output.index("{"):])
    return {row[0]: row[1] for section in document["sections"] if section["plugin"] == "mmtap"
            for table in section["tables"] for row in table["rows"]}


def test_a_noisy_paired_run_gets_every_figure_and_a_composite(tmp_path: Path) -> None:
    import importlib.util
    import sys

    # bench-voice's test engines (speech that carries the text's bytes): noise garbles them like real speech.
    source = Path(__file__).parents[1] / "plugins" / "voice" / "tests" / "conftest.py"
    spec = importlib.util.spec_from_file_location("voice_engines_for_tests", source)
    assert spec is not None and spec.loader is not None
    engines = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = engines
    spec.loader.exec_module(engines)
    models = {"tts": ModelConfig(backend="byte-tts", model="bytes"), "asr": ModelConfig(backend="byte-asr", model="bytes")}
    plugins = get_plugin_manager(["telecom", "voice", "mmtap"], extra=[("bytes", engines.BytePlugin())])
    config = RunConfig(domain="telecom", agent="listening-oracle", channel="voice", models=models, baseline=False, num_tasks=4,
                       paired=True, channel_options={"snr_db": 3})
    summary = run(config, tmp_path / "r.db", plugins=plugins)
    found = figures(tmp_path / "r.db", summary.run_id)
    assert found["MRS"] is not None and found["TO"] is not None and found["pass^1"] is not None
    assert found["CFA (micro)"] is not None and 0.0 <= found["CFA (micro)"] <= 1.0
    assert found["mm-tap"] is not None and 0.0 <= found["mm-tap"] <= 1.5
