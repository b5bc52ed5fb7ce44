"""Every hookspec has a test here: a plugin implementing it is called, once, and what it registers arrives."""

from __future__ import annotations

import inspect
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from plugin_factory import no_installed_plugins
from sqlite_utils import Migrations

import bench_kernel
from bench_kernel import (
    Agent,
    Channel,
    CombinationRule,
    Domain,
    Judge,
    Metric,
    Model,
    ReportSection,
    RewardComponent,
    TaskExtension,
    UserSimulator,
    hookimpl,
    hookspecs,
)
from bench_kernel.plugins import PluginSet, apply_commands, collect, get_plugin_manager
from bench_kernel.store.store import Store

HOOKSPECS = {name for name, func in vars(hookspecs).items() if callable(func) and hasattr(func, "bench_spec")}
COVERED: set[str] = set()


def covers(*hooks: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Record that the decorated test pins these hooks (checked by test_every_hookspec_has_a_test)."""

    def mark(test: Callable[..., Any]) -> Callable[..., Any]:
        COVERED.update(hooks)
        return test

    return mark


def plugin_implementing(hook: str, body: Callable[..., None]) -> Any:
    """A plugin object whose only hook implementation is `hook`; it counts its calls and hands on to body."""
    # pluggy passes arguments by the implementation's parameter names, so each impl spells the spec's.
    arguments = tuple(inspect.signature(getattr(hookspecs, hook)).parameters)
    if arguments == ("register",):

        def impl(self: Any, register: Any) -> None:
            self.calls += 1
            body(register)
    elif arguments == ("cli",):

        def impl(self: Any, cli: Any) -> None:
            self.calls += 1
            body(cli)
    else:
        raise AssertionError(f"hook {hook} takes {arguments}: teach plugin_implementing about it")
    return type(f"{hook}_plugin", (), {hook: hookimpl(impl), "calls": 0})()


def load(*extra: tuple[str, object]) -> PluginSet:
    """A fresh plugin manager with only the built-ins and these plugin objects."""
    return get_plugin_manager(no_installed_plugins(), extra=list(extra))


COMPONENT_CASES = [
    ("register_domains", "domain", Domain(name="hook-domain")),
    ("register_agents", "agent", Agent(name="hook-agent")),
    ("register_user_simulators", "user simulator", UserSimulator(name="hook-user")),
    ("register_models", "model", Model(name="hook-model")),
    ("register_judges", "judge", Judge(name="hook-judge")),
    ("register_metrics", "metric", Metric(name="hook-metric")),
    ("register_channels", "channel", Channel(name="hook-channel")),
    ("register_conversation_loops", "conversation loop", bench_kernel.ConversationLoop(name="hook-loop")),
    ("register_reward_components", "reward component", RewardComponent(name="HOOK")),
    ("register_combination_rules", "combination rule", CombinationRule(name="hook-rule")),
    ("register_task_extensions", "task extension", TaskExtension(name="hook-ext", field="hook_ext")),
    ("register_report_sections", "report section", ReportSection(name="hook-section")),
    ("register_report_formats", "report format", bench_kernel.ReportFormat(name="hook-format")),
    ("register_report_builders", "report builder", bench_kernel.ReportBuilder(name="hook-builder")),
    ("register_task_transforms", "task transform", bench_kernel.TaskTransform(name="hook-transform", settings=("hook_setting",))),
    ("register_executors", "executor", bench_kernel.Executor(name="hook-executor")),
    ("register_profile_readers", "profile reader", bench_kernel.ProfileReader(name="hook-reader")),
    ("register_attributors", "attributor", bench_kernel.Attributor(name="hook-attributor")),
]


@covers(*(hook for hook, _, _ in COMPONENT_CASES))
@pytest.mark.parametrize(("hook", "kind", "component"), COMPONENT_CASES, ids=[c[0] for c in COMPONENT_CASES])
def test_component_hook_is_called_once_and_its_component_arrives(hook: str, kind: str, component: Any) -> None:
    plugin = plugin_implementing(hook, lambda register: register(component))
    plugin_set = load(("hooktest", plugin))

    registry = collect(plugin_set)

    assert plugin.calls == 1
    # Metric names are namespaced by their plugin; the other kinds' names are global.
    name = f"hooktest:{component.name}" if kind == "metric" else component.name
    assert registry.get(kind, name) is component
    assert registry.origin(kind, name) == "hooktest"
    assert plugin_set.hooks_of("hooktest") == [hook]
    assert plugin_set.failures() == []


@covers("register_migrations")
def test_register_migrations_arrives_and_the_store_applies_it(tmp_path: Path) -> None:
    migrations = Migrations("bench-hooktest")
    applied: list[str] = []

    @migrations(name="m001_create_items")
    def m001_create_items(db: Any) -> None:
        applied.append("m001")
        db["hooktest_items"].create({"conversation_id": str, "turn": int}, pk=("conversation_id", "turn"))

    plugin = plugin_implementing("register_migrations", lambda register: register(migrations))
    registry = collect(load(("hooktest", plugin)))

    assert plugin.calls == 1
    assert registry.migrations == [migrations]
    path = tmp_path / "store.db"
    Store(path, registry.migrations).close()
    Store(path, registry.migrations).close()  # a second open applies nothing again

    with sqlite3.connect(path) as db:
        columns = [row[1] for row in db.execute("pragma table_info(hooktest_items)")]
        sets = {row[0] for row in db.execute("select migration_set from _sqlite_migrations")}
    assert columns == ["conversation_id", "turn"]
    assert {"bench-kernel", "bench-hooktest"} <= sets
    assert applied == ["m001"]


@covers("register_commands")
def test_register_commands_adds_an_invocable_command() -> None:
    def add_hello(cli: click.Group) -> None:
        @cli.command(name="hello")
        @click.argument("who")
        def hello(who: str) -> None:
            click.echo(f"hello {who}")

    plugin = plugin_implementing("register_commands", add_hello)
    plugin_set = load(("hooktest", plugin))

    @click.group()
    def root() -> None:
        """A fresh root group, standing in for `bench`."""

    apply_commands(plugin_set, root)
    result = CliRunner().invoke(root, ["hello", "bench"])

    assert plugin.calls == 1
    assert result.exit_code == 0, result.output
    assert result.stdout == "hello bench\n"


@covers("register_commands")
def test_a_failing_register_commands_is_recorded_and_others_still_add_theirs() -> None:
    def explode(cli: click.Group) -> None:
        raise RuntimeError("no commands today")

    def add_ok(cli: click.Group) -> None:
        cli.add_command(click.Command("ok", callback=lambda: click.echo("ok")))

    plugin_set = load(("exploding", plugin_implementing("register_commands", explode)), ("fine", plugin_implementing("register_commands", add_ok)))
    root = click.Group("root")

    apply_commands(plugin_set, root)

    assert list(root.commands) == ["ok"]
    [failed] = plugin_set.failures()
    assert failed.name == "exploding"
    assert "register_commands failed" in (failed.error or "") and "no commands today" in (failed.error or "")


def test_every_hookspec_has_a_test() -> None:
    assert HOOKSPECS, "no hookspecs found: is the 'bench_spec' marker attribute still set?"
    assert COVERED == HOOKSPECS, f"hooks without a test: {sorted(HOOKSPECS - COVERED)}; unknown: {sorted(COVERED - HOOKSPECS)}"


@pytest.mark.parametrize("name", sorted(HOOKSPECS))
def test_hookspec_is_typed_and_documented_with_an_example(name: str) -> None:
    spec = getattr(hookspecs, name)
    doc = inspect.getdoc(spec) or ""
    signature = inspect.signature(spec)

    assert "Example::" in doc, f"{name} has no Example"
    assert "hookimpl" in doc.split("Example::", 1)[1], f"the example of {name} does not show a hook implementation"
    assert "Called" in doc, f"{name} does not say when it is called"
    assert all(p.annotation is not inspect.Parameter.empty for p in signature.parameters.values())
    assert all(f":param {p}:" in doc for p in signature.parameters), f"{name} does not document every argument"
    assert signature.return_annotation in ("None", None)
