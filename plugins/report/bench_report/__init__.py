"""bench-report: a run's report beyond the kernel's table and json, and `bench compare`.

It registers the report formats markdown, csv and html (`bench report --format`, `bench run --format`), draws the
report's charts (`bench report --plots DIR`, inline in the HTML; matplotlib is the `plots` extra) and adds
`bench compare`. It loads with every run and report whatever `--plugin` names (entry-point group `bench.always`).
Importing it imports none of the work's modules (each hook imports what it registers): `bench --help` stays quick.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import click

import bench_kernel

if TYPE_CHECKING:
    from bench_kernel import ReportFormat


@bench_kernel.hookimpl
def register_report_formats(register: Callable[[ReportFormat], None]) -> None:
    """markdown, csv and html."""
    from .formats import CsvFormat, HtmlFormat, MarkdownFormat

    for report_format in (MarkdownFormat(), CsvFormat(), HtmlFormat()):
        register(report_format)


@bench_kernel.hookimpl
def register_commands(cli: click.Group) -> None:
    """`bench compare`."""
    from .commands import compare_command

    cli.add_command(compare_command)
