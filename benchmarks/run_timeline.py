"""Where one `bench run` process's wall time goes, phase by phase, against airline_throughput.py's scripted server.

    python benchmarks/run_timeline.py [--data-dir DIR] [--concurrency 32] [--conversations 200] [--bench-python PY]

Runs one airline `bench run` (default options, `--format none`) through a wrapper that times the runner's steps
(start-up, `prepare`'s parts, the conversations, the end-of-run work, the store's close, the interpreter's exit) on the
driver's clock, which the server's request times share, and prints one line per mark and a summary (docs/throughput.md,
"The run's end, and await layers"). `--bench-python` runs another installation's bench (its venv's python: the wrapper
imports that bench's own modules). Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STEPS = [
    ("bench_kernel.run.runner", None, ["prepare", "load_domain", "open_store", "_execute_with_deadline", "finish_transforms", "participant_failure"]),
    ("bench_kernel.modelhub.hub", "ModelHub", ["check", "aclose"]),
    ("bench_kernel.store.store", "Store", ["begin_run", "close"]),
]
"""(module, class or None, functions): the steps the wrapper times."""


def child() -> None:
    """Inside the measured process: wrap the steps, mark each start and end in $TIMELINE_OUT, then run bench's CLI."""
    import functools
    import importlib
    import inspect

    out = open(os.environ["TIMELINE_OUT"], "w", buffering=1)  # noqa: SIM115 - open until the process ends

    def mark(name: str) -> None:
        out.write(f"{time.monotonic():.6f} {name}\n")

    mark("entry script")
    import bench_kernel.cli as cli

    mark("CLI imported")
    for module, cls, names in STEPS:
        owner = importlib.import_module(module)
        owner = getattr(owner, cls) if cls else owner
        for name in names:
            original = getattr(owner, name)
            label = f"{getattr(owner, '__name__', '')}.{name}"

            def wrapped(*args: object, _f: object = original, _l: str = label, **kwargs: object) -> object:
                mark(_l + " >")
                try:
                    return _f(*args, **kwargs)  # type: ignore[operator]
                finally:
                    mark(_l + " <")

            async def awaited(*args: object, _f: object = original, _l: str = label, **kwargs: object) -> object:
                mark(_l + " >")
                try:
                    return await _f(*args, **kwargs)  # type: ignore[operator]
                finally:
                    mark(_l + " <")

            setattr(owner, name, functools.wraps(original)(awaited if inspect.iscoroutinefunction(original) else wrapped))
    sys.argv[0] = "bench"
    try:
        cli.main()
    finally:
        mark("CLI returned")


def main() -> None:
    """Serve, run one measured process, print its marks with the server's first and last requests."""
    if sys.argv[1:2] == ["--child"]:
        del sys.argv[1]
        child()
        return
    sys.path.insert(0, str(Path(__file__).parent))
    import airline_throughput as at

    from bench_kernel.testing import FakeOpenAIServer

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=os.environ.get("BENCH_TAU2_DATA_DIR") or None)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--latency-s", type=float, default=0.2)
    parser.add_argument("--bench-python", default=sys.executable, help="The python of the installation measured.")
    args = parser.parse_args()
    tasks, data_dir = at.load_tasks(args.data_dir)
    at.BENCH[:] = [args.bench_python, __file__, "--child"]
    at.DOMAIN[:] = ["--plugin", "airline"]
    with FakeOpenAIServer(at.AirlineScript(tasks), latency_s=args.latency_s, record=False) as server, tempfile.TemporaryDirectory() as tmp:
        db, out = Path(tmp) / "run.db", Path(tmp) / "marks.txt"
        argv = at.command(server.base_url, args.concurrency, math.ceil(args.conversations / len(tasks)), db, "default", data_dir)
        gc.freeze()  # the tasks the server holds, out of its collector (throughput.Launcher.run)
        started = time.monotonic()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "TIMELINE_OUT": str(out)})
        _, status, usage = os.wait4(proc.pid, 0)
        ended = time.monotonic()
        chats = [r.received_at for r in server.requests if r.path.endswith("/chat/completions")]
        done, lengths, reward = at.stored(db, tasks)
        marks = [(float(t), name) for t, name in (line.split(" ", 1) for line in out.read_text().splitlines())]
        marks += [(chats[0], "server: first chat request"), (chats[-1] + args.latency_s, "server: last reply due"), (ended, "process end")]
        for t, name in sorted(marks):
            print(f"{t - started:8.3f}  {name.strip()}")
        ideal = at.ideal_wall(lengths, args.concurrency, args.latency_s)
        summary = {"exit": status, "conversations": done, "reward": reward, "ideal_s": round(ideal, 2), "wall_s": round(ended - started, 3)}
        summary |= {"start_up_s": round(chats[0] - started, 3), "last_reply_to_end_s": round(ended - chats[-1] - args.latency_s, 3)}
        print(json.dumps(summary | {"cpu_s": round(usage.ru_utime + usage.ru_stime, 3)}))


if __name__ == "__main__":
    main()
