"""`bench/Agent-v0` and `bench/User-v0` in gymnasium's registry, without importing gymnasium when bench loads the plugin.

gymnasium imports numpy (about 150 ms), and bench imports every installed plugin on each command. So importing
bench_gym registers the environments at once when gymnasium is already imported, and otherwise right after
gymnasium's own import, by whoever makes it (the kernel configures structlog the same way, bench_kernel.logs).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

AGENT_ENV_ID = "bench/Agent-v0"
USER_ENV_ID = "bench/User-v0"


def register_environments() -> None:
    """Register both environments with gymnasium (once; a second call changes nothing)."""
    import gymnasium

    for env_id, entry in ((AGENT_ENV_ID, "AgentEnv"), (USER_ENV_ID, "UserEnv")):
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=f"bench_gym.envs:{entry}",
                               vector_entry_point=f"bench_gym.vector:{entry.replace('Env', 'VectorEnv')}")


def register_when_gymnasium_loads() -> None:
    """Register now if gymnasium is imported, else as soon as it is."""
    if "gymnasium" in sys.modules:
        register_environments()
    elif not any(isinstance(finder, _RegisterOnImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _RegisterOnImport())


class _RegisterOnImport:
    """A meta path finder that registers the environments right after gymnasium's package has run.

    It stays in sys.meta_path once used (removing a finder while another thread walks the list could make that
    thread skip one), answering None for every module.
    """

    def __init__(self) -> None:
        self.used = False

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> ModuleSpec | None:
        """gymnasium's own spec, its loader made to register after loading; None for any other module."""
        if fullname != "gymnasium" or self.used:
            return None
        self.used = True  # before find_spec below, which asks this finder again
        spec = importlib.util.find_spec(fullname)
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run_module = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run_module(module)
            register_environments()

        loader.exec_module = exec_module  # type: ignore[method-assign]  # this spec's own loader instance
        return spec
