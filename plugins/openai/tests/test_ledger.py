"""A call that fails carries the number of requests it really made, retries included (the ledger stores it)."""

from __future__ import annotations

import pytest

from bench_kernel import ModelError, ModelHTTPError, ModelResponseError, ModelUnavailableError
from bench_kernel.testing import Reply


def test_a_call_that_outlives_its_retries_carries_every_attempt(serve, config_for, complete) -> None:
    server = serve(lambda body: Reply.error(503, "overloaded"))
    with pytest.raises(ModelUnavailableError, match="gave up after 5 attempts") as caught:
        complete(config_for(server, max_retries=4))
    assert caught.value.attempts == 5 == len(server.completions)


@pytest.mark.parametrize(
    ("replies", "error", "attempts"),
    [
        ([Reply.error(500), Reply.error(429, "slow"), Reply.error(400, "bad request")], ModelHTTPError, 3),
        ([Reply.error(502), Reply.raw("not json")], ModelResponseError, 2),
        ([Reply.raw("not json")], ModelResponseError, 1),
    ],
    ids=["4xx-after-retries", "garbage-after-a-retry", "garbage-at-once"],
)
def test_an_error_keeps_the_attempts_that_led_to_it(serve, config_for, complete, replies, error, attempts) -> None:
    server = serve(replies=replies)
    with pytest.raises(error) as caught:
        complete(config_for(server))
    assert caught.value.attempts == attempts == len(server.completions)


def test_an_unreachable_server_after_retries_keeps_its_attempts(serve, config_for, complete) -> None:
    server = serve(replies=[Reply.drop_connection()])
    server.stop()
    with pytest.raises(ModelError) as caught:
        complete(config_for(server, max_retries=2))
    assert caught.value.attempts == 3
