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
    responses_as_chat,
)
from bench_kernel.testing.rows import stored_rows
from bench_kernel.testing.worlds import AgentStep, ScriptedWorld, plan_change_world

__all__ = [
    "AgentStep",
    "DomainConformance",
    "FakeOpenAIServer",
    "ReceivedRequest",
    "Reply",
    "ScriptedWorld",
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
    "plan_change_world",
    "read_recording",
    "replay_responder",
    "responses_as_chat",
    "stored_rows",
]
