"""Registration with gymnasium when bench_gym is imported (in either order), without bench ever importing gymnasium."""

from __future__ import annotations

import subprocess
import sys
import threading
from typing import Any

import pytest

pytest.importorskip("gymnasium", reason="gymnasium is not installed: pip install bench-gym (it depends on it)")


def run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize("order", ["import bench_gym\nimport gymnasium", "import gymnasium\nimport bench_gym"])
def test_importing_bench_gym_registers_both_environments(order: str) -> None:
    code = f"{order}\nprint(sorted(i for i in gymnasium.registry if i.startswith('bench/')))"
    assert run(code) == "['bench/Agent-v0', 'bench/User-v0']"


def test_bench_loading_the_plugin_imports_no_gymnasium() -> None:
    code = (
        "import sys\nfrom bench_kernel.cli import main\nsys.argv = ['bench', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('bench_gym' in sys.modules, 'gymnasium' in sys.modules)"
    )
    output = run(code)
    assert "  play " in output  # the command bench-gym registers
    assert output.splitlines()[-1] == "True False"


def test_the_environments_and_policies_load_on_first_use() -> None:
    code = (
        "import sys, bench_gym\nassert 'gymnasium' not in sys.modules\n"
        "assert bench_gym.AgentEnv.__module__ == 'bench_gym.envs'\nprint('gymnasium' in sys.modules)"
    )
    assert run(code) == "True"


def test_make_vec_uses_the_vector_entry_point_and_close_stops_the_loop(gymnasium: Any) -> None:
    from bench_gym import UserVectorEnv

    envs = gymnasium.make_vec("bench/User-v0", num_envs=2, domain="mock")
    env = gymnasium.make("bench/Agent-v0", domain="mock")
    assert isinstance(envs, UserVectorEnv) and envs.spec.id == "bench/User-v0"
    assert sum(t.name == "bench-gym" for t in threading.enumerate()) >= 2
    envs.close()
    env.close()
    env.close()  # twice is fine
    assert not any(t.name == "bench-gym" for t in threading.enumerate())


def test_a_run_refused_before_it_begins_leaves_no_loop_behind(gymnasium: Any) -> None:
    before = sum(t.name == "bench-gym" for t in threading.enumerate())
    with pytest.raises(Exception, match="unknown task ids"):
        gymnasium.make("bench/Agent-v0", domain="mock", task_id="nope")
    assert sum(t.name == "bench-gym" for t in threading.enumerate()) == before
