"""The markdown and CSV formats: pinned on a hand-built report holding every part, then end to end through `bench`."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable

import pytest
from bench_report.components import CsvFormat, MarkdownFormat
from bench_report.html import SECTIONS, render_html
from bench_report.text import TextStyle, render_text
from click.testing import Result
from hand_built_report import FRAGILE, full_report

from bench_kernel import ConfigError, PluginError, Report, ReportContext


def markdown(report: Report, section: str | None = None) -> str:
    return MarkdownFormat().render(report, ReportContext(section=section))


def as_csv(report: Report, section: str | None = None) -> str:
    return CsvFormat().render(report, ReportContext(section=section))


# --------------------------------------------------------------------------- markdown


def test_markdown_is_the_table_formats_text_with_markdowns_marks() -> None:
    report = full_report()
    text, marked = render_text(report, TextStyle()).splitlines(), markdown(report).splitlines()
    assert len(text) == len(marked)
    for plain, line in zip(text, marked, strict=True):
        if line.startswith("|"):  # a pipe table row stands for a padded row (or the rule under its headers)
            assert line.strip("| ").split(" | ") == re.split(r" {2,}", plain.rstrip()) or set(plain) <= {"-", " "}, (plain, line)
        else:
            assert line in (plain, f"## {plain}", f"- {plain.removeprefix('  ')}"), (plain, line)
    assert marked[0] == f"## Run r (complete): {report.counts}"
    assert "| demo:fragile | 1.000 | 1.000 | 1.000 | 2 conversations | 2 |" in marked
    assert f"- metric demo:fragile failed on 2 conversations: {FRAGILE}" in marked
    assert "- task b: gold replay fails (rewards not meaningful: run with --allow-broken-tasks): env assertion fails" in marked
    assert "## Count\n- 4 scored\n" in markdown(report) and "## By persona" in marked
    assert "| EASY_1 | 2 | 1 | 1.000 | 1.000 | 1.000 |" in marked and "| HARD_1 | 2 | 1 | 0.000 | 0.000 | - |" in marked
    assert "| agent | agent (reported) | acme-1 | 3 | 0 | 0 | 150 | 15 | unknown |" in marked
    assert "section broken of plugin cracked failed: KeyError: 'no column'" in marked


def test_markdown_prints_a_section_alone_with_every_paragraph() -> None:
    turns = "## Turns (demo)\nTwo paragraphs.\n\nOf text.\n| task | turns |\n|---|---|\n| a | 3 |\n| b | 0.500 |\nnote: a note\n"
    assert markdown(full_report(), "turns") == turns
    assert turns in markdown(full_report())
    with pytest.raises(ConfigError, match=r"no report section 'nope' in run r \(sections: turns, broken, prose\)"):
        markdown(full_report(), "nope")


# --------------------------------------------------------------------------- csv


def test_csv_is_one_table_of_every_figure_card_breakdown_and_problem() -> None:
    rows = list(csv.DictReader(io.StringIO(as_csv(full_report()))))
    assert as_csv(full_report()).splitlines()[0] == "metric,value,low,high,n,errors,n_of,error"
    assert [r["metric"] for r in rows] == [
        "average_reward",
        "pass^1",
        "pass@1",
        "component.DB",
        "demo:fragile",
        "cost_usd.agent.agent (reported).acme-1",
        "baseline_pass_rate",
        "count.n",
        "average_reward[persona=EASY_1]",
        "pass^1[persona=EASY_1]",
        "demo:fragile[persona=EASY_1]",
        "average_reward[persona=HARD_1]",
        "pass^1[persona=HARD_1]",
        "demo:fragile[persona=HARD_1]",
        "section:broken",
        "gold_replay_failed[task=b]",
    ]
    by = {r["metric"]: r for r in rows}
    assert by["demo:fragile"] == {
        "metric": "demo:fragile",
        "value": "1.0",
        "low": "1.0",
        "high": "1.0",
        "n": "2",
        "errors": "2",
        "n_of": "conversations",
        "error": f"{FRAGILE} (x2)",
    }
    assert (by["cost_usd.agent.agent (reported).acme-1"]["value"], by["cost_usd.agent.agent (reported).acme-1"]["n_of"]) == ("", "calls")
    assert (by["pass^1[persona=EASY_1]"]["n"], by["pass^1[persona=EASY_1]"]["n_of"]) == ("1", "tasks")
    assert (by["demo:fragile[persona=HARD_1]"]["value"], by["demo:fragile[persona=HARD_1]"]["errors"]) == ("", "2")
    assert (by["count.n"]["value"], by["count.n"]["n_of"]) == ("4", "conversations")
    assert (by["section:broken"]["n_of"], by["section:broken"]["error"]) == ("section of plugin cracked", "KeyError: 'no column'")
    assert by["gold_replay_failed[task=b]"]["error"] == "env assertion fails (rewards not meaningful: run with --allow-broken-tasks)"


def test_csv_prints_a_sections_tables_and_refuses_what_has_none() -> None:
    assert as_csv(full_report(), "turns") == "task,turns\na,3\nb,0.5\n"
    with pytest.raises(PluginError, match=r"plugin 'cracked'.*report section 'broken' failed: KeyError"):
        as_csv(full_report(), "broken")
    with pytest.raises(ConfigError, match="report section 'prose' has no tables to print as CSV"):
        as_csv(full_report(), "prose")


# --------------------------------------------------------------------------- html


def test_html_shows_cards_after_flips_problems_and_failed_sections() -> None:
    page = render_html(full_report())
    assert page.index('<section id="flips">') < page.index('<section id="count"><h2>Count of conversations</h2>') < page.index('id="costs"')
    assert all(f'<section id="{s}">' in page for s in SECTIONS)
    assert f'<p class="error">metric demo:fragile failed on 2 conversations: {FRAGILE}</p>' in page
    assert "section broken failed: KeyError: &#x27;no column&#x27;" in page and "<p>No plots.</p>" in page


# --------------------------------------------------------------------------- through bench


def test_every_format_of_a_stored_run_agrees_with_its_json(bench: Callable[..., Result], runs: str) -> None:
    out = {fmt: bench("report", "idle", "--db", runs, "--format", fmt, "--by", "domain") for fmt in ("json", "table", "markdown", "csv")}
    assert all(r.exit_code == 0 for r in out.values()), {f: r.output for f, r in out.items()}
    report = json.loads(out["json"].stdout)
    rows = {r["metric"]: r for r in csv.DictReader(io.StringIO(out["csv"].stdout))}
    assert float(rows["average_reward"]["value"]) == report["average_reward"]["value"] == 0.0
    assert {k: float(rows[f"pass^{k}"]["value"]) for k in report["pass_hat_k"]} == {k: v["value"] for k, v in report["pass_hat_k"].items()}
    assert rows["average_reward[domain=practice]"]["n"] == "6" and rows["pass^1[domain=practice]"]["n_of"] == "tasks"
    table, marked = out["table"].stdout.splitlines(), out["markdown"].stdout.splitlines()
    assert marked[0] == f"## {table[0]}" and marked[1:5] == table[1:5]  # the header says the same
    assert "## Failed checks (report)" in marked
    checks = bench("report", "idle", "--db", runs, "--section", "failed-checks", "--format", "csv").stdout
    assert checks.splitlines()[0] == "task,trial,component,in basis,check,detail,conversation_id"


def test_a_run_prints_its_report_in_a_plugins_format_and_refuses_a_misspelt_one_first(bench: Callable[..., Result], runs: str) -> None:
    again = bench("run", "--plugin", "practice", "--run-id", "good", "--trials", "2", "--db", runs, "--format", "markdown", "--progress", "none")
    assert again.exit_code == 0, again.output
    assert again.stdout == bench("report", "good", "--db", runs, "--format", "markdown").stdout
    assert again.stdout.startswith("## Run good (complete)")
    refused = bench("run", "--plugin", "practice", "--run-id", "other", "--db", runs, "--format", "markdwn")
    assert refused.exit_code == 1 and "Error: no report format 'markdwn' (did you mean 'markdown'?)" in refused.stderr
    assert "other" not in bench("runs", "--db", runs).stdout  # refused before anything was played
