"""structlog set-up, done once by the CLI entry point (plugins only call structlog.get_logger())."""

from __future__ import annotations

import logging
import sys

import structlog
from structlog.typing import EventDict, WrappedLogger

from bench_kernel.modelhub.redact import redact


def configure_logging(level: str = "warning", *, json_logs: bool | None = None) -> None:
    """Log to stderr: pretty on a terminal, JSON lines otherwise."""
    if json_logs is None:
        json_logs = not sys.stderr.isatty()
    renderer = structlog.processors.JSONRenderer() if json_logs else structlog.dev.ConsoleRenderer()
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            redact_secrets,
            structlog.processors.dict_tracebacks if json_logs else structlog.dev.set_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level.upper())),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )


def redact_secrets(logger: WrappedLogger, method: str, event: EventDict) -> EventDict:
    """Blank credentials in every text of a log event (errors quote what endpoints sent, which may echo them)."""
    return {k: redact(v) if isinstance(v, str) else redact(repr(v)) if isinstance(v, BaseException) else v
            for k, v in event.items()}
