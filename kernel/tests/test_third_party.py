"""A third party's view: plugin distributions installed outside the kernel, found by entry point, run by `bench`.

Three throwaway distributions are installed into a temporary target directory (pip if it can build
them offline, otherwise a hand-written dist-info) and the real `bench` console script runs in a
subprocess with that directory on PYTHONPATH: acme (a domain with one tool, one task and a policy),
other (a domain and a CLI command) and broken (its module raises ImportError on import).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import attrs
import pytest
from plugin_factory import PluginPackage, bench_env, install, run_bench

from bench_kernel.plugins import DEFAULT_PLUGINS, always_loaded

ACME = PluginPackage(
    dist="bench-acme",
    module="bench_acme",
    entry="acme",
    source='''\
    """Acme: a third-party bench plugin with one small domain."""

    from collections.abc import Callable

    import attrs

    import bench_kernel
    from bench_kernel import Domain, DomainData, DomainOptions, State, ToolError, ToolKind, Toolkit, tool
    from bench_kernel import Task
    from bench_kernel.serialization import structure

    POLICY = "You are Acme support. Close an order when its customer asks; never close another one."
    TASK = {
        "id": "close-order",
        "user_scenario": {"instructions": {"domain": "acme", "reason_for_call": "Please close order o1.",
                                           "task_instructions": "Ask to close order o1."}},
        "evaluation_criteria": {"actions": [{"action_id": "1", "name": "close_order", "arguments": {"order_id": "o1"}}],
                                "reward_basis": ["DB"]},
    }


    class OrderTools(Toolkit):
        """Acme's order desk."""

        @tool(ToolKind.WRITE)
        def close_order(self, order_id: str) -> dict:
            """Close an order.

            Args:
                order_id: The order to close.
            """
            if order_id not in self.state.orders:
                raise ToolError(f"Order {order_id} not found")
            order = self.state.orders.edit(order_id)
            order["status"] = "closed"
            return order


    @attrs.define(kw_only=True)
    class AcmeDomain(Domain):
        """Orders, open or closed."""

        name: str = "acme"

        def load(self, options: DomainOptions) -> DomainData:
            """Everything in memory."""
            return DomainData(
                name=self.name, tasks=[structure(TASK, Task, source="acme")], policy=POLICY, agent_toolkit=OrderTools,
                agent_state=State.from_records({"orders": {"o1": {"status": "open"}, "o2": {"status": "open"}}}),
                source="bench_acme",
            )


    @bench_kernel.hookimpl
    def register_domains(register: Callable[[Domain], None]) -> None:
        """Register the acme domain."""
        register(AcmeDomain())
    ''',
)

OTHER = PluginPackage(
    dist="bench-other",
    module="bench_other",
    entry="other",
    version="0.2.0",
    source='''\
    """Another third-party plugin: a domain and a command."""

    import click

    import bench_kernel


    @bench_kernel.hookimpl
    def register_domains(register):
        register(bench_kernel.Domain(name="other"))


    @bench_kernel.hookimpl
    def register_commands(cli):
        @cli.command(name="other-hello")
        @click.argument("who")
        def other_hello(who):
            """Say hello from the other plugin."""
            click.echo(f"hello {who} from other")
    ''',
)

BROKEN = PluginPackage(
    dist="bench-broken",
    module="bench_broken",
    entry="broken",
    source="""\
    raise ImportError("bench_broken needs the acme-sdk package, which is not installed")
    """,
)


@attrs.frozen
class Site:
    """The installed plugins and how to run `bench` with them."""

    path: Path
    method: str
    env: dict[str, str]
    cwd: Path

    def bench(self, *args: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
        """Run `bench ARGS` with the plugins on the path."""
        return run_bench(args, {**self.env, **extra_env}, self.cwd)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    """Install acme, other and broken once for this module."""
    root = tmp_path_factory.mktemp("third_party")
    path, method = install([ACME, OTHER, BROKEN], root)
    work = root / "work"
    work.mkdir()
    return Site(path=path, method=method, env=bench_env([path]), cwd=work)


def assert_one_clean_error(done: subprocess.CompletedProcess[str], *fragments: str) -> None:
    """A non-zero exit, no traceback, and exactly one `Error:` line holding every fragment."""
    assert done.returncode != 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, done.stderr
    for fragment in fragments:
        assert fragment in errors[0], errors[0]


def test_the_plugins_are_installed_distributions(site: Site) -> None:
    for package in (ACME, OTHER, BROKEN):
        [info] = list(site.path.glob(f"{package.dist.replace('-', '_')}-{package.version}.dist-info"))
        assert f"[bench]\n{package.entry} = {package.module}" in (info / "entry_points.txt").read_text()


def test_bench_plugins_lists_installed_plugins_and_the_broken_one(site: Site) -> None:
    done = site.bench("plugins", "--format", "json")

    assert done.returncode == 0, done.stderr
    listed = {p["name"]: p for p in json.loads(done.stdout)}
    assert {"acme", "other", "broken"} <= set(listed)
    acme, other, broken = listed["acme"], listed["other"], listed["broken"]
    assert (acme["distribution"], acme["version"], acme["hooks"], acme["error"]) == ("bench-acme", "0.1.0", ["register_domains"], None)
    assert acme["components"] == {"domain": ["acme"]}
    assert (other["version"], other["hooks"]) == ("0.2.0", ["register_commands", "register_domains"])
    assert broken["distribution"] == "bench-broken" and broken["hooks"] == [] and broken["components"] == {}
    assert broken["error"] == "ImportError: bench_broken needs the acme-sdk package, which is not installed"
    assert not any(p["builtin"] for p in listed.values())


def test_bench_plugins_table_marks_the_broken_plugin(site: Site) -> None:
    done = site.bench("plugins")

    assert done.returncode == 0, done.stderr
    lines = {line.split()[0]: line for line in done.stdout.splitlines()}
    assert lines["acme"] == "acme  bench-acme 0.1.0  register_domains"
    assert lines["broken"].startswith("broken  bench-broken 0.1.0  FAILED: ImportError: bench_broken needs")


def test_run_with_one_plugin_uses_only_that_plugin(site: Site) -> None:
    db = site.cwd / "acme.db"
    done = site.bench("run", "--plugin", "acme", "--db", str(db), "--format", "json")

    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)  # bench-report's report, or the kernel's summary: the same figures where both have them
    assert report["conversations"] == 1 and report["status"] == "complete"
    with sqlite3.connect(db) as conn:
        [(run_id, plugins_json, config_json)] = conn.execute("select id, plugins_json, config_json from runs").fetchall()
        scored = conn.execute("select arm, task_id, reward from conversations order by arm").fetchall()
        used = dict(conn.execute("select name, version from plugins_used where run_id = ?", [run_id]).fetchall())
        closed = conn.execute("select count(*) from tool_calls where name = 'close_order' and error = 0").fetchone()[0]
    assert run_id == report["run_id"] and run_id.startswith("acme-oracle-")
    assert scored == [("agent", "close-order", 1.0), ("baseline", "close-order", 0.0)]  # doing nothing leaves the order open
    assert json.loads(config_json)["plugins"] == ["acme"]
    # ... and those installed ones that load with every run (bench-trust, when the workspace holds it)
    assert used == {**{name: used[name] for name in [*DEFAULT_PLUGINS, *always_loaded()]}, "acme": "0.1.0"}
    assert {p["name"] for p in json.loads(plugins_json)} == set(used)
    assert closed == 1


def test_run_selecting_the_broken_plugin_is_one_clean_error(site: Site) -> None:
    db = site.cwd / "broken.db"
    done = site.bench("run", "--plugin", "broken", "--db", str(db))

    assert_one_clean_error(done, "plugin 'broken' failed", "ImportError", "acme-sdk")
    assert done.stdout == ""
    assert not db.exists()


def test_bench_debug_shows_the_traceback(site: Site) -> None:
    done = site.bench("run", "--plugin", "broken", "--db", str(site.cwd / "debug.db"), BENCH_DEBUG="1")

    assert done.returncode != 0
    assert "Traceback" in done.stderr and "ConfigError" in done.stderr


def test_run_selecting_an_unknown_plugin_is_one_clean_error(site: Site) -> None:
    done = site.bench("run", "--plugin", "nosuch", "--db", str(site.cwd / "nosuch.db"))

    assert_one_clean_error(done, "plugin 'nosuch' is not installed", "acme", "other")


def test_run_without_choosing_among_several_domains_asks_for_one(site: Site) -> None:
    done = site.bench("run", "--db", str(site.cwd / "several.db"))

    assert_one_clean_error(done, "choose a domain with --domain", "acme", "other")


def test_a_plugin_command_is_part_of_bench(site: Site) -> None:
    help_text = site.bench("--help")
    hello = site.bench("other-hello", "world")

    assert help_text.returncode == 0 and "other-hello" in help_text.stdout
    assert hello.returncode == 0, hello.stderr
    assert hello.stdout == "hello world from other\n"


def test_python_dash_m_bench_kernel_is_the_same_cli(site: Site) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench_kernel", "other-hello", "module"], env=site.env, cwd=site.cwd, capture_output=True, text=True, timeout=300
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout == "hello module from other\n"
