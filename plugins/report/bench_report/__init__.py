"""bench-report: a run's report as text (the default table, markdown), csv and html, its charts, and `bench compare`.

It registers the report formats table (`bench report`'s and `bench run`'s default), markdown, csv and html
(`--format`), the report's "Failed checks" section, draws the report's charts (`bench report --plots DIR`, inline in
the HTML; matplotlib is the `plots` extra) and adds `bench compare`. It loads with every run and report whatever
`--plugin` names (entry-point group `bench.always`); without it the kernel prints its json. Importing it imports none
of the work's modules (each hook imports what it registers): `bench --help` stays quick.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import click

import bench_kernel

if TYPE_CHECKING:
    from bench_kernel import ReportFormat, ReportSection


@bench_kernel.hookimpl
def register_report_formats(register: Callable[[ReportFormat], None]) -> None:
    """table, markdown, csv and html."""
    from .formats import CsvFormat, HtmlFormat, MarkdownFormat
    from .text import TableFormat

    for report_format in (TableFormat(), MarkdownFormat(), CsvFormat(), HtmlFormat()):
        register(report_format)


# trylast: the failed checks come after every other plugin's sections, as when the kernel registered them.
@bench_kernel.hookimpl(trylast=True)
def register_report_sections(register: Callable[[ReportSection], None]) -> None:
    """The failed checks of the run's failed conversations, with what was expected and found."""
    from .failures import FailedChecks

    register(FailedChecks())


@bench_kernel.hookimpl
def register_commands(cli: click.Group) -> None:
    """`bench compare`."""
    from .commands import compare_command

    cli.add_command(compare_command)
