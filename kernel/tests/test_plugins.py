"""The plugin manager: built-ins, entry-point selection, isolation of failing plugins, duplicates, freshness."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from plugin_factory import PluginPackage, forget_modules, no_installed_plugins
from structlog.testing import capture_logs
from toy_domain import ToyDomain, ToyPlugin

from bench_kernel import Agent, Domain, TaskExtension, hookimpl
from bench_kernel.errors import DuplicateRegistrationError, UnknownComponentError, UnknownPluginError
from bench_kernel.plugins import (
    DEFAULT_PLUGINS,
    PluginSet,
    always_loaded,
    collect,
    get_plugin_manager,
    installed_entry_points,
    with_backend_plugins,
)

BUILTIN = DEFAULT_PLUGINS[0]
BUILTINS = DEFAULT_PLUGINS

DOMAIN_SOURCE = """\
    import bench_kernel

    @bench_kernel.hookimpl
    def register_domains(register):
        register(bench_kernel.Domain(name={name!r}))
    """

INSTALLED = [
    PluginPackage(dist="bench-tp-alpha", module="bench_tp_alpha", entry="tp-alpha", source=DOMAIN_SOURCE.format(name="alpha")),
    PluginPackage(dist="bench-tp-beta", module="bench_tp_beta", entry="tp-beta", source=DOMAIN_SOURCE.format(name="beta"), version="2.3.4"),
    PluginPackage(
        dist="bench-tp-broken",
        module="bench_tp_broken",
        entry="tp-broken",
        source='raise ImportError("bench_tp_broken needs frobnicate, which is not installed")\n',
    ),
]


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Three hand-installed plugin distributions on sys.path for one test (two good, one broken at import)."""
    site = tmp_path / "site"
    for package in INSTALLED:
        package.install_by_hand(site)
    monkeypatch.syspath_prepend(str(site))
    yield
    forget_modules(*(p.module for p in INSTALLED))
    importlib.invalidate_caches()


def load(*extra: tuple[str, object], selected: list[str] | None = None) -> PluginSet:
    """A fresh manager with the built-ins, the selected installed plugins (default: none) and extra objects."""
    return get_plugin_manager(no_installed_plugins() if selected is None else selected, extra=list(extra))


class Misspelt:
    """A plugin whose hook name lacks its final 's'."""

    @hookimpl
    def register_domain(self, register: Callable[[Domain], None]) -> None:
        """Never called: there is no such hook."""
        register(Domain(name="misspelt"))


class WrongArgument:
    """A plugin whose hook implementation asks for an argument the hook does not have."""

    @hookimpl
    def register_domains(self, registrar: Callable[[Domain], None]) -> None:
        """Never called: pluggy refuses the argument name."""


class Exploding:
    """A plugin that registers an agent, then raises."""

    @hookimpl
    def register_agents(self, register: Callable[[Agent], None]) -> None:
        """Register half, then fail."""
        register(Agent(name="half-registered"))
        raise RuntimeError("boom")


class Nameless:
    """A plugin that registers an agent without a name."""

    @hookimpl
    def register_agents(self, register: Callable[[object], None]) -> None:
        """Register something nameless."""
        register(object())


class SecondOracle:
    """A plugin that takes the built-in oracle's name."""

    @hookimpl
    def register_agents(self, register: Callable[[Agent], None]) -> None:
        """Register an agent called oracle."""
        register(Agent(name="oracle"))


# --------------------------------------------------------------------------- built-ins and selection


@pytest.mark.parametrize("selected", [None, ["tp-alpha"], ["no:tp-alpha", "no:tp-beta", "no:tp-broken"]])
def test_builtins_are_always_loaded(installed: None, selected: list[str] | None) -> None:
    plugin_set = get_plugin_manager(selected)
    registry = collect(plugin_set)

    builtin = next(p for p in plugin_set.plugins if p.name == BUILTIN)
    assert builtin.builtin and builtin.error is None and builtin.distribution == "bench-kernel"
    assert {"oracle", "do-nothing"} <= set(registry.names("agent"))
    assert "scripted" in registry.names("user simulator")
    assert registry.origin("agent", "oracle") == BUILTIN


def test_entry_points_load_with_their_distribution_and_version(installed: None) -> None:
    plugin_set = get_plugin_manager(["tp-alpha", "tp-beta"])
    registry = collect(plugin_set)

    infos = {p.name: p for p in plugin_set.plugins}
    assert (infos["tp-alpha"].distribution, infos["tp-alpha"].version) == ("bench-tp-alpha", "0.1.0")
    assert (infos["tp-beta"].distribution, infos["tp-beta"].version) == ("bench-tp-beta", "2.3.4")
    assert registry.names("domain") == ["alpha", "beta"]
    assert registry.origin("domain", "beta") == "tp-beta"
    assert plugin_set.hooks_of("tp-alpha") == ["register_domains"]


def test_selecting_a_plugin_loads_only_it(installed: None) -> None:
    plugin_set = get_plugin_manager(["tp-beta"])

    names = [p.name for p in plugin_set.plugins]
    assert names == [*BUILTINS, "tp-beta"]
    assert collect(plugin_set).names("domain") == ["beta"]


def test_no_name_blocks_one_plugin_and_loads_the_rest(installed: None) -> None:
    plugin_set = get_plugin_manager(["no:tp-alpha"])
    names = {p.name for p in plugin_set.plugins}

    assert "tp-alpha" not in names
    assert {"tp-beta", "tp-broken", BUILTIN} <= names


def test_a_plugin_broken_at_import_is_a_failure_and_the_others_load(installed: None) -> None:
    with capture_logs() as logs:
        plugin_set = get_plugin_manager(["tp-alpha", "tp-broken", "tp-beta"])
    registry = collect(plugin_set)

    [failed] = plugin_set.failures()
    assert failed.name == "tp-broken"
    assert failed.error == "ImportError: bench_tp_broken needs frobnicate, which is not installed"
    assert registry.names("domain") == ["alpha", "beta"]
    assert [e["plugin"] for e in logs if e["event"] == "plugin.failed"] == ["tp-broken"]


@pytest.mark.parametrize("selected", [["nosuch"], ["no:nosuch"], ["tp-alpha", "nosuch"]])
def test_selecting_an_unknown_plugin_raises(installed: None, selected: list[str]) -> None:
    with pytest.raises(UnknownPluginError, match="'nosuch' is not installed") as excinfo:
        get_plugin_manager(selected)
    assert "tp-alpha" in str(excinfo.value)  # the message lists what is installed


# --------------------------------------------------------------------------- failing plugin objects


@pytest.mark.parametrize("order", ["misspelt first", "misspelt last"])
def test_a_misspelt_hook_fails_its_plugin_only(order: str) -> None:
    extra = [("misspelt", Misspelt()), ("toy", ToyPlugin())]
    plugin_set = load(*(extra if order == "misspelt first" else extra[::-1]))
    registry = collect(plugin_set)

    [failed] = plugin_set.failures()
    assert failed.name == "misspelt"
    assert "that name no hook of bench: register_domain (did you mean 'register_domains'?)" in (failed.error or "")
    assert registry.names("domain") == ["toy"]
    assert plugin_set.pm.get_plugin("misspelt") is None


def test_a_hook_asking_for_an_unknown_argument_fails_its_plugin_only() -> None:
    plugin_set = load(("wrong-argument", WrongArgument()), ("toy", ToyPlugin()))

    [failed] = plugin_set.failures()
    assert failed.name == "wrong-argument"
    assert "registrar" in (failed.error or "")
    assert collect(plugin_set).names("domain") == ["toy"]


def test_a_raising_register_hook_fails_its_plugin_and_the_others_register() -> None:
    plugin_set = load(("exploding", Exploding()), ("toy", ToyPlugin()))

    with capture_logs() as logs:
        registry = collect(plugin_set)

    [failed] = plugin_set.failures()
    assert failed.name == "exploding"
    assert failed.error == "registration failed: RuntimeError: boom"
    assert registry.names("domain") == ["toy"]
    assert "half-registered" not in registry.names("agent")  # a failed plugin contributes nothing
    assert {"oracle", "do-nothing"} <= set(registry.names("agent"))
    assert [(e["event"], e["plugin"]) for e in logs] == [("plugin.failed", "exploding")]


def test_a_nameless_component_fails_its_plugin() -> None:
    plugin_set = load(("nameless", Nameless()), ("toy", ToyPlugin()))
    registry = collect(plugin_set)

    [failed] = plugin_set.failures()
    assert failed.name == "nameless" and "without a name" in (failed.error or "")
    assert registry.names("domain") == ["toy"]


# --------------------------------------------------------------------------- duplicates and lookups


def test_two_plugins_registering_one_domain_name_is_an_error_naming_both() -> None:
    plugin_set = load(("first-toy", ToyPlugin()), ("second-toy", ToyPlugin(ToyDomain())))

    with pytest.raises(DuplicateRegistrationError) as excinfo:
        collect(plugin_set)

    message = str(excinfo.value)
    assert "domain 'toy'" in message and "first-toy" in message and "second-toy" in message


def test_a_plugin_taking_a_builtin_name_is_an_error_naming_both() -> None:
    with pytest.raises(DuplicateRegistrationError, match=f"agent 'oracle' is registered twice: by {BUILTIN} and by impostor"):
        collect(load(("impostor", SecondOracle())))


class SharesField:
    """A plugin registering a library's task extension (as bench-services and bench-atod both register `goals`)."""

    def __init__(self, extension: TaskExtension) -> None:
        self.extension = extension

    @hookimpl
    def register_task_extensions(self, register: Callable[[TaskExtension], None]) -> None:
        """The shared field."""
        register(self.extension)


def test_one_task_extension_registered_by_two_plugins_is_kept_once_and_a_different_one_is_an_error() -> None:
    shared = TaskExtension(name="stages", field="stages", description="a library's field")
    registry = collect(
        load(("poses", SharesField(shared)), ("scores", SharesField(TaskExtension(name="stages", field="stages", description="a library's field"))))
    )
    assert registry.components["task extension"]["stages"] == shared and registry.origin("task extension", "stages") == "poses"

    other = TaskExtension(name="stages", field="steps")
    with pytest.raises(DuplicateRegistrationError, match="task extension 'stages' is registered twice: by poses and by impostor"):
        collect(load(("poses", SharesField(shared)), ("impostor", SharesField(other))))


def test_unknown_component_lists_the_registered_names() -> None:
    registry = collect(load(("toy", ToyPlugin()), ("other", ToyPlugin(ToyDomain(name="other")))))

    with pytest.raises(UnknownComponentError, match=r"no domain named 'nope' \(registered: other, toy\)"):
        registry.get("domain", "nope")
    with pytest.raises(UnknownComponentError, match=r"no agent named 'nope' \(registered: do-nothing, oracle\)"):
        registry.get("agent", "nope")
    with pytest.raises(UnknownComponentError, match=r"no judge named 'nope' \(registered: none\)"):
        registry.get("judge", "nope")


# --------------------------------------------------------------------------- freshness


def test_each_call_builds_a_fresh_manager() -> None:
    with_toy = load(("toy", ToyPlugin()), ("misspelt", Misspelt()))
    plain = load()

    assert with_toy.pm is not plain.pm
    assert plain.pm.get_plugin("toy") is None
    assert [p.name for p in plain.plugins] == list(BUILTINS)
    assert plain.failures() == []
    assert collect(plain).names("domain") == []
    assert collect(with_toy).names("domain") == ["toy"]
    # Collecting twice from one manager gives the same components again (no state kept in the kernel).
    assert collect(with_toy).names("domain") == ["toy"]


def test_a_configured_model_backend_brings_its_plugin_into_the_selection() -> None:
    installed = installed_entry_points()
    if "openai" not in installed or "mock" not in installed:
        pytest.skip("needs bench-openai and bench-mock installed (bash scripts/dev.sh setup)")
    always = always_loaded()  # installed plugins that load with every run (bench-trust in the workspace)
    assert with_backend_plugins(["mock"], ["openai", "openai"]) == ["mock", "openai", *always]
    assert with_backend_plugins(["mock", "openai"], ["openai"]) == ["mock", "openai", *always]
    assert with_backend_plugins(["mock", "no:openai"], ["openai"]) == ["mock", "no:openai", *always]  # a block wins
    assert with_backend_plugins(["mock"], ["no-such-backend"]) == ["mock", *always]  # left to the clear "no backend" error
    assert with_backend_plugins(["mock", *(f"no:{name}" for name in always)], []) == ["mock", *(f"no:{name}" for name in always)]
    assert with_backend_plugins(None, ["openai"]) is None  # every installed plugin loads anyway
