"""Framework agents under a profile: the factories of docs/frameworks.md send the profile's requests, and the run
header says what a framework agent sends differently.

The docs' factories are read from the page itself. Each is probed as `bench run` probes it before a run (one turn
against the bridge's endpoint, no model called). With tau2 installed (BENCH_TAU2_PYTHON) and its reference data
present, the LangGraph factory plays tau2's airline task 0 under `bench tau2 profile`'s profile against the fake
OpenAI server, and its first model request is compared with `llm-fc`'s under the same profile and with the request
tau2-bench itself sent (../shared/reference/tau2/requests): the tools array byte for byte, the greeting, tool_choice.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bench_kernel import Store, load_profile
from bench_kernel.testing import FakeOpenAIServer, Reply, bench_cli

REPO = Path(__file__).resolve().parents[3]
DOCS = REPO / "docs" / "frameworks.md"
if not DOCS.exists():  # the wheel's tests run outside the repository, where the page is not
    pytest.skip(f"the workspace's docs are not at {DOCS} (bench-bridge tested outside the repository)", allow_module_level=True)
SHARED = REPO.parent / "shared" / "reference" / "tau2"
SECTION = "## Under a profile"
FRAMEWORKS = {"langgraph": ("langchain_openai", "langgraph"), "openai-agents": ("agents",), "pydantic-ai": ("pydantic_ai",)}
INSTALL = {
    "langgraph": "pip install 'bench-bridge[langgraph]'",
    "openai-agents": "pip install 'bench-bridge[agents-sdk]'",
    "pydantic-ai": "pip install 'bench-bridge[pydantic-ai]'",
}


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, re.S)


def docs_factories() -> dict[str, str]:
    """The factories of the page's profile section, by framework."""
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index(SECTION) : text.index("\n## ", text.index(SECTION) + 1)]
    return {framework_of(block): block for block in python_blocks(section)}


def plain_factories() -> dict[str, str]:
    """The first factory of each framework's own section (tools as Python functions: the framework's schemas)."""
    text = DOCS.read_text(encoding="utf-8")
    found: dict[str, str] = {}
    for block in python_blocks(text[: text.index(SECTION)]):
        found.setdefault(framework_of(block), block)
    return {k: v for k, v in found.items() if k in FRAMEWORKS}


def framework_of(source: str) -> str:
    if "langchain" in source or "langgraph" in source:
        return "langgraph"
    if "pydantic_ai" in source:
        return "pydantic-ai"
    return "openai-agents" if "from agents import" in source else "other"


def factory_file(framework: str, source: str, directory: Path) -> str:
    missing = [m for m in FRAMEWORKS[framework] if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"{framework} is not installed: {INSTALL[framework]}")
    path = directory / f"{framework.replace('-', '_')}_factory.py"
    path.write_text(source, encoding="utf-8")
    return f"{path}:make"


def probe(spec: str, profile_dir: Path | None = None) -> list[str]:
    from bench_bridge.context import load_factory
    from bench_bridge.probe import framework_deviations

    return asyncio.run(framework_deviations(load_factory(spec), {}, load_profile(profile_dir)))


def test_the_page_has_a_profile_factory_for_every_framework() -> None:
    assert sorted(docs_factories()) == sorted(FRAMEWORKS)
    assert sorted(plain_factories()) == sorted(FRAMEWORKS)


@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
def test_a_profile_factory_sends_the_profiles_tools_greeting_and_tool_choice(framework: str, tmp_path: Path) -> None:
    spec = factory_file(framework, docs_factories()[framework], tmp_path)
    found = probe(spec)
    assert len(found) == 1 and found[0].startswith("its own agent loop ("), found


@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
def test_a_plain_factory_is_reported_with_its_own_tool_schemas(framework: str, tmp_path: Path) -> None:
    spec = factory_file(framework, plain_factories()[framework], tmp_path)
    found = probe(spec)
    assert found[0].startswith("its own agent loop (")
    assert any(reason.startswith("its own tool schemas") for reason in found), found
    assert not any("greeting" in reason for reason in found), found  # the runner opens the history with it


# --------------------------------------------------------------------------- tau2's airline under tau2's profile


def tau2_profile(tmp_path: Path) -> Path:
    """`bench tau2 profile` from BENCH_TAU2_PYTHON's tau2 on the reference airline data, or a skip saying what is missing."""
    python = os.environ.get("BENCH_TAU2_PYTHON")
    if not python:
        pytest.skip("set BENCH_TAU2_PYTHON to a Python where `import tau2` works to dump tau2's profile")
    if not (SHARED / "airline" / "db.json").is_file():
        pytest.skip(f"tau2's airline data is not under {SHARED} (it lives in ../shared/reference)")
    data = tmp_path / "tau2-data" / "tau2"
    (data / "domains").mkdir(parents=True)
    (data / "domains" / "airline").symlink_to((SHARED / "airline").resolve())
    (data / "user_simulator").symlink_to((SHARED / "user_simulator").resolve())
    out = tmp_path / "tau2-profile"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench_kernel",
            "tau2",
            "profile",
            "--tau2-python",
            python,
            "-o",
            str(out),
            "--data-dir",
            str(data.parent),
            "--domain",
            "airline",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return out


def airline_reply(body: dict[str, Any]) -> Reply:
    """The customer asks once and then stops; the agent answers in text."""
    if "tools" in body:
        return Reply.text("I can help with that. What is your user id?")
    said = sum(1 for m in body["messages"] if m["role"] == "assistant")
    return Reply.text("I want to cancel my reservation." if said < 1 else "###STOP###")


def play(agent: list[str], profile: Path, tmp_path: Path, name: str) -> tuple[dict[str, Any], str]:
    """Task 0 of tau2's airline under the profile; the agent's first request body and the run's output."""
    with FakeOpenAIServer(airline_reply, models=["gpt-4.1"]) as server:
        args = [
            "run",
            "--plugin",
            "airline",
            "--plugin",
            "openai",
            "--plugin",
            "llm",
            "--plugin",
            "bridge",
            "--data-dir",
            str(SHARED / "airline"),
            *agent,
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
            "--profile",
            str(profile),
            "--db",
            str(tmp_path / f"{name}.db"),
            "--format",
            "none",
            "--progress",
            "lines",
            "--run-id",
            name,
        ]
        result = CliRunner().invoke(bench_cli(["airline", "openai", "llm", "bridge"]), args, env={"OPENAI_API_KEY": "unused"})
        assert result.exit_code == 0, result.output
        assert not server.errors, server.errors
        sent = [e["body"] for e in server.recording() if "tools" in e["body"]]
    assert sent, "the agent sent no request with tools"
    return sent[0], result.output


def test_the_docs_langgraph_agent_sends_tau2s_tools_array_under_tau2s_profile(tmp_path: Path) -> None:
    spec = factory_file("langgraph", docs_factories()["langgraph"], tmp_path)
    profile = tau2_profile(tmp_path)
    ours, header = play(["--agent", "framework", "--agent-option", f"factory={spec}"], profile, tmp_path, "langgraph")
    theirs, standard = play(["--agent", "llm-fc"], profile, tmp_path, "llm-fc")
    # The tools array as text: same tools, same schemas, same key order.
    assert json.dumps(ours["tools"], ensure_ascii=False) == json.dumps(theirs["tools"], ensure_ascii=False)
    assert len(ours["tools"]) == 14
    assert ours["tool_choice"] == theirs["tool_choice"] == "auto"
    greeting = load_profile(profile).greeting
    assert [m["content"] for m in ours["messages"][:2]] == [m["content"] for m in theirs["messages"][:2]]
    assert ours["messages"][1] == {"content": greeting, "role": "assistant"}  # LangChain puts content first
    assert ours["temperature"] == theirs["temperature"] == 0.0  # the profile's sampling, applied by bench
    recorded = SHARED / "requests" / "airline-task-0.jsonl"
    if recorded.is_file():  # what tau2-bench itself sent
        tau2 = next(json.loads(line)["body"] for line in recorded.read_text(encoding="utf-8").splitlines() if "tools" in json.loads(line)["body"])
        assert json.dumps(ours["tools"], ensure_ascii=False) == json.dumps(tau2["tools"], ensure_ascii=False)
        assert ours["tool_choice"] == tau2["tool_choice"]
    assert "methodology: standard under profile tau2" in standard
    assert "methodology: custom under profile tau2" in header
    reasons = [line[len("    - ") :] for line in header.splitlines() if line.startswith("    - ")]
    loop = f"agent 'framework': its own agent loop (langgraph {importlib.metadata.version('langgraph')}), not the profile's agent"
    assert reasons == [loop]
    # The tau2 export agrees with the header: the same reason, and no other about the agent.
    submission = pytest.importorskip("bench_tau2.submission", reason="bench-tau2 is not installed")
    exported = {name: submission._changes(submission._load(Store(tmp_path / f"{name}.db"), name)) for name in ("langgraph", "llm-fc")}
    about_agent = {name: [c for c in changes if "agent" in c.split(": ", 1)[1][:20]] for name, changes in exported.items()}
    assert about_agent["llm-fc"] == []
    assert about_agent["langgraph"] == [f"airline (run langgraph): {loop} (factory {spec})"]
