"""Charts of a run's full-duplex conversations: a latency histogram and one timeline strip per conversation (PNG).

matplotlib is imported only when a chart is drawn (this plugin's `plots` extra brings it). `bench interaction-plots RUN
--out DIR` writes them all; the report section gives the histogram and the first strips to `bench report --plots DIR`
and bench-report's HTML format.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench_kernel import ConfigError, RunView

from .timeline_metrics import Analysis, analyse, run_timelines, runs_of, speech_flags

INSTALL = "pip install 'bench-interaction[plots]'"
MARKS = {"no_response": "v", "no_yield": "x", "agent_interrupts_user": "^"}
"""Events drawn on a strip (the errors worth spotting), with their marker."""


def pyplot() -> Any:
    """matplotlib's pyplot on the headless Agg backend, or an error naming the extra to install."""
    try:
        import matplotlib
    except ImportError as exc:
        raise ConfigError(f"interaction plots need matplotlib: {INSTALL}") from exc
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def png(fig: Any) -> bytes:
    """A figure as PNG bytes."""
    out = io.BytesIO()
    fig.tight_layout()
    fig.savefig(out, format="png")
    return out.getvalue()


def latency_histogram(response: Sequence[float], yielding: Sequence[float]) -> bytes:
    """Response and yield latencies (seconds) of a run, one histogram each on shared bins."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=100)
    try:
        ax.set_title("Response and yield latency")
        present = {label: list(values) for label, values in (("response", response), ("yield", yielding)) if values}
        if present:
            ax.hist(list(present.values()), bins=20, label=list(present))
            ax.set(xlabel="seconds", ylabel="events")
            ax.legend(fontsize="small")
        else:
            ax.text(0.5, 0.5, "no response or yield event in this run", ha="center", va="center", transform=ax.transAxes)
            ax.set_axis_off()
        return png(fig)
    finally:
        plt.close(fig)


def timeline_strip(analysis: Analysis, agent_runs: Sequence[tuple[int, int]], user_runs: Sequence[tuple[int, int]], title: str) -> bytes:
    """Who spoke when (agent above, user below, in seconds), with missed responses, missed yields and agent interruptions."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(10, 2.2), dpi=100)
    try:
        tick_s = analysis.tick_ms / 1000
        for lane, runs, color in ((1, agent_runs, "tab:blue"), (0, user_runs, "tab:orange")):
            ax.broken_barh([(start * tick_s, (end - start) * tick_s) for start, end in runs], (lane - 0.35, 0.7), color=color)
        for kind, marker in MARKS.items():
            ticks = [e.tick * tick_s for e in analysis.events if e.type == kind]
            if ticks:
                ax.scatter(ticks, [0.5] * len(ticks), marker=marker, color="black", label=kind, zorder=3)
        ax.set(yticks=[0, 1], yticklabels=["user", "agent"], xlabel="seconds", xlim=(0, max(analysis.ticks * tick_s, tick_s)), title=title)
        if any(e.type in MARKS for e in analysis.events):
            ax.legend(fontsize="x-small", loc="upper right")
        return png(fig)
    finally:
        plt.close(fig)


def render(view: RunView) -> dict[str, bytes]:
    """Every chart of a run by file stem: `latency` and `timeline_<task>_<trial>` per full-duplex conversation."""
    found = run_timelines(view)
    analyses = [(row, timeline, analyse(timeline)) for row, timeline in found]
    events = [e for _, _, a in analyses for e in a.events]
    charts = {
        "latency": latency_histogram(
            [e.latency_s for e in events if e.type == "response" and e.latency_s is not None],
            [e.latency_s for e in events if e.type == "yield" and e.latency_s is not None],
        )
    }
    for row, timeline, analysis in analyses:
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"timeline_{row['task_id']}_{row['trial']}")
        agent = runs_of(speech_flags(timeline.agent_speech, analysis.ticks))
        user = runs_of(speech_flags(timeline.user_speech, analysis.ticks))
        charts[stem] = timeline_strip(analysis, agent, user, f"{row['task_id']} (trial {row['trial']})")
    return charts


def write_plots(view: RunView, directory: Path) -> list[Path]:
    """Write every chart as DIR/<stem>.png; the paths."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for stem, data in render(view).items():
        path = directory / f"{stem}.png"
        path.write_bytes(data)
        paths.append(path)
    return paths
