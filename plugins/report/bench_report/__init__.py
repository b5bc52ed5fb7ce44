"""bench-report: a stored run's report, its figures computed from the store, as text (the default table, markdown),
json, csv and html, its charts, and `bench compare`.

It registers the report builder (`bench_kernel.build_report` calls it), the report formats table (`bench report`'s and
`bench run`'s default), json, markdown, csv and html (`--format`), the report's "Failed checks" section, draws the
report's charts (`bench report --plots DIR`, inline in the HTML; matplotlib is the `plots` extra) and adds `bench
compare`. It loads with every run and report whatever `--plugin` names (entry-point group `bench.always`); without it
the kernel prints a short summary. Importing it imports none of the work's modules (each hook imports what it
registers): `bench --help` stays quick.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import click

import bench_kernel

if TYPE_CHECKING:
    from bench_kernel import ReportBuilder, ReportFormat, ReportSection


@bench_kernel.hookimpl
def register_report_builders(register: Callable[[ReportBuilder], None]) -> None:
    """A stored run's report, every figure computed from the store."""
    from .components import StoredReport

    register(StoredReport())


@bench_kernel.hookimpl
def register_report_formats(register: Callable[[ReportFormat], None]) -> None:
    """table, json, markdown, csv and html."""
    from .components import CsvFormat, HtmlFormat, JsonFormat, MarkdownFormat, TableFormat

    for report_format in (TableFormat(), JsonFormat(), MarkdownFormat(), CsvFormat(), HtmlFormat()):
        register(report_format)


# trylast: the failed checks come after every other plugin's sections, as when the kernel registered them.
@bench_kernel.hookimpl(trylast=True)
def register_report_sections(register: Callable[[ReportSection], None]) -> None:
    """The failed checks of the run's failed conversations, with what was expected and found."""
    from .components import FailedChecks

    register(FailedChecks())


@bench_kernel.hookimpl
def register_commands(cli: click.Group) -> None:
    """`bench compare`."""
    from .commands import compare_command

    cli.add_command(compare_command)
