"""Logging: get_logger() imports structlog on first use; the CLI's configuration applies whoever imports structlog."""

from __future__ import annotations

import contextvars
import json
import subprocess
import sys

from structlog.testing import capture_logs

from bench_kernel import get_logger
from bench_kernel.logs import bind_context, merge_context


def _run(code: str) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh interpreter whose stderr is not a terminal (so configured logs are JSON lines)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)


def _events(stderr: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]


def test_an_event_below_the_level_is_dropped_without_importing_structlog() -> None:
    done = _run(
        "import sys\nfrom bench_kernel.logs import configure_logging, get_logger\n"
        "configure_logging('warning')\nlog = get_logger()\nlog.info('quiet', n=1)\nlog.debug('quieter')\n"
        "print('structlog' in sys.modules)"
    )
    assert done.stdout.strip() == "False"
    assert done.stderr == ""


def test_an_event_at_the_level_imports_structlog_configured_with_the_bound_context() -> None:
    done = _run(
        "import sys\nfrom bench_kernel.logs import bind_context, configure_logging, get_logger\n"
        "configure_logging('info')\nbind_context(run_id='r1')\n"
        "get_logger().bind(role='agent').info('model.retry', cause='Authorization: Bearer sekrit-1')\n"
        "print('structlog' in sys.modules)"
    )
    assert done.stdout.strip() == "True"
    [event] = _events(done.stderr)
    assert event["event"] == "model.retry" and event["level"] == "info"
    assert event["run_id"] == "r1" and event["role"] == "agent"
    assert event["cause"] == "Authorization: Bearer ***"  # the configured processors ran, redaction included
    assert "timestamp" in event


def test_a_plugin_importing_structlog_itself_gets_the_configuration() -> None:
    """Configured before structlog is imported: the import applies it (JSON on stderr, not structlog's default stdout)."""
    done = _run(
        "from bench_kernel.logs import bind_context, configure_logging\n"
        "configure_logging('warning')\nbind_context(task_id='t1')\n"
        "import structlog\nstructlog.get_logger().info('dropped')\nstructlog.get_logger().warning('plugin.event', x=1)"
    )
    assert done.stdout == ""
    [event] = _events(done.stderr)
    assert event["event"] == "plugin.event" and event["x"] == 1 and event["task_id"] == "t1"


def test_configuring_after_structlog_is_imported_applies_at_once() -> None:
    done = _run(
        "import structlog\nfrom bench_kernel.logs import configure_logging\n"
        "configure_logging('error')\nstructlog.get_logger().warning('dropped')\nstructlog.get_logger().error('kept')"
    )
    assert done.stdout == ""
    assert [e["event"] for e in _events(done.stderr)] == ["kept"]


def test_unconfigured_loggers_behave_as_structlogs_and_are_captured() -> None:
    log = get_logger(component="hub")
    with capture_logs() as logs:
        log.warning("model.close_failed", error="x")
        log.bind(role="user").info("seen")
        log.new(only=True).debug("also")
    assert logs == [
        {"component": "hub", "error": "x", "event": "model.close_failed", "log_level": "warning"},
        {"component": "hub", "role": "user", "event": "seen", "log_level": "info"},
        {"only": True, "event": "also", "log_level": "debug"},
    ]


def test_bound_context_is_merged_without_overriding_the_events_own_keys() -> None:
    def merged() -> dict[str, object]:
        bind_context(run_id="r9", arm="text")
        return merge_context(None, "info", {"event": "e", "arm": "voice"})

    assert contextvars.copy_context().run(merged) == {"event": "e", "arm": "voice", "run_id": "r9"}
    assert merge_context(None, "info", {"event": "e"}) == {"event": "e"}  # bound in that context only
