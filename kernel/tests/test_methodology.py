"""Standard or custom under the run's profile: what participants declare, the verdict, the header and the run's event."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import attrs
from click.testing import CliRunner

from bench_kernel import METHODOLOGY_EVENT, Agent, Judge, Profile, Store, UserSimulator, load_profile, methodology_lines
from bench_kernel.cli import cli
from bench_kernel.run.methodology import profile_methodology


@attrs.define(kw_only=True)
class Declaring(Agent):
    """An agent that declares what its options say."""

    name: str = "declaring"

    async def profile_deviations(self, options: Mapping[str, Any], profile: Profile) -> list[str] | None:
        if options.get("fail"):
            raise RuntimeError("probe went wrong")
        return list(options.get("deviations", []))


@attrs.define(kw_only=True)
class Faithful(UserSimulator):
    name: str = "faithful"

    async def profile_deviations(self, options: Mapping[str, Any], profile: Profile) -> list[str] | None:
        return []


def verdict(agent_options: dict[str, Any], user: UserSimulator | None = None, exposure: str = "none") -> dict[str, Any]:
    config = SimpleNamespace(agent_options=agent_options, user_options={}, exposure=exposure)
    return asyncio.run(profile_methodology(Declaring(), user or Faithful(), config, load_profile(None)))


def test_standard_only_when_every_participant_declares_no_deviation() -> None:
    standard = verdict({})
    assert (standard["verdict"], standard["reasons"]) == ("standard", [])
    assert standard["profile"].startswith("bench (sha256 ")
    assert verdict({"deviations": ["its own tool schemas"]})["reasons"] == ["agent 'declaring': its own tool schemas"]
    assert verdict({}, user=UserSimulator(name="silent"))["reasons"] == [
        "user simulator 'silent' does not declare that it sends the profile's requests"
    ]
    assert verdict({"fail": True})["reasons"] == ["agent 'declaring': its profile check failed (RuntimeError: probe went wrong)"]
    assert verdict({}, exposure="persona")["reasons"] == ["the agent is told about the customer (--exposure persona)"]


@attrs.define(kw_only=True)
class FaithfulJudge(Judge):
    name: str = "faithful-judge"

    async def profile_deviations(self, profile: Profile) -> list[str] | None:
        return []


def judged(judge: Judge) -> list[str]:
    config = SimpleNamespace(agent_options={}, user_options={}, exposure="none")
    found = asyncio.run(profile_methodology(Declaring(), Faithful(), config, load_profile(None), judge))
    assert (found["verdict"] == "standard") == (not found["reasons"])
    return list(found["reasons"])


def test_the_judge_counts_when_rewards_rest_on_nl_assertions() -> None:
    assert judged(FaithfulJudge()) == []  # a panel's departure: bench-judging's tests
    assert judged(Judge(name="opaque")) == ["judge 'opaque' does not declare that it sends the profile's judge request"]


def test_header_lines() -> None:
    assert methodology_lines(None) == []
    assert methodology_lines({"verdict": "standard", "profile": "bench (x)", "reasons": []}) == ["  methodology: standard under profile bench (x)"]
    assert methodology_lines({"verdict": "custom", "profile": "p", "reasons": ["a", "b"]}) == [
        "  methodology: custom under profile p:",
        "    - a",
        "    - b",
    ]


def test_the_run_header_and_event_say_custom_before_any_conversation(tmp_path: Path, use_plugins: Callable[..., None]) -> None:
    db = tmp_path / "r.db"
    out = CliRunner().invoke(cli, ["run", "--db", str(db), "--format", "none", "--progress", "lines"])
    assert out.exit_code == 0, out.output
    lines = out.stderr.splitlines()
    head = lines.index(next(line for line in lines if line.startswith("  methodology: custom under profile bench")))
    assert head == 1  # right after the run line, before any conversation's progress
    assert lines[head + 1] == "    - agent 'oracle': scripted, sends no model request"
    store = Store(db)
    try:
        recorded = store.last_run_event(store.runs()[0]["id"], (METHODOLOGY_EVENT,))
    finally:
        store.close()
    assert recorded is not None and recorded["verdict"] == "custom" and len(recorded["reasons"]) == 2
