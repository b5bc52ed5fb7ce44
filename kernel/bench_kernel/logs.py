"""Logging: `get_logger()` for the kernel and plugins, and the structlog set-up the CLI entry point applies once."""

# structlog (with rich) costs ~70 ms to import: a logger imports it when it first emits an event at the CLI's level,
# and the CLI's configuration is applied on structlog's import, by whoever imports it.

from __future__ import annotations

import contextvars
import logging
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bench_kernel.afterimport import after_import
from bench_kernel.redact import redact

if TYPE_CHECKING:
    from structlog.typing import EventDict, WrappedLogger

# structlog's level methods and the level each logs at
LEVELS = {name: getattr(logging, name.upper()) for name in ("debug", "info", "warning", "warn", "error", "critical", "fatal")}
LEVELS |= {"msg": logging.INFO, "exception": logging.ERROR}

_threshold = logging.NOTSET
"""Events below this level are dropped unseen: set by configure_logging (structlog's own filter does the same)."""
_pending: tuple[int, bool] | None = None
"""(level, json_logs) of a configuration waiting for structlog's import."""
_context: contextvars.ContextVar[Mapping[str, Any] | None] = contextvars.ContextVar("bench_log_context", default=None)


def configure_logging(level: str = "warning", *, json_logs: bool | None = None) -> None:
    """Log to stderr: pretty on a terminal, JSON lines otherwise (applied now, or when structlog is imported)."""
    global _threshold, _pending
    if json_logs is None:
        json_logs = not sys.stderr.isatty()
    _threshold = getattr(logging, level.upper())
    _pending = (_threshold, json_logs)
    after_import("structlog", _apply_pending)


def _apply_pending() -> None:
    """Configure structlog with the pending configuration, once."""
    global _pending
    if _pending is None:
        return
    level, json_logs = _pending
    _pending = None
    import structlog

    renderer = structlog.processors.JSONRenderer() if json_logs else structlog.dev.ConsoleRenderer()
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            merge_context,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            redact_secrets,
            structlog.processors.dict_tracebacks if json_logs else structlog.dev.set_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )


def bind_context(**values: Any) -> None:
    """Add key-values to every event logged from the current context (task, coroutine) on."""
    _context.set({**(_context.get() or {}), **values})
    if "structlog" in sys.modules:  # also where structlog itself looks, for loggers not configured by configure_logging
        sys.modules["structlog"].contextvars.bind_contextvars(**values)


def merge_context(logger: WrappedLogger, method: str, event: EventDict) -> EventDict:
    """The processor adding bind_context's key-values (the event's own keys win)."""
    for key, value in (_context.get() or {}).items():
        event.setdefault(key, value)
    return event


def redact_secrets(logger: WrappedLogger, method: str, event: EventDict) -> EventDict:
    """Blank credentials in every text of a log event (errors quote what endpoints sent, which may echo them)."""
    return {k: redact(v) if isinstance(v, str) else redact(repr(v)) if isinstance(v, BaseException) else v for k, v in event.items()}


def _drop(*args: Any, **kwargs: Any) -> None:
    """An event below the configured level."""


class Logger:
    """A structlog logger created on first use: what `structlog.get_logger()` gives, without importing structlog early."""

    __slots__ = ("_args", "_initial", "_proxy")

    def __init__(self, *args: Any, **initial: Any) -> None:
        self._args = args
        self._initial = initial
        self._proxy: Any = None

    def bind(self, **values: Any) -> Logger:
        """A logger with these key-values added to every event."""
        return Logger(*self._args, **{**self._initial, **values})

    def new(self, **values: Any) -> Logger:
        """A logger with only these key-values."""
        return Logger(*self._args, **values)

    def _structlog(self) -> Any:
        if self._proxy is None:
            import structlog

            _apply_pending()  # a no-op once applied (on structlog's import, or at once when it was imported already)
            self._proxy = structlog.get_logger(*self._args, **self._initial)
        return self._proxy

    def __getattr__(self, name: str) -> Any:
        if LEVELS.get(name, logging.CRITICAL) < _threshold:
            return _drop
        return getattr(self._structlog(), name)


def get_logger(*args: Any, **initial: Any) -> Logger:
    """A logger for a module: `log = get_logger()` (imports structlog only when an event is logged)."""
    return Logger(*args, **initial)
