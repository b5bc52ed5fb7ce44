"""Blanking credentials out of texts derived from an endpoint's answers before they are logged, printed or stored."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import TypeVar

E = TypeVar("E", bound=BaseException)

MIN_SECRET_CHARS = 8
"""Shorter values are not treated as secrets: blanking every "x" or "test" would garble the text instead."""
SECRET_VARIABLE = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.IGNORECASE)
_HEADERS = re.compile(
    r"(?P<name>Bearer\s+|(?:api[-_]?key|authorization)[\"']?\s*[:=]\s*[\"']?(?:Bearer\s+|Basic\s+)?)"
    r"(?P<value>[^\s\\\"',;&}<>]+)",
    re.IGNORECASE,
)
_known: set[str] = set()


def add_secret_variables(names: Iterable[str | None]) -> None:
    """Treat the values of these environment variables as secrets too (the key variables a run is configured with)."""
    for name in names:
        value = os.environ.get(name) if name else None
        if value and len(value) >= MIN_SECRET_CHARS:
            _known.add(value)


def redact(text: str) -> str:
    """The text with secret values, `Bearer ...` tokens and api-key/authorization header values as ***, safe to store as UTF-8."""
    # Configured key variables, and every environment variable named like a credential.
    found = {v for k, v in os.environ.items() if SECRET_VARIABLE.search(k) and len(v) >= MIN_SECRET_CHARS}
    for secret in sorted(found | _known, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, "***")
    text = _HEADERS.sub(lambda m: m.group("name") + "***", text)
    # Lone surrogates (from JSON escapes in a reply) would make the text impossible to log or store as UTF-8.
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def redact_exception(exc: E) -> E:
    """Blank secrets in an exception's message (and an HTTP error's kept body), in place; returns it."""
    if exc.args and isinstance(exc.args[0], str):
        exc.args = (redact(exc.args[0]), *exc.args[1:])
    body = getattr(exc, "body", None)
    if isinstance(body, str):
        exc.body = redact(body)  # type: ignore[attr-defined]
    return exc
