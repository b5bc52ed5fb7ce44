"""The plugin manager, built per run from entry points, and the registry of what plugins registered."""

from __future__ import annotations

import functools
import importlib
import importlib.metadata as md
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import pluggy

from bench_kernel import hookspecs
from bench_kernel.errors import ConfigError, DuplicateRegistrationError, PluginError, UnknownPluginError, did_you_mean
from bench_kernel.loadchecks import component_problems, unknown_hooks, unmarked_hooks
from bench_kernel.logs import get_logger
from bench_kernel.profiles.profile import Profile, ProfileReader, bench_profile
from bench_kernel.registry import GROUP, Registry, without_entry_point

ALWAYS_GROUP = "bench.always"
DEFAULT_PLUGINS = (
    "bench_kernel.builtin.participants",
    "bench_kernel.builtin.evaluation",
    "bench_kernel.builtin.channels",
    "bench_kernel.builtin.executors",
)
PROFILES_PLUGIN = "profiles"
"""The plugin whose profile reader reads `--profile DIR` (bench-profiles); bench's own profile needs none."""
NAMED_BUILTINS = {"practice": "bench_kernel.builtin.practice"}
"""Built-in plugins loaded only when named (`--plugin practice`); an installed entry point of the same name wins."""
COMPONENT_HOOKS = {
    "domain": "register_domains",
    "agent": "register_agents",
    "user simulator": "register_user_simulators",
    "model": "register_models",
    "judge": "register_judges",
    "metric": "register_metrics",
    "channel": "register_channels",
    "conversation loop": "register_conversation_loops",
    "reward component": "register_reward_components",
    "combination rule": "register_combination_rules",
    "task extension": "register_task_extensions",
    "task transform": "register_task_transforms",
    "report section": "register_report_sections",
    "report format": "register_report_formats",
    "report builder": "register_report_builders",
    "attributor": "register_attributors",
    "executor": "register_executors",
    "profile reader": "register_profile_readers",
}
# Kinds whose names are namespaced by plugin ("plugin:name"): two plugins may use one name.
NAMESPACED_KINDS = frozenset({"metric"})
# Kinds a library distribution's component may be registered by each plugin that needs it: kept once when equal
# (bench-atod's `goals` field, registered by bench-atod and by bench-services, which poses goals).
SHARED_KINDS = frozenset({"task extension", "task transform"})

log = get_logger()


@attrs.frozen(kw_only=True)
class PluginInfo:
    """One loaded or failed plugin."""

    name: str
    distribution: str | None
    version: str | None
    builtin: bool = False
    error: str | None = None


@attrs.define
class PluginSet:
    """A plugin manager with the provenance and failures of its plugins."""

    pm: pluggy.PluginManager
    plugins: list[PluginInfo] = attrs.field(factory=list)

    def failures(self) -> list[PluginInfo]:
        """Plugins that failed to load, validate or register."""
        return [p for p in self.plugins if p.error]

    def fail(self, name: str, error: str) -> None:
        """Mark a plugin failed and drop it from the manager."""
        plugin = self.pm.get_plugin(name)
        if plugin is not None:
            self.pm.unregister(plugin)
        self.plugins = [attrs.evolve(p, error=error) if p.name == name else p for p in self.plugins]
        log.debug("plugin.failed", plugin=name, error=error)

    def hooks_of(self, name: str) -> list[str]:
        """Names of the hooks a plugin implements."""
        plugin = self.pm.get_plugin(name)
        if plugin is None:
            return []
        return sorted(c.name for c in self.pm.get_hookcallers(plugin) or [])


def installed_entry_points() -> dict[str, md.EntryPoint]:
    """Every installed entry point of the bench group, by name."""
    return {ep.name: ep for ep in _group(GROUP)}


def _group(group: str) -> tuple[md.EntryPoint, ...]:
    """A group's installed entry points, read once per state of sys.path: a run asks a dozen times (~8 ms a read)."""
    return _read_group(group, tuple((path, _modified(path)) for path in sys.path))


@functools.lru_cache(maxsize=16)
def _read_group(group: str, paths: tuple[tuple[str, int], ...]) -> tuple[md.EntryPoint, ...]:
    return tuple(md.entry_points(group=group))


def _modified(path: str) -> int:
    """A sys.path entry's modification time: installing or removing a distribution there changes it."""
    try:
        return os.stat(path or ".").st_mtime_ns
    except OSError:
        return -1


def get_plugin_manager(selected: Sequence[str] | None = None, extra: Sequence[tuple[str, object]] = ()) -> PluginSet:
    """Build a fresh plugin manager: built-ins, the selected entry points (all when None), then `extra` (name, object) pairs."""
    # `selected` follows pytest's -p: names load those plugins only, `no:NAME` blocks one, an empty list loads none.
    pm = pluggy.PluginManager(GROUP)
    pm.add_hookspecs(hookspecs)
    plugins = PluginSet(pm)
    kernel_version = _version("bench-kernel")  # each look-up by name scans every installed distribution
    for module in DEFAULT_PLUGINS:
        pm.register(importlib.import_module(module), name=module)
        plugins.plugins.append(PluginInfo(name=module, distribution="bench-kernel", version=kernel_version, builtin=True))
    for ep in _entry_points_to_load(selected):
        _load_entry_point(plugins, ep)
    for name in _named_builtins(selected):
        pm.register(importlib.import_module(NAMED_BUILTINS[name]), name=name)
        plugins.plugins.append(PluginInfo(name=name, distribution="bench-kernel", version=kernel_version, builtin=True))
    for name, obj in extra:
        _register(plugins, name, functools.partial(_identity, obj), None)
    return plugins


def with_backend_plugins(selected: Sequence[str] | None, backends: Sequence[str]) -> list[str] | None:
    """The selection plus the installed plugins named like the run's model backends, and those always loaded (unless blocked)."""
    if selected is None:
        return None
    available = installed_entry_points()
    wanted, blocked = _split(selected)
    if not wanted:
        return list(selected)  # only blocks: every installed plugin loads anyway
    added = [b for b in dict.fromkeys([*backends, *always_loaded()]) if b in available and b not in blocked and b not in wanted]
    return [*selected, *added]


def missing_plugin(plugin: str, selected: Sequence[str] | None) -> str:
    """Why a first-party plugin a run needs is not loaded, and what to do: blocked, installed but not loaded, not installed."""
    if f"no:{plugin}" in (selected or ()):
        return f"blocked by this run (--plugin no:{plugin})"
    if plugin in installed_entry_points():
        return f"installed but not loaded: add --plugin {plugin}"
    return f"not installed: pip install bench-{plugin}"


def always_loaded() -> list[str]:
    """Installed plugins that load with every run whatever `--plugin` names: those also in the group `bench.always`."""
    return sorted(ep.name for ep in _group(ALWAYS_GROUP) if ep.name in installed_entry_points())


def _identity(obj: object) -> object:
    return obj


def _entry_points_to_load(selected: Sequence[str] | None) -> list[md.EntryPoint]:
    available = installed_entry_points()
    wanted, blocked = _split(selected or ())
    unknown = [n for n in wanted + sorted(blocked) if n not in available and n not in NAMED_BUILTINS]
    if unknown:
        known = ", ".join(sorted(available)) or "none"
        name = unknown[0]
        raise UnknownPluginError(
            without_entry_point(name)
            or f"plugin {name!r} is not installed{did_you_mean(name, [*available, *NAMED_BUILTINS])} (installed: {known}; see `bench plugins`)"
        )
    # None (no choice made) or only blocks: every installed plugin; an empty list: none of them.
    names = sorted(available) if selected is None or (blocked and not wanted) else wanted
    return [available[n] for n in dict.fromkeys(names) if n not in blocked and n in available]


def _split(selected: Sequence[str]) -> tuple[list[str], set[str]]:
    """The plugins a selection names, and those it blocks (`no:NAME`)."""
    return [s for s in selected if not s.startswith("no:")], {s[3:] for s in selected if s.startswith("no:")}


def _named_builtins(selected: Sequence[str] | None) -> list[str]:
    """The built-ins loaded only when named that the selection names (and no installed entry point shadows)."""
    named = [s for s in selected or () if s in NAMED_BUILTINS]
    return [n for n in dict.fromkeys(named) if n not in installed_entry_points()]


def _load_entry_point(plugins: PluginSet, ep: md.EntryPoint) -> None:
    # The entry point's own distribution has its version at hand: no scan of the installed ones by name.
    dist = ep.dist
    _register(plugins, ep.name, ep.load, dist.name if dist else None, dist.version if dist else None)


def _register(plugins: PluginSet, name: str, load: Callable[[], object], dist: str | None, version: str | None = None) -> None:
    plugins.plugins.append(PluginInfo(name=name, distribution=dist, version=version or _version(dist)))
    try:
        obj = load()
        _refuse_misnamed_hooks(name, obj)
        plugins.pm.register(_hashable(obj), name=name)
        plugins.pm.check_pending()
    except Exception as exc:  # noqa: BLE001 - one broken plugin must not take the others down
        plugins.fail(name, _describe(exc))


def _refuse_misnamed_hooks(name: str, obj: object) -> None:
    hooks = _hook_names()
    if unmarked := unmarked_hooks(obj, hooks):
        detail = f"has functions named like hooks but not marked with @bench_kernel.hookimpl, so none of them is registered: {', '.join(unmarked)}"
        raise PluginError(name, f"{_object_name(obj)} {detail} (add the decorator above each)")
    if unknown := unknown_hooks(obj, hooks):
        detail = f"marks functions with @bench_kernel.hookimpl that name no hook of bench: {', '.join(unknown)}"
        raise PluginError(name, f"{_object_name(obj)} {detail} (rename each to its hook's name; the hooks: {', '.join(hooks)})")


@functools.cache
def _hook_names() -> tuple[str, ...]:
    return tuple(n for n in dir(hookspecs) if n.startswith("register_") and callable(getattr(hookspecs, n)))


def _object_name(obj: object) -> str:
    """A plugin object as its author knows it: the module, or the class of the registered instance."""
    if isinstance(obj, type(functools)):
        return f"module {obj.__name__}"
    return f"class {type(obj).__module__}.{type(obj).__qualname__}"


class _HookHolder:
    """Holds the hook implementations of a plugin object that cannot be hashed (pluggy keys plugins by object)."""

    def __init__(self, obj: object) -> None:
        self.wrapped = obj
        for attr in dir(obj):
            value = getattr(obj, attr, None)
            if callable(value) and hasattr(value, f"{GROUP}_impl"):
                setattr(self, attr, value)

    def __repr__(self) -> str:
        return f"<hooks of {self.wrapped!r:.60}>"


def _hashable(obj: object) -> object:
    try:
        hash(obj)
    except TypeError:
        return _HookHolder(obj)
    return obj


def _describe(exc: BaseException) -> str:
    if isinstance(exc, pluggy.PluginValidationError):
        return f"invalid hook implementation: {exc}"
    if isinstance(exc, PluginError):
        return exc.detail  # the plugin is named by whoever reports the failure
    return f"{type(exc).__name__}: {exc}"


def _version(dist: str | None) -> str | None:
    if dist is None:
        return None
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


def collect(plugins: PluginSet) -> Registry:
    """Call every registration hook, one plugin at a time so a failing plugin is isolated."""
    registry = Registry()
    for name in _plugin_names(plugins):
        try:
            _collect_from(plugins.pm, name, registry)
        except DuplicateRegistrationError:
            raise
        except Exception as exc:  # noqa: BLE001 - recorded against the plugin, others go on
            plugins.fail(name, f"registration failed: {_describe(exc)}")
    for kind in registry.components:
        registry.components[kind] = dict(sorted(registry.components[kind].items()))
    return registry


def _plugin_names(plugins: PluginSet) -> list[str]:
    return [p.name for p in plugins.plugins if p.error is None]


def _own_hooks(pm: pluggy.PluginManager, plugin_name: str) -> Callable[[str], Any]:
    """A hook caller by hook name that calls one plugin's implementation only."""
    plugin = pm.get_plugin(plugin_name)
    others = [p for p in pm.get_plugins() if p is not plugin]
    return functools.partial(pm.subset_hook_caller, remove_plugins=others)


def _collect_from(pm: pluggy.PluginManager, plugin_name: str, registry: Registry) -> None:
    own_hook = _own_hooks(pm, plugin_name)
    staged = Registry()
    for kind, hook in COMPONENT_HOOKS.items():
        own_hook(hook)(register=_registrar(kind, plugin_name, staged, registry))
    own_hook("register_migrations")(register=staged.migrations.append)
    for kind, found in staged.components.items():
        registry.components.setdefault(kind, {}).update(found)
    registry.origins.update(staged.origins)
    registry.migrations += staged.migrations


def _registrar(kind: str, plugin_name: str, staged: Registry, registry: Registry) -> Callable[[Any], None]:
    def register(component: Any) -> None:
        name = getattr(component, "name", None)
        if not isinstance(name, str) or not name:
            raise PluginError(plugin_name, f"registered a {kind} without a name: {component!r:.80}")
        problems = component_problems(kind, component)
        if problems:
            raise PluginError(plugin_name, "; ".join(problems))
        if kind in NAMESPACED_KINDS:
            name = f"{plugin_name}:{name}"
        for reg in (registry, staged):
            if (kind, name) in reg.origins:
                if kind in SHARED_KINDS and reg.components[kind][name] == component:
                    return
                raise DuplicateRegistrationError(kind, name, reg.origins[(kind, name)], plugin_name)
        staged.components.setdefault(kind, {})[name] = component
        staged.origins[(kind, name)] = plugin_name

    return register


def apply_commands(plugins: PluginSet, cli: Any) -> None:
    """Let every plugin add CLI commands; a failing plugin is reported, not fatal."""
    for name in _plugin_names(plugins):
        try:
            _own_hooks(plugins.pm, name)("register_commands")(cli=cli)
        except Exception as exc:  # noqa: BLE001
            plugins.fail(name, f"register_commands failed: {_describe(exc)}")


def load_profile(directory: str | Path | None) -> Profile:
    """The profile in `directory` over bench's own (read by bench-profiles' reader), or bench's own for None."""
    if directory is None:
        return bench_profile()
    entry = installed_entry_points().get(PROFILES_PLUGIN)
    if entry is None:
        raise ConfigError(
            f"--profile {directory}: reading a profile directory comes from the plugin bench-profiles, which is not installed "
            "(pip install bench-profiles); without --profile, runs use bench's own profile"
        )
    return _profile_reader(entry).read(Path(directory), bench_profile())


@functools.lru_cache(maxsize=4)
def _profile_reader(entry: md.EntryPoint) -> ProfileReader:
    """The reader the plugin registers, loaded once per installed entry point (a run reads its profile several times)."""
    # Only that plugin, without the built-ins: `load_profile` outside a run stays as quick as reading the files.
    plugins = PluginSet(pluggy.PluginManager(GROUP))
    plugins.pm.add_hookspecs(hookspecs)
    _load_entry_point(plugins, entry)
    registry = collect(plugins)
    failed = next((p for p in plugins.failures() if p.name == entry.name), None)
    if failed is not None:
        raise PluginError(entry.name, f"{failed.error} (it reads profile directories; `bench plugins` says more)")
    return registry.get("profile reader", entry.name)
