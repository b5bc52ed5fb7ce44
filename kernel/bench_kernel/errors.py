"""The one error hierarchy of bench; the CLI turns these into one clean line."""

from __future__ import annotations

from collections.abc import Iterable


class BenchError(Exception):
    """Base of every error bench raises on purpose."""


class ConfigError(BenchError):
    """A run configuration, option combination or file is invalid."""


class TaskFileError(ConfigError):
    """A task file is malformed; the message names the file and the JSON paths."""

    def __init__(self, path: str, problems: list[str], *, owner: str = "") -> None:
        self.path = path
        self.problems = problems
        self.owner = owner
        """Whose file it is, shown before the path (`plugin 'acme': domain 'acme'`), or ""."""
        super().__init__((f"{owner}: " if owner else "") + f"{path}: " + "; ".join(problems))


class DeferredDataError(BaseException):
    """A domain's data, loaded on first use (`State.deferred`), could not be loaded; `error` says why."""

    # A BaseException, as KeyboardInterrupt is, so no handler of one tool call, conversation or metric takes it for its
    # own failure (every conversation would meet it): the run stops before storing a conversation.

    def __init__(self, error: BenchError) -> None:
        super().__init__(str(error))
        self.error = error


class PluginError(BenchError):
    """A plugin failed to load, register or validate."""

    def __init__(self, plugin: str, message: str) -> None:
        self.plugin = plugin
        self.detail = message
        super().__init__(f"plugin {plugin!r}: {message}")


class UnusableSessionError(PluginError):
    """A session a plugin's `start` returned breaks the kernel's contract (a plain `def respond`, say): the run stops."""


class UnknownPluginError(BenchError):
    """A plugin named on the command line is not installed."""


class UnknownComponentError(BenchError):
    """A domain, agent, user simulator, model, judge or metric name is not registered."""


class DuplicateRegistrationError(BenchError):
    """Two plugins registered a component of the same kind under one name."""

    def __init__(self, kind: str, name: str, first: str, second: str) -> None:
        super().__init__(f"{kind} {name!r} is registered twice: by {first} and by {second}")


class ResumeConflictError(BenchError):
    """A run id exists in the store with a different configuration."""


class RunBusyError(ResumeConflictError):
    """Another live process holds the run's lease: it is being run right now."""


class StoreError(BenchError):
    """The results database cannot be opened or written (missing directory, damaged file, read-only, disk full)."""


class ToolError(BenchError):
    """A tool refused a call; the message is shown to the caller as the tool result."""


class ParticipantError(BenchError):
    """An agent or user simulator produced something unusable (recorded for that conversation)."""


class ModelError(ParticipantError):
    """A model backend failed or returned garbage."""

    attempts: int = 1
    """Requests made before giving up (a backend that retries sets it on the error it raises; the ledger keeps it)."""


class ModelHTTPError(ModelError):
    """The endpoint answered with an error status; the body is kept, truncated."""

    def __init__(self, status: int, body: str, *, retryable: bool = False) -> None:
        self.status = status
        self.body = body[:500]
        self.retryable = retryable
        super().__init__(f"HTTP {status}: {self.body}")


class ModelAuthError(ModelHTTPError):
    """The endpoint refused the credentials (401/403): never retried."""


class ContextOverflowError(ModelHTTPError):
    """The request does not fit the model's context: never retried."""


class ModelUnavailableError(ModelError):
    """Timeouts, connection resets, 429 and 5xx that outlived every retry (an infrastructure failure)."""


class ModelResponseError(ModelError):
    """The reply was empty, not parsable, or a tool call had broken arguments."""


class BudgetExceededError(BenchError):
    """The run's cost cap was reached; the run stops cleanly and can be resumed."""


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """A hint naming the choice closest to a misspelt word, " (did you mean 'x'?)", or "" when none is close."""
    meant = closest_match(word, choices)
    return f" (did you mean {meant!r}?)" if meant else ""


def closest_match(word: str, choices: Iterable[str]) -> str | None:
    """The choice a misspelt word most likely meant (difflib's ratio, case ignored), or None when none is close."""
    import difflib  # only error messages need it: start-up stays light

    by_folded = {choice.casefold(): choice for choice in choices if choice != word}
    close = difflib.get_close_matches(word.casefold(), list(by_folded), n=1, cutoff=0.6)
    return by_folded[close[0]] if close else None


# Failures of the harness's surroundings, not of a participant: the conversation is stored as an
# infrastructure error, excluded from metrics and run again on resume.
INFRASTRUCTURE_FAILURES: tuple[type[BaseException], ...] = (BudgetExceededError, ModelUnavailableError)
