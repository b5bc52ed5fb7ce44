"""The table format, `bench report`'s and `bench run`'s default: pinned line by line on a hand-built report holding every
part, its header lines, then end to end through `bench` on the practice domain."""

from __future__ import annotations

import json
from collections.abc import Callable

from bench_report.components import TableFormat
from bench_report.text import agent_label, header_lines
from click.testing import Result
from hand_built_report import FRAGILE, full_report

from bench_kernel import ReportContext

FULL_REPORT_TABLE = [
    "Run r (complete): 4 agent conversations scored (2 tasks x 2 trials), 0 infrastructure errors excluded, 2 baseline conversations",
    "domain toy (tasks.json), agent oracle, user scripted, judge none, models none, mode default, channel None, 2 tasks, 2 trials, seed None",
    "profile: None",
    "plugins: unknown",
    "",
    "metric                                  value  95% low  95% high  n                         errors",
    "--------------------------------------  -----  -------  --------  ------------------------  ------",
    "average_reward                          0.500  0.500    0.500     4 conversations           0",
    "pass^1                                  0.500  0.500    0.500     2 tasks                   0",
    "pass@1                                  1.000  1.000    1.000     2 tasks                   0",
    "component.DB                            0.500  0.500    0.500     4 conversations           0",
    "demo:fragile                            1.000  1.000    1.000     2 conversations           2",
    "cost_usd.agent.agent (reported).acme-1  -      -        -         3 calls                   0",
    "baseline_pass_rate                      0.000  -        -         2 baseline conversations  0",
    "",
    "Errors and tasks whose gold replay fails",
    f"  metric demo:fragile failed on 2 conversations: {FRAGILE}",
    "  task b: gold replay fails (rewards not meaningful: run with --allow-broken-tasks): env assertion fails",
    "",
    "Terminations of agent conversations: user_stop=4",
    "Flips: 1 of 2 tasks mixed across trials (mean flip rate 0.500)",
    "",
    "Count",
    "  4 scored",
    "",
    "arm    role              model   calls  cached  errors  prompt tokens  completion tokens  cost USD",
    "-----  ----------------  ------  -----  ------  ------  -------------  -----------------  --------",
    "agent  agent (reported)  acme-1  3      0       0       150            15                 unknown",
    "",
    "By persona",
    "persona  conversations  tasks  average_reward  pass^1  demo:fragile",
    "-------  -------------  -----  --------------  ------  ------------",
    "EASY_1   2              1      1.000           1.000   1.000",
    "HARD_1   2              1      0.000           0.000   -",
    "",
    "task  trials  successes  mean reward  flips  P(flip)  baseline passes",
    "----  ------  ---------  -----------  -----  -------  ---------------",
    "a     2       2          1.000        0      -        False",
    "b     2       0          0.000        0      -        False",
    "",
    "Turns (demo)",
    "Two paragraphs.",
    "",
    "Of text.",
    "task  turns",
    "----  -----",
    "a     3",
    "b     0.500",
    "note: a note",
    "",
    "broken (cracked)",
    "section broken of plugin cracked failed: KeyError: 'no column'",
    "",
    "Prose (demo)",
    "Only words.",
]
"""The table format's text of `full_report()`, trailing spaces aside (each table row is padded to its widest cell)."""


def table(section: str | None = None) -> str:
    return TableFormat().render(full_report(), ReportContext(section=section))


# --------------------------------------------------------------------------- on a hand-built report


def test_the_table_format_prints_every_part_of_the_report_in_order() -> None:
    text = table()
    assert text.endswith("\n") and [line.rstrip() for line in text.splitlines()] == FULL_REPORT_TABLE
    rows = text.splitlines()[5:14]  # a table's rows are padded to one width: its columns line up
    assert len({len(row) for row in rows}) == 1


def test_the_table_format_prints_a_section_alone_titled_by_its_name_when_untitled() -> None:
    turns = FULL_REPORT_TABLE[FULL_REPORT_TABLE.index("Turns (demo)") : FULL_REPORT_TABLE.index("note: a note") + 1]
    assert [line.rstrip() for line in table("turns").splitlines()] == turns  # every paragraph, none of the rest
    assert table("broken") == "broken (cracked)\nsection broken of plugin cracked failed: KeyError: 'no column'\n"
    assert table("prose") == "Prose (demo)\nOnly words.\n"


def test_header_lines_say_what_was_measured() -> None:
    header = {
        "domain": "toy",
        "data": "the plugin's packaged suite",
        "split": "test",
        "agent": "oracle",
        "user": "scripted",
        "judge": None,
        "models": {"user": "openai/m1"},
        "mode": "default",
        "channel": "identity",
        "trials": 1,
        "seed": 7,
        "profile": "bench (sha256 0123456789ab)",
        "tasks": 4,
        "plugins": {"bench-kernel": "0.1.0", "toy": None},
        "retrieval": "bm25 (top_k=3)",
        "duplex": "ticks of 200 ms, at most 600 s, speech complexity regular",
        "rescored_from": "first",
        "concurrency": 8,
        "in_flight": [{"endpoint": "http://127.0.0.1:9/v1", "roles": ["user"], "limit": 4, "source": "--max-in-flight"}],
    }
    assert header_lines(header) == [
        "domain toy (the plugin's packaged suite, split test), agent oracle, user scripted, judge none, models user=openai/m1, "
        "mode default, channel identity, 4 tasks, 1 trial, seed 7, retrieval bm25 (top_k=3)",
        "full duplex: ticks of 200 ms, at most 600 s, speech complexity regular",
        "rescored from run first: its conversations scored again, none played (bench rescore)",
        "profile: bench (sha256 0123456789ab)",
        "plugins: bench-kernel 0.1.0, toy (unknown version)",
        "in flight: 8 conversations; requests per endpoint: http://127.0.0.1:9/v1 (user): 4 (--max-in-flight)",
    ]
    assert header_lines({**header, "in_flight": []})[-1] == "in flight: 8 conversations; requests per endpoint: no model endpoint"
    assert not any(line.startswith("in flight") for line in header_lines({"agent": "oracle"}))  # runs stored before it was kept


def test_the_agent_label_names_its_fingerprint_and_the_models_it_reported() -> None:
    printed = {"acme-agents": "0.24.0", "factory": "mybot:make", "sha256": "abcdef" * 11}
    assert agent_label({"agent": "watched", "agent_fingerprint": printed}) == "watched (acme-agents 0.24.0, factory mybot:make, sha256 abcdefabcdef…)"
    assert agent_label({"agent": "watched", "agent_models": ["acme-1"]}) == "watched (reports model acme-1)"
    assert agent_label({"agent": "oracle"}) == "oracle"


# --------------------------------------------------------------------------- through bench


def test_the_table_is_the_default_of_bench_report_and_bench_run_and_agrees_with_the_json(bench: Callable[..., Result], runs: str) -> None:
    shown = {fmt: bench("report", "idle", "--db", runs, "--format", fmt) for fmt in ("json", "table")}
    assert all(r.exit_code == 0 and not r.stderr for r in shown.values()), {f: r.output for f, r in shown.items()}
    assert bench("report", "idle", "--db", runs).stdout == shown["table"].stdout
    report, lines = json.loads(shown["json"].stdout), shown["table"].stdout.splitlines()
    assert lines[0] == f"Run idle (complete): {report['counts']}"
    assert lines[1].startswith("domain practice (the plugin's packaged suite), agent do-nothing, user scripted, judge none")
    figures = {"average_reward": (report["average_reward"]["value"], "6 conversations")}
    figures |= {f"pass^{k}": (v["value"], "3 tasks") for k, v in report["pass_hat_k"].items()}
    figures |= {f"component.{k}": (v["value"], "6 conversations") for k, v in report["components"].items()}
    for metric, (value, counted) in figures.items():  # every figure of the json, its n saying what it counts
        assert any(line.split()[:2] == [metric, f"{value:.3f}"] and " ".join(line.split()).endswith(f"{counted} 0") for line in lines), metric
    assert "Failed checks (report)" in lines  # bench-report's section, after the tasks

    again = bench("run", "--plugin", "practice", "--agent", "do-nothing", "--run-id", "idle", "--trials", "2", "--db", runs, "--progress", "none")
    assert again.exit_code == 0 and again.stdout == shown["table"].stdout
