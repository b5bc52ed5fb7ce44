"""`bench/Agent-v0` and `bench/User-v0` in gymnasium's registry, without importing gymnasium when bench loads the plugin.

gymnasium imports numpy (about 150 ms), and bench imports every installed plugin on each command. So importing
bench_gym registers the environments at once when gymnasium is already imported, and otherwise right after
gymnasium's own import, by whoever makes it (the kernel configures structlog the same way, bench_kernel.logs).
"""

from __future__ import annotations

from bench_kernel import after_import

AGENT_ENV_ID = "bench/Agent-v0"
USER_ENV_ID = "bench/User-v0"


def register_environments() -> None:
    """Register both environments with gymnasium (once; a second call changes nothing)."""
    import gymnasium

    for env_id, entry in ((AGENT_ENV_ID, "AgentEnv"), (USER_ENV_ID, "UserEnv")):
        if env_id not in gymnasium.registry:
            gymnasium.register(
                id=env_id, entry_point=f"bench_gym.envs:{entry}", vector_entry_point=f"bench_gym.vector:{entry.replace('Env', 'VectorEnv')}"
            )


def register_when_gymnasium_loads() -> None:
    """Register now if gymnasium is imported, else as soon as it is."""
    after_import("gymnasium", register_environments)
