"""Store drills with real `bench` processes on the mock domain: several writers on one database, kill and resume.

    python benchmarks/store_drills.py writers [--writers 4] [--trials 100] [--readers 1]
    python benchmarks/store_drills.py kill-resume [--rounds 5] [--trials 200] [--signal KILL|INT|TERM] [--seed 13]

writers: N `bench run` processes (distinct run ids, M = 12 x trials + 12 conversations each) start together on one
fresh database while readers loop on `bench runs` and `bench report`; prints the processes that failed, "database is
locked" errors, missing, duplicated and half-written conversations (expected: all 0) and the aggregate rate.
kill-resume: each round starts a run, stops it with the signal once a seeded number of conversations are stored, then
resumes it with the same command; prints per round what was stored at the stop, the status `bench runs` showed,
and after the resume the lost, duplicated and half-written conversations and whether the rewards equal those of an
uninterrupted run (expected: 0, 0, 0, yes).
Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(sys.executable).parent / "bench"
MOCK_TASKS = 12


def env() -> dict[str, str]:
    """The caller's environment without BENCH_* settings."""
    return {k: v for k, v in os.environ.items() if not k.startswith("BENCH_")}


def run_args(db: Path, trials: int, *extra: str) -> list[str]:
    """A mock run into db."""
    return [str(BENCH), "run", "--plugin", "mock", "--db", str(db), "--trials", str(trials), "--format", "none", *extra]


def bench(args: list[str]) -> subprocess.CompletedProcess[str]:
    """`bench ARGS` to its end."""
    return subprocess.run([str(BENCH), *args], env=env(), capture_output=True, text=True, timeout=600)


def count(db: Path, sql: str, params: tuple[object, ...] = ()) -> int:
    """One number from the database (0 while it cannot be read yet)."""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as conn:
            return int(conn.execute(sql, params).fetchone()[0] or 0)
    except sqlite3.OperationalError:
        return 0


def integrity(db: Path) -> dict[str, int]:
    """Duplicated and half-written conversations across the database."""
    return {
        "duplicated": count(db, "select count(*) from (select 1 from conversations group by run_id, arm, task_id, trial having count(*) > 1)"),
        "half_written": count(
            db,
            """select count(*) from conversations c
                                     where c.num_messages != (select count(*) from messages m where m.conversation_id = c.id)
                                        or not exists (select 1 from metric_values v where v.conversation_id = c.id)""",
        ),
    }


def writers(n: int, trials: int, readers: int, work: Path) -> None:
    """N writers on one fresh database, readers alongside."""
    db, expected = work / "writers.db", MOCK_TASKS * trials + MOCK_TASKS
    started = time.perf_counter()
    procs = [
        subprocess.Popen(
            run_args(db, trials, "--run-id", f"writer-{i}", "--concurrency", "8"),
            env=env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(n)
    ]
    reads = read_failures = 0
    while any(p.poll() is None for p in procs):
        for _ in range(readers):
            for args in (["runs", "--db", str(db)], ["report", "writer-0", "--db", str(db), "--format", "json"]):
                if not db.exists():
                    continue
                done = bench(args)
                reads += 1
                # A report asked before writer-0 has begun its run is a clean "no run" error, not a failure of the store.
                read_failures += done.returncode != 0 and "no run 'writer-0'" not in done.stderr
        time.sleep(0.05)
    wall = time.perf_counter() - started
    errors = [p.stderr.read() if p.stderr else "" for p in procs]
    stored = [count(db, "select count(*) from conversations where run_id = ?", (f"writer-{i}",)) for i in range(n)]
    print(f"writers: {n} processes x {expected} conversations on one fresh database, {readers} reader loop(s)")
    print(
        f"  failed processes: {sum(p.returncode != 0 for p in procs)}  'database is locked': "
        f"{sum('database is locked' in e for e in errors)}  reader calls: {reads} ({read_failures} failed)"
    )
    print(f"  missing: {sum(expected - s for s in stored)}  {', '.join(f'{k}: {v}' for k, v in integrity(db).items())}")
    print(f"  {sum(stored)} conversations in {wall:.1f}s wall ({sum(stored) / wall:.0f}/s across processes)")
    for i, (proc, err) in enumerate(zip(procs, errors, strict=True)):
        if proc.returncode != 0:
            print(f"  writer-{i} exit {proc.returncode}: {err.strip().splitlines()[-1] if err.strip() else ''}")


def rewards(db: Path) -> list[tuple[object, ...]]:
    """(arm, task, trial, reward) of every conversation, in order."""
    with sqlite3.connect(db) as conn:
        return conn.execute("select arm, task_id, trial, reward from conversations order by arm, task_id, trial").fetchall()


def kill_resume(rounds: int, trials: int, signame: str, seed: int, work: Path) -> None:
    """Stop a run with a signal at a seeded point, resume it, compare with an uninterrupted run."""
    sig = signal.Signals[f"SIG{signame}"]
    expected = MOCK_TASKS * trials + MOCK_TASKS
    clean_db = work / "clean.db"
    subprocess.run(run_args(clean_db, trials), env=env(), capture_output=True, check=True)
    clean = rewards(clean_db)
    rng = random.Random(seed)
    print(f"kill-resume: {rounds} rounds, SIG{signame} during a run of {expected} conversations, then resume")
    totals = {"lost": 0, "duplicated": 0, "half_written": 0, "differ": 0}
    for r in range(rounds):
        db, at_least = work / f"round-{r}.db", rng.randint(1, expected * 3 // 4)
        proc = subprocess.Popen(run_args(db, trials, "--concurrency", "4"), env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while proc.poll() is None and count(db, "select count(*) from conversations") < at_least:
            time.sleep(0.002)
        proc.send_signal(sig)
        code = proc.wait()
        at_stop = count(db, "select count(*) from conversations")
        listed = bench(["runs", "--db", str(db)]).stdout.split()
        shown = listed[1] if len(listed) > 1 else "-"
        resumed = subprocess.run(run_args(db, trials), env=env(), capture_output=True, text=True)
        found = {"lost": expected - count(db, "select count(*) from conversations"), **integrity(db), "differ": int(rewards(db) != clean)}
        for key, value in found.items():
            totals[key] += value
        print(
            f"  round {r}: stopped at {at_stop} stored (asked {at_least}), exit {code}, `bench runs` said {shown}; "
            f"resume exit {resumed.returncode}: " + ", ".join(f"{k} {v}" for k, v in found.items())
        )
    print("  total: " + ", ".join(f"{k} {v}" for k, v in totals.items()))


def main() -> None:
    """Parse arguments and run one drill."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="drill", required=True)
    w = sub.add_parser("writers")
    w.add_argument("--writers", type=int, default=4)
    w.add_argument("--trials", type=int, default=100)
    w.add_argument("--readers", type=int, default=1)
    k = sub.add_parser("kill-resume")
    k.add_argument("--rounds", type=int, default=5)
    k.add_argument("--trials", type=int, default=200)
    k.add_argument("--signal", choices=["KILL", "INT", "TERM"], default="KILL")
    k.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.drill == "writers":
            writers(args.writers, args.trials, args.readers, Path(tmp))
        else:
            kill_resume(args.rounds, args.trials, args.signal, args.seed, Path(tmp))


if __name__ == "__main__":
    main()
