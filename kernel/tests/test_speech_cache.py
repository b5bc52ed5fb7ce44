"""`--no-speech-cache` reaches the run's configuration (bench-voice's speech cache reads it from the hub; its tests are
plugins/voice/tests/test_speech_models.py) and leaves the run's identity alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from plugin_factory import needs_installed

from bench_kernel import RunConfig


@needs_installed("mock")
def test_the_command_line_turns_the_speech_cache_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from bench_kernel.run import runner
    from bench_kernel.testing import cli

    seen: list[bool] = []
    real = runner.run

    def spy(config: RunConfig, *args: Any, **kwargs: Any) -> Any:
        seen.append(config.speech_cache)
        return real(config, *args, **kwargs)

    monkeypatch.setattr(runner, "run", spy)
    for flags in ([], ["--no-speech-cache"]):
        result = CliRunner().invoke(cli, ["run", "--plugin", "mock", *flags, "--num-tasks", "1", "--db", str(tmp_path / "r.db"), "--format", "none"])
        assert result.exit_code == 0, result.output
    assert seen == [True, False]
    assert RunConfig(speech_cache=False).identity() == RunConfig().identity()  # how a run is executed, not what it is
