"""What plugin authors test with: the conformance kit, pytest fixtures and a fake OpenAI server."""

from bench_kernel.cli import cli
from bench_kernel.testing.commands import bench_cli
from bench_kernel.testing.conformance import (
    DomainConformance,
    check_do_nothing_fails,
    check_gold_replays,
    check_registration,
    check_shared_records,
    check_short_run,
    check_tasks_load,
    check_tool_schemas,
)
from bench_kernel.testing.fake_openai import (
    FakeOpenAIServer,
    ReceivedRequest,
    Reply,
    echo_responder,
    read_recording,
    replay_responder,
)
from bench_kernel.testing.rows import stored_rows

__all__ = [
    "DomainConformance",
    "FakeOpenAIServer",
    "ReceivedRequest",
    "Reply",
    "bench_cli",
    "check_do_nothing_fails",
    "check_gold_replays",
    "check_registration",
    "check_shared_records",
    "check_short_run",
    "check_tasks_load",
    "check_tool_schemas",
    "cli",
    "echo_responder",
    "read_recording",
    "replay_responder",
    "stored_rows",
]
