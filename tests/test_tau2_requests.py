"""Under tau2's profile, bench sends tau2's own request bodies, byte for byte (../shared/reference/tau2/requests).

Each recording holds every request tau2-bench 1.0.1 sent for one conversation and the scripted server's replies.
bench plays the same task against a server that gives the same replies in the same order, and every request
body must come out equal: same keys in the same order, same tools, same system prompts, same messages, same
sampling, seed and tool choice.

The profile comes from the user's tau2 when BENCH_TAU2_PYTHON names a Python where `import tau2` works (the
`bench tau2 profile` dump); otherwise it is derived from the recorded requests themselves: the system prompts
with the policy and scenario cut out, the tools array, the sampling values and the message spelling seen on the
wire. The policy and scenario bench inserts, the messages and every rendering choice are bench's own either way.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bench_kernel import trial_seeds
from bench_kernel.testing import FakeOpenAIServer, bench_cli, read_recording, replay_responder

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "reference" / "tau2"
REQUESTS = SHARED / "requests"
RECORDINGS = {"airline": "airline-task-0.jsonl", "retail": "retail-task-0.jsonl"}


def recording(domain: str) -> list[dict[str, Any]]:
    """The recorded exchanges of one domain's conversation, or a skip saying where they should be."""
    path = REQUESTS / RECORDINGS[domain]
    if not path.is_file() or not (SHARED / domain / "db.json").is_file():
        pytest.skip(f"tau2's recorded requests or {domain} data are not under {SHARED} (they live in ../shared/reference)")
    return read_recording(path)


def _between(text: str, opening: str, closing: str, placeholder: str) -> str:
    """The text with what lies between the first `opening` and the last `closing` replaced by a placeholder."""
    start, end = text.index(opening) + len(opening), text.rindex(closing)
    return text[:start] + "{{" + placeholder + "}}" + text[end:]


def _message_style(bodies: list[dict[str, Any]]) -> dict[str, Any]:
    """The [messages] settings the recorded bodies show: a tool call's and a tool result's fields, arguments, content."""
    messages = [m for body in bodies for m in body["messages"]]
    caller = next(m for m in messages if m.get("tool_calls"))
    call = caller["tool_calls"][0]
    result = next(m for m in messages if m["role"] == "tool")
    arguments = [c["function"]["arguments"] for m in messages for c in m.get("tool_calls") or []]
    return {
        "tool_call_fields": list(call),
        "tool_message_fields": list(result),
        "ascii_arguments": all(a == json.dumps(json.loads(a)) for a in arguments),
        "null_content": "content" in caller,
    }


def derived_profile(domain: str, exchanges: list[dict[str, Any]], directory: Path) -> Path:
    """A profile made from what tau2 sent: its texts around the policy and scenario, its tools, sampling and spelling."""
    bodies = [e["body"] for e in exchanges]
    agent = next(b for b in bodies if "tools" in b)
    user = next(b for b in bodies if "tools" not in b)
    assert agent["seed"] == trial_seeds(300, 1)[0], "the recording's seed is not tau2's first trial seed for seed 300"
    (directory / "texts").mkdir(parents=True)
    (directory / "tools").mkdir()
    agent_template = _between(agent["messages"][0]["content"], "<policy>\n", "\n</policy>", "policy")
    (directory / "texts" / "agent.md").write_text(agent_template, encoding="utf-8")
    user_template = _between(user["messages"][0]["content"], "<scenario>\n", "\n</scenario>", "scenario")
    (directory / "texts" / "user.md").write_text(user_template, encoding="utf-8")
    (directory / "tools" / f"{domain}.json").write_text(json.dumps({"agent": agent["tools"], "user": None}), encoding="utf-8")
    style = _message_style(bodies)
    (directory / "profile.toml").write_text(
        "\n".join(
            [
                "format = 1",
                'name = "tau2-recorded"',
                "[sampling.agent]",
                f"temperature = {agent['temperature']}",
                "[sampling.user]",
                f"temperature = {user['temperature']}",
                "[seed]",
                'policy = "trial"',
                "[conversation]",
                f"greeting = {json.dumps(user['messages'][1]['content'])}",
                "[messages]",
                *(f"{key} = {json.dumps(value)}" for key, value in style.items()),
                "",
            ]
        ),
        encoding="utf-8",
    )
    return directory


def tau2_profile(tmp_path: Path) -> Path | None:
    """The profile `bench tau2 profile` dumps from BENCH_TAU2_PYTHON's tau2, or None when no tau2 is named."""
    python = os.environ.get("BENCH_TAU2_PYTHON")
    if not python:
        return None
    data = tmp_path / "tau2-data" / "tau2"
    (data / "domains").mkdir(parents=True)
    for name in ("airline", "retail", "telecom", "mock"):
        if (SHARED / name).is_dir():
            (data / "domains" / name).symlink_to((SHARED / name).resolve())
    (data / "user_simulator").symlink_to((SHARED / "user_simulator").resolve())
    out = tmp_path / "tau2-profile"
    result = subprocess.run(
        [sys.executable, "-m", "bench_kernel", "tau2", "profile", "--tau2-python", python, "-o", str(out), "--data-dir", str(data.parent)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return out


def play(domain: str, profile: Path, exchanges: list[dict[str, Any]], tmp_path: Path) -> list[dict[str, Any]]:
    """bench's requests for task 0 under the profile, against a server replaying the recorded replies."""
    model = exchanges[0]["body"]["model"]
    with FakeOpenAIServer(replay_responder(exchanges), models=[model]) as server:
        args = [
            "run",
            "--plugin",
            domain,
            "--plugin",
            "openai",
            "--plugin",
            "llm",
            "--data-dir",
            str(SHARED / domain),
            "--agent",
            "llm-fc",
            "--user",
            "llm-user",
            "--agent-model",
            model,
            "--user-model",
            model,
            "--agent-base-url",
            server.base_url,
            "--user-base-url",
            server.base_url,
            "--task-id",
            "0",
            "--no-baseline",
            "--profile",
            str(profile),
            "--db",
            str(tmp_path / "r.db"),
            "--format",
            "none",
        ]
        result = CliRunner().invoke(bench_cli([domain, "openai", "llm"]), args, env={"OPENAI_API_KEY": "unused"})
        assert result.exit_code == 0, result.output
        assert not server.errors, server.errors
        return server.recording()


@pytest.mark.parametrize("domain", sorted(RECORDINGS))
def test_every_request_body_equals_tau2s_under_its_profile(domain: str, tmp_path: Path) -> None:
    exchanges = recording(domain)
    profile = tau2_profile(tmp_path) or derived_profile(domain, exchanges, tmp_path / "profile")
    sent = play(domain, profile, exchanges, tmp_path)
    assert len(sent) == len(exchanges)
    for ours, theirs in zip(sent, exchanges, strict=True):
        # Text equality of the JSON keeps key order: the tools array, both system prompts, every message.
        assert json.dumps(ours["body"], ensure_ascii=False) == json.dumps(theirs["body"], ensure_ascii=False), f"request {theirs['n']} differs"


def test_bench_own_profile_sends_its_own_words_with_explicit_sampling(tmp_path: Path) -> None:
    exchanges = recording("airline")
    with FakeOpenAIServer(replay_responder(exchanges), models=["gpt-4.1"]) as server:
        args = [
            "run",
            "--plugin",
            "airline",
            "--plugin",
            "openai",
            "--plugin",
            "llm",
            "--data-dir",
            str(SHARED / "airline"),
            "--agent",
            "llm-fc",
            "--user",
            "llm-user",
            "--agent-model",
            "gpt-4.1",
            "--user-model",
            "gpt-4.1",
            "--agent-base-url",
            server.base_url,
            "--user-base-url",
            server.base_url,
            "--task-id",
            "0",
            "--no-baseline",
            "--db",
            str(tmp_path / "r.db"),
            "--format",
            "none",
        ]
        result = CliRunner().invoke(bench_cli(["airline", "openai", "llm"]), args, env={"OPENAI_API_KEY": "unused"})
        assert result.exit_code == 0, result.output
        sent = server.recording()
    first_agent = next(e["body"] for e in sent if "tools" in e["body"])
    tau2_agent = next(e["body"] for e in exchanges if "tools" in e["body"])
    assert first_agent["temperature"] == 0.0  # stated, never left to the provider
    assert first_agent["messages"][0]["content"] != tau2_agent["messages"][0]["content"]
    assert [t["function"]["name"] for t in first_agent["tools"]] != [t["function"]["name"] for t in tau2_agent["tools"]]
    assert first_agent["seed"] != tau2_agent["seed"]  # one seed per conversation, not tau2's per trial
