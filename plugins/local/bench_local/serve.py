"""The server child's entry: `python -m bench_local.serve ARGS` runs `python -m llama_cpp.server ARGS`, but

- tied to the life of the process that started it (Linux: the kernel kills it when that thread ends,
  even when the parent is SIGKILLed and its atexit guard never runs), and
- deaf to the environment: llama_cpp.server also reads every setting (API_KEY, MODEL, ...) from
  environment variables, and HOST and PORT there even beat the command line.
"""

from __future__ import annotations

import ctypes
import os
import runpy
import signal
import sys

PARENT_PID_VARIABLE = "BENCH_LOCAL_PARENT_PID"
PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Ask the kernel for SIGKILL when the parent ends; exit now if it already has."""
    parent = int(os.environ.pop(PARENT_PID_VARIABLE, "0") or 0)
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return  # not Linux: the parent's aclose() and atexit guard are all there is
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if parent and os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def drop_server_settings_from_environment() -> None:
    """Remove the variables llama_cpp.server would read its settings from, so only our command line counts."""
    from llama_cpp.server.settings import Settings

    names = {name.lower() for name in Settings.model_fields} | {"config_file"}
    for key in [k for k in os.environ if k.lower() in names]:
        del os.environ[key]


def main() -> None:
    """Run llama_cpp.server with this process's arguments."""
    die_with_parent()
    drop_server_settings_from_environment()
    sys.argv[0] = "llama_cpp.server"
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
