"""Under tau2's profile, llm-judge sends tau2's own NL-assertion judge request, byte for byte (docs/judges.md).

bench plays retail tasks with NL assertions (the scripted agent and user on a fake server on 127.0.0.1) under the
profile `bench tau2 profile` dumps from BENCH_TAU2_PYTHON's tau2, with llm-judge as the judge; the conversations are
exported in tau2's format, and tau2's own NLAssertionsEvaluator (run in the tau2 Python, its client pointed at the
same kind of server) judges them. The two request bodies of each conversation must be equal as JSON text.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
from bench_tau2 import make_tau2_profile
from bench_tau2.results import export_run, write_results
from scripted_world import ScriptedTau2World

from bench_kernel import RunConfig, Store, collect, get_plugin_manager, load_domain
from bench_kernel.testing import FakeOpenAIServer, Reply, bench_cli

SHARED = Path(os.environ.get("BENCH_REFERENCE") or Path(__file__).resolve().parents[3] / ".." / "shared" / "reference")
TAU2 = SHARED / "tau2"
TASKS = ["2", "16", "19"]
"""Retail tasks with NL assertions (one, one and two of them)."""
CASE = re.compile(r"<case>retail/(\w+)</case>")


def tau2_python() -> str:
    python = os.environ.get("BENCH_TAU2_PYTHON")
    if not python:
        pytest.skip("set BENCH_TAU2_PYTHON to a Python where `import tau2` works to compare with tau2's judge")
    if not (TAU2 / "retail" / "tasks.json").is_file():
        pytest.skip(f"reference data absent: {TAU2 / 'retail'}")
    return python


def judge_model(python: str) -> str:
    """The model tau2's NL-assertion judge asks (its DEFAULT_LLM_NL_ASSERTIONS)."""
    code = "import sys; from tau2 import config; sys.stdout.write(config.DEFAULT_LLM_NL_ASSERTIONS)"
    return subprocess.run(
        [python, "-c", code], capture_output=True, text=True, check=True, env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    ).stdout


def echo_verdicts(body: dict[str, Any]) -> Reply:
    """tau2's reply form: each statement of the question's last line (a Python list) repeated, with its verdict."""
    question = body["messages"][-1]["content"]
    listed = next(line.strip() for line in reversed(question.splitlines()) if line.strip().startswith("["))
    statements = ast.literal_eval(listed)
    return Reply.text(json.dumps({"results": [{"expectedOutcome": s, "reasoning": "scripted", "metExpectation": True} for s in statements]}))


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """The judge request bodies bench sent, and those tau2 sent, for the same conversations (by task, in TASKS order)."""
    python = tau2_python()
    model = judge_model(python)
    root = tmp_path_factory.mktemp("judge-parity")
    data = root / "data"
    (data / "tau2" / "domains").mkdir(parents=True)
    (data / "tau2" / "domains" / "retail").symlink_to((TAU2 / "retail").resolve())
    (data / "tau2" / "user_simulator").symlink_to((TAU2 / "user_simulator").resolve())
    profile = root / "tau2-profile"
    make_tau2_profile(python, profile, data_dir=str(data), domains=["retail"])
    tasks = load_domain(collect(get_plugin_manager(["retail"])), RunConfig(domain="retail", data_dir=str(TAU2 / "retail"))).tasks
    world = ScriptedTau2World({"retail": tasks})

    def respond(body: dict[str, Any]) -> Reply:
        return echo_verdicts(body) if body["model"] == model else world(body)

    with FakeOpenAIServer(respond, models=["scripted-agent", "scripted-user", model]) as server:
        db = root / "runs.db"
        args = [
            "run",
            "--plugin",
            "retail",
            "--plugin",
            "llm",
            "--plugin",
            "openai",
            "--data-dir",
            str(TAU2 / "retail"),
            "--agent",
            "llm-fc",
            "--user",
            "llm-user",
            "--agent-model",
            "scripted-agent",
            "--agent-base-url",
            server.base_url,
            "--user-model",
            "scripted-user",
            "--user-base-url",
            server.base_url,
            "--judge",
            "llm-judge",
            "--judge-model",
            model,
            "--judge-base-url",
            server.base_url,
            "--profile",
            str(profile),
            "--run-id",
            "parity",
            "--no-baseline",
            "--db",
            str(db),
            "--format",
            "none",
            "--progress",
            "none",
            *(a for t in TASKS for a in ("--task-id", t)),
        ]
        result = CliRunner().invoke(bench_cli(["retail", "llm", "openai"]), args, env={"OPENAI_API_KEY": "unused"})
        assert result.exit_code == 0, result.output
        ours = [e["body"] for e in server.recording() if e["body"]["model"] == model]
    store = Store(db)
    rows = {r["task_id"]: r for r in store.conversations("parity")}
    assert all(json.loads(rows[t]["reward_info_json"])["reward"] == 1.0 for t in TASKS)
    results = root / "results.json"
    write_results(export_run(store, "parity"), results, "json")
    store.close()
    with FakeOpenAIServer(echo_verdicts, models=[model]) as tau2_server:
        judge_in_tau2(python, results, data, tau2_server.base_url)
        theirs = [e["body"] for e in tau2_server.recording()]
    yield ours, theirs


JUDGE_IN_TAU2 = """
import sys
from pathlib import Path
from tau2.data_model.simulation import Results
from tau2.evaluator.evaluator_nl_assertions import NLAssertionsEvaluator

results = Results.load(Path(sys.argv[1]))
tasks = {t.id: t for t in results.tasks}
order = sys.argv[2].split(",")
for sim in sorted(results.simulations, key=lambda s: order.index(s.task_id)):
    NLAssertionsEvaluator.evaluate_nl_assertions(sim.messages, tasks[sim.task_id].evaluation_criteria.nl_assertions)
"""


def judge_in_tau2(python: str, results: Path, data: Path, base_url: str) -> None:
    """tau2's own judge over the exported conversations, its client sent to `base_url`."""
    env = {
        **os.environ,
        "TAU2_DATA_DIR": str(data),
        "OPENAI_API_KEY": "unused",
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_BASE": base_url,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "NO_PROXY": ",".join(filter(None, [os.environ.get("NO_PROXY"), "127.0.0.1"])),
    }
    done = subprocess.run([python, "-c", JUDGE_IN_TAU2, str(results), ",".join(TASKS)], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr[-3000:]


def by_task(bodies: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Judge request bodies by the task the scripted user named (`<case>retail/ID</case>`): bench judges concurrently."""
    found = {}
    for body in bodies:
        case = CASE.search(body["messages"][-1]["content"])
        assert case is not None
        found[case.group(1)] = body
    return found


def test_llm_judge_sends_tau2s_judge_request_under_its_profile(judged: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> None:
    ours, theirs = (by_task(bodies) for bodies in judged)
    assert sorted(ours) == sorted(theirs) == sorted(TASKS)
    for task in TASKS:
        mine, tau2 = ours[task], theirs[task]
        assert json.dumps(mine, ensure_ascii=False) == json.dumps(tau2, ensure_ascii=False), f"task {task}: bodies differ"


def test_the_judge_request_shows_the_conversation_and_its_assertions(judged: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> None:
    ours = by_task(judged[0])
    question = ours["19"]["messages"][1]["content"]
    assert "assistant: Hi! How can I help you today?" in question  # the greeting, as tau2 shows it
    assert "\nassistant: None\n" in question  # a message that only calls tools
    assert "'Agent should tell the user that returning the water bottle gives a refund of $54.04.'" in question
    assert list(ours["19"]) == ["model", "messages", "temperature"]  # no seed, no response_format: tau2 sends neither


# --- the dump's judge part, on a made-up tau2 (always run) ------------------------------------------------------------

FAKE_JUDGE = """
import json
from tau2.data_model.message import SystemMessage, UserMessage
from tau2.utils.llm_utils import generate

BREAK = __import__("os").environ.get("FAKE_JUDGE_BREAK", "")


class NLAssertionsEvaluator:
    @classmethod
    def evaluate_nl_assertions(cls, trajectory, nl_assertions):
        shown = "\\n".join(f"[{m.role}] " + (str(m.content).strip() if BREAK == "strip" else str(m.content))
                           for m in trajectory)
        question = f"Read this:\\n{shown}\\n\\nGrade these: {nl_assertions}\\n"
        reply = generate(model="judge", messages=[SystemMessage(role="system", content="You grade calls."),
                                                  UserMessage(role="user", content=question)], temperature=0.5)
        return [type("Check", (), {"nl_assertion": r["expectedOutcome"], "met": r["metExpectation"]})
                for r in json.loads(reply.content)["results"]]
"""


@pytest.fixture
def fake_tau2_with_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """test_profile_dump's made-up tau2, with a made-up NL-assertion judge of our own words."""
    import test_profile_dump

    data = test_profile_dump.fake_tau2.__wrapped__(tmp_path, monkeypatch)  # type: ignore[attr-defined]
    root = Path(os.environ["PYTHONPATH"])
    (root / "tau2" / "evaluator").mkdir()
    (root / "tau2" / "evaluator" / "__init__.py").write_text("")
    (root / "tau2" / "evaluator" / "evaluator_nl_assertions.py").write_text(FAKE_JUDGE)
    monkeypatch.delenv("FAKE_JUDGE_BREAK", raising=False)
    return data


def test_the_dump_reads_the_judge_of_the_tau2_it_runs_in(fake_tau2_with_judge: Path, tmp_path: Path) -> None:
    import test_profile_dump

    document = test_profile_dump.run_dump(fake_tau2_with_judge)
    texts = document["texts"]
    assert (texts["judge_system"], texts["judge_line"]) == ("You grade calls.", "[{{role}}] {{content}}")
    assert texts["judge_user"] == "Read this:\n{{transcript}}\n\nGrade these: {{statements}}\n"
    assert document["judge"] == {
        "transcript": "lines",
        "line_separator": "\n",
        "no_content": "None",
        "statements": "python_list",
        "verdicts": "echo",
        "response_format": False,
        "seed": False,
    }
    out = tmp_path / "profile"
    make_tau2_profile(sys.executable, out, data_dir=str(fake_tau2_with_judge))
    from bench_kernel import load_profile

    profile = load_profile(out)
    assert (profile.judge.verdicts, profile.judge.statements, profile.texts["judge_line"]) == ("echo", "python_list", "[{{role}}] {{content}}")


def test_a_judge_that_reshapes_the_conversation_is_refused(fake_tau2_with_judge: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import test_profile_dump

    monkeypatch.setenv("FAKE_JUDGE_BREAK", "strip")
    with pytest.raises(subprocess.CalledProcessError) as failed:
        test_profile_dump.run_dump(fake_tau2_with_judge)
    assert "judge" in failed.value.stderr.splitlines()[-1]
