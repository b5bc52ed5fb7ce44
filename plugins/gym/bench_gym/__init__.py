"""bench-gym: Gymnasium environments on every bench domain, and `bench play`.

`import bench_gym` registers `bench/Agent-v0` (the policy plays the agent) and `bench/User-v0` (the policy plays the
user) with gymnasium: at once when gymnasium is imported, else when it is (registration.py), so bench loading the
plugin never imports gymnasium. The environments, the vector form and the example policies load on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

import click

from bench_kernel import hookimpl

from .registration import AGENT_ENV_ID, USER_ENV_ID, register_when_gymnasium_loads

if TYPE_CHECKING:
    from .envs import AgentEnv, UserEnv
    from .policies import DoNothingPolicy, GoldReplayPolicy, RandomPolicy, ScriptedCustomerPolicy
    from .vector import AgentVectorEnv, BenchVectorEnv, UserVectorEnv

_LAZY = {
    "AgentEnv": "envs",
    "UserEnv": "envs",
    "BenchVectorEnv": "vector",
    "AgentVectorEnv": "vector",
    "UserVectorEnv": "vector",
    "GoldReplayPolicy": "policies",
    "DoNothingPolicy": "policies",
    "RandomPolicy": "policies",
    "ScriptedCustomerPolicy": "policies",
}

__all__ = [
    "AGENT_ENV_ID",
    "USER_ENV_ID",
    "AgentEnv",
    "AgentVectorEnv",
    "BenchVectorEnv",
    "DoNothingPolicy",
    "GoldReplayPolicy",
    "RandomPolicy",
    "ScriptedCustomerPolicy",
    "UserEnv",
    "UserVectorEnv",
    "register_commands",
]

register_when_gymnasium_loads()


def __getattr__(name: str) -> Any:
    """The environments and policies, imported (with gymnasium) when first asked for."""
    if name not in _LAZY:
        raise AttributeError(f"module 'bench_gym' has no attribute {name!r}")
    return getattr(importlib.import_module(f"bench_gym.{_LAZY[name]}"), name)


@hookimpl
def register_commands(cli: click.Group) -> None:
    """`bench play`: a person plays one side of a conversation in the terminal."""
    from .play import play_command

    cli.add_command(play_command)
