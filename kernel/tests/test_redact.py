"""Credentials are blanked out of error texts, log events and exceptions."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from bench_kernel.errors import ModelHTTPError
from bench_kernel.logs import redact_secrets
from bench_kernel.redact import add_secret_variables, redact, redact_exception

KEY = "sk-live-0123456789abcdef"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Bearer abc.def-ghi", "Authorization: Bearer ***"),
        ('{"headers": {"api-key": "az-123456789"}}', '{"headers": {"api-key": "***"}}'),
        ("x-api-key=foo123&b=1", "x-api-key=***&b=1"),
        ('"Authorization":"Basic dXNlcjpwYXNz"', '"Authorization":"Basic ***"'),
        ('[\\"Authorization: Bearer tok\\napi-key: az-1\\n\\"]', '[\\"Authorization: Bearer ***\\napi-key: ***\\n\\"]'),
        ("nothing secret here", "nothing secret here"),
    ],
)
def test_header_forms_are_blanked(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_the_values_of_key_variables_are_blanked_wherever_they_appear(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_ENDPOINT_CRED", KEY)  # not named like a key: only known once a run names it
    assert KEY in redact(f"echo {KEY} echo")
    add_secret_variables(["MY_ENDPOINT_CRED", None, "UNSET_VARIABLE_XYZ"])
    assert redact(f"echo {KEY} echo") == "echo *** echo"
    monkeypatch.setenv("OTHER_API_KEY", "k-abcdefghij")
    assert redact("k-abcdefghij") == "***"
    monkeypatch.setenv("SHORT_TOKEN", "abc")  # too short to be told apart from ordinary text
    assert redact("abc") == "abc"


def test_exceptions_and_log_events_are_redacted_in_place() -> None:
    error = ModelHTTPError(500, "upstream said Authorization: Bearer sekrit-123")
    assert redact_exception(error) is error
    assert "sekrit" not in str(error) and "sekrit" not in error.body
    with capture_logs():
        event = redact_secrets(None, "warning", {"event": "x", "cause": "Bearer sekrit-123", "n": 3, "exc": ValueError("api-key: sekrit-123")})
    assert event == {"event": "x", "cause": "Bearer ***", "n": 3, "exc": "ValueError('api-key: ***')"}
