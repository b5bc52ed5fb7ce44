"""The eleven mistakes of issue 33, made as a third party makes them, and met through the real `bench`.

A domain, an agent and a metric are generated with `bench new` into a temporary directory and pip-installed there
(`--target`, put on PYTHONPATH for the `bench` subprocesses only: nothing is installed into the environment). Each
mistake is then made in a copy of that installation and run with a real SQLite store. Every one is refused before any
conversation is stored, but two: code changed between two identical `bench run` commands is caught at the rerun
(a new run, saying why), and a metric that raises is caught when its run ends (exit 1: the conversations are sound and
stay stored, and the fix is `bench rescore`, which scores them again without playing them). Each message names the
plugin, the object at fault and the fix.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import attrs
import pytest

BIN = Path(sys.executable).parent
DOMAIN, AGENT, METRIC = "apothecary", "clerk", "tally"
PRACTICE = ("--plugin", "practice")
QUIET = ("--progress", "none", "--format", "none")
RUN_DOMAIN = ("run", "--plugin", DOMAIN, *QUIET)
RUN_AGENT = ("run", *PRACTICE, "--plugin", AGENT, "--agent", AGENT, *QUIET)
RUN_METRIC = ("run", *PRACTICE, "--plugin", METRIC, *QUIET)


@attrs.frozen
class Edit:
    """One change to an installed file: `old` (which must occur once) becomes `new`."""

    path: str
    old: str
    new: str

    def apply(self, site: Path) -> None:
        file = site / self.path
        text = file.read_text(encoding="utf-8")
        assert text.count(self.old) == 1, f"the template changed: {self.old!r} is not once in {self.path}"
        file.write_text(text.replace(self.old, self.new), encoding="utf-8")


@attrs.frozen
class Mistake:
    """A mistake made in the installed plugins, the command that meets it, and what its one error line must say."""

    edits: tuple[Edit, ...]
    command: tuple[str, ...]
    says: tuple[str, ...]


TOOLS, TASKS = f"bench_{DOMAIN}/tools.py", f"bench_{DOMAIN}/data/tasks.json"
SESSION_RESPONDS = Edit(
    f"bench_{AGENT}/agent.py",
    "    async def respond(self, incoming: Sequence[Message]) -> AssistantMessage:",
    "    def respond(self, incoming: Sequence[Message]) -> AssistantMessage:",
)
NO_AWAIT = Edit(
    f"bench_{AGENT}/agent.py",
    "return self.chat.reply(await answer(self.chat.messages, self.chat.tools))",
    'return self.chat.reply({"role": "assistant", "content": "Hello."})',
)
PLAIN_RESPOND = ("plugin 'clerk'", "agent 'clerk'", "bench_clerk.agent.ClerkSession.respond is a plain def", "write `async def respond`")

MISTAKES = {
    "sync respond": Mistake(edits=(SESSION_RESPONDS, NO_AWAIT), command=RUN_AGENT, says=PLAIN_RESPOND),
    "sync respond behind the base annotation": Mistake(
        edits=(
            SESSION_RESPONDS,
            NO_AWAIT,
            Edit(
                f"bench_{AGENT}/agent.py",
                "def start(self, setup: ConversationSetup) -> ClerkSession:",
                "def start(self, setup: ConversationSetup) -> AgentSession:",
            ),
        ),
        command=RUN_AGENT,
        says=(*PLAIN_RESPOND, "the run stopped at its first conversation, storing none"),
    ),
    "async domain load": Mistake(
        edits=(Edit(f"bench_{DOMAIN}/domain.py", "    def load(self, options", "    async def load(self, options"),),
        command=RUN_DOMAIN,
        says=("plugin 'apothecary'", "bench_apothecary.domain.ApothecaryDomain.load is an async def", "write `def load`"),
    ),
    "undocumented parameter": Mistake(
        edits=(
            Edit(TOOLS, '            title: The book\'s title, for example "The Quiet Orchard"; case and surrounding spaces do not matter.\n', ""),
        ),
        command=RUN_DOMAIN,
        says=("plugin 'apothecary'", "toolkit ApothecaryTools: tool 'find_book'", "does not document parameters ['title']", "add each under Args:"),
    ),
    "failing gold": Mistake(
        edits=(
            Edit(
                TASKS,
                '"name": "lend_book", "arguments": {"member_id": "M-1", "book_id": "B-1"}',
                '"name": "lend_book", "arguments": {"member_id": "M-1", "book_id": "B-2"}',
            ),
        ),
        command=RUN_DOMAIN,
        says=(
            "plugin 'apothecary'",
            "lend_by_title (gold action a3 lend_book: Error: 'Rivers of Salt' is already on loan.",
            "Fix the tasks, leave them out",
        ),
    ),
    "misspelt task field": Mistake(
        edits=(Edit(TASKS, '"communicate_info": ["limit of 1"]', '"comunicate_info": ["limit of 1"]'),),
        command=RUN_DOMAIN,
        says=(
            "plugin 'apothecary': domain 'apothecary'",
            "tasks.json: extra fields found (comunicate_info) @ $[1].evaluation_criteria",
            "(did you mean 'communicate_info'?)",
        ),
    ),
    "misspelt hook": Mistake(
        edits=(Edit(f"bench_{DOMAIN}/__init__.py", "def register_domains(", "def register_domain("),),
        command=RUN_DOMAIN,
        says=(
            "plugin 'apothecary'",
            "module bench_apothecary",
            "register_domain (did you mean 'register_domains'?)",
            "rename each to its hook's name",
        ),
    ),
    "missing hookimpl marker": Mistake(
        edits=(Edit(f"bench_{DOMAIN}/__init__.py", "@hookimpl\n", ""),),
        command=RUN_DOMAIN,
        says=(
            "plugin 'apothecary'",
            "module bench_apothecary",
            "not marked with @bench_kernel.hookimpl",
            "register_domains (add the decorator above each)",
        ),
    ),
    "in-place shared-record edit": Mistake(
        edits=(Edit(TOOLS, 'self.state["books"][book_id] = {**book, "available": False}', 'book["available"] = False'),),
        command=RUN_DOMAIN,
        says=(
            "plugin 'apothecary'",
            "tool 'lend_book' (ApothecaryTools in bench_apothecary.tools) edits a shared record in place: task 'lend_by_title'",
            "Fix: change a private copy (`record = self.state.books.edit(key)`)",
        ),
    ),
    "random ids": Mistake(
        edits=(
            Edit(TOOLS, "from typing import Any\n", "import uuid\nfrom typing import Any\n"),
            Edit(TOOLS, 'loan_id = f"L-{len(loans) + 1}"', 'loan_id = f"L-{uuid.uuid4().hex[:8]}"'),
        ),
        command=RUN_DOMAIN,
        says=(
            "plugin 'apothecary'",
            "tool 'lend_book' (ApothecaryTools in bench_apothecary.tools) is not deterministic: task 'lend_by_title'",
            "Fix: derive new ids and values from the state",
            "never from uuid4",
        ),
    ),
}


@attrs.frozen
class Authored:
    """The generated projects under root, installed into root/site."""

    root: Path

    @property
    def site(self) -> Path:
        return self.root / "site"

    def copy(self, where: Path, *edits: Edit) -> Path:
        """A copy of the installation with edits made (no bytecode: a stale .pyc must not hide an edit)."""
        site = where / "site"
        shutil.copytree(self.site, site, ignore=shutil.ignore_patterns("__pycache__"))
        for edit in edits:
            edit.apply(site)
        return site


def bench(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the `bench` console script with the plugins installed in site, and no inherited bench settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCH_")}
    env["PYTHONPATH"] = str(site)
    return subprocess.run([str(BIN / "bench"), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def pip_install(target: Path, *projects: Path) -> None:
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), *map(str, projects)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def authored(tmp_path_factory: pytest.TempPathFactory) -> Authored:
    root = tmp_path_factory.mktemp("author")
    for kind, name in (("domain", DOMAIN), ("agent", AGENT), ("metric", METRIC)):
        done = bench(root, root, "new", kind, name)
        assert done.returncode == 0, done.stderr
    pip_install(root / "site", root / DOMAIN, root / AGENT, root / METRIC)
    return Authored(root)


def error_line(done: subprocess.CompletedProcess[str]) -> str:
    """The one `Error:` line of a failed command, which printed no traceback."""
    assert done.returncode != 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    [line] = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    return line


def stored(db: Path) -> dict[str, int]:
    """Run id -> stored conversations ({} when no store was even created)."""
    if not db.exists():
        return {}
    with closing(sqlite3.connect(db)) as connection:
        runs = dict.fromkeys((row[0] for row in connection.execute("select id from runs")), 0)
        runs.update(connection.execute("select run_id, count(*) from conversations group by run_id").fetchall())
    return runs


def test_the_generated_plugins_run_as_written(authored: Authored, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    for command in (RUN_DOMAIN, RUN_AGENT, RUN_METRIC):
        done = bench(authored.site, tmp_path, *command, "--db", str(db))
        assert done.returncode == 0, done.stderr
    assert sorted(stored(db).values()) == [6, 6, 6]  # the domain's and the practice domain's 3 tasks, in two arms


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_a_mistake_is_refused_before_any_conversation_is_stored(authored: Authored, tmp_path: Path, mistake: str) -> None:
    made = MISTAKES[mistake]
    site = authored.copy(tmp_path, *made.edits)
    db = tmp_path / "runs.db"

    line = error_line(bench(site, tmp_path, *made.command, "--db", str(db)))

    for fragment in made.says:
        assert fragment in line, (fragment, line)
    assert sum(stored(db).values()) == 0


def test_a_distribution_installed_without_its_entry_point_is_named_as_such(authored: Authored, tmp_path: Path) -> None:
    project = tmp_path / DOMAIN
    shutil.copytree(authored.root / DOMAIN, project, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    Edit("pyproject.toml", f'[project.entry-points.bench]\n{DOMAIN} = "bench_{DOMAIN}"\n', "").apply(project)
    pip_install(tmp_path / "site", project)
    db = tmp_path / "runs.db"

    line = error_line(bench(tmp_path / "site", tmp_path, *RUN_DOMAIN, "--db", str(db)))

    assert line.startswith("Error: bench-apothecary is installed but declares no [project.entry-points.bench], so bench cannot load it"), line
    assert '`[project.entry-points.bench]` with `apothecary = "bench_apothecary"`' in line and "pyproject.toml" in line
    assert stored(db) == {}


def test_an_edited_agent_gets_a_new_run_at_the_rerun_saying_why(authored: Authored, tmp_path: Path) -> None:
    site = authored.copy(tmp_path)
    command = (*RUN_AGENT, "--db", str(tmp_path / "runs.db"))
    first, again = bench(site, tmp_path, *command), bench(site, tmp_path, *command)
    Edit(f"bench_{AGENT}/agent.py", '"I can look things up with "', '"I can look these up: "').apply(site)

    edited = bench(site, tmp_path, *command)

    assert first.returncode == again.returncode == edited.returncode == 0, edited.stderr
    [old] = re.findall(r"run (\S+): 6 conversations run, 0 already stored", first.stderr)
    assert f"run {old}: 0 conversations run, 6 already stored" in again.stderr  # unchanged code: the same run resumes
    [new] = re.findall(r"run (\S+): 6 conversations run, 0 already stored", edited.stderr)
    assert new != old
    assert f"run {new}: plugin 'clerk': the code of agent clerk changed since run {old}: this is a new run ({old} is kept; " in edited.stderr
    assert f"`bench rescore {old}` scores its conversations again when only metrics or reward components changed)" in edited.stderr
    assert stored(tmp_path / "runs.db") == {old: 6, new: 6}


def test_a_raising_metric_fails_its_run_and_the_fixed_metric_rescores_it(authored: Authored, tmp_path: Path) -> None:
    site = authored.copy(
        tmp_path,
        Edit(
            f"bench_{METRIC}/metric.py",
            "for m in context.messages if isinstance(m, AssistantMessage)",
            "for m in context.transcript if isinstance(m, AssistantMessage)",
        ),
    )
    db = tmp_path / "runs.db"

    line = error_line(bench(site, tmp_path, *RUN_METRIC, "--db", str(db)))

    [run_id] = stored(db)
    assert line.startswith(
        f"Error: plugin 'tally': metric 'tally' (bench_tally.metric.TallyMetric.score) raised on every one of the 6 "
        f"conversations of run {run_id}, so it measured nothing: AttributeError: "
    ), line
    assert "Fix the metric" in line and line.endswith(f"`bench rescore {run_id}` scores the stored conversations again without playing them"), line
    assert metric_values(db, run_id) == [(None, True)] * 6
    if bench(site, tmp_path, "rescore", "--help").returncode != 0:
        pytest.skip("`bench rescore` is not installed")
    shutil.copy(authored.site / f"bench_{METRIC}" / "metric.py", site / f"bench_{METRIC}" / "metric.py")  # the fix

    rescored = bench(site, tmp_path, "rescore", run_id, "--db", str(db), "--format", "none")

    assert rescored.returncode == 0, rescored.stderr
    [new] = set(stored(db)) - {run_id}
    assert stored(db) == {run_id: 6, new: 6}
    assert sorted(metric_values(db, new)) == [(0.0, False)] * 4 + [(1.0, False)] * 2  # the practice oracle's tool calls


def metric_values(db: Path, run_id: str) -> list[tuple[float | None, bool]]:
    """(value, failed) of the tally metric's values in a run."""
    sql = "select value, error is not null from metric_values where run_id = ? and plugin = ? and metric = ?"
    with closing(sqlite3.connect(db)) as connection:
        return [(value, bool(failed)) for value, failed in connection.execute(sql, [run_id, METRIC, METRIC]).fetchall()]
