"""The kernel's conformance kit: registration, tasks, tool schemas, gold replays, doing nothing, shared records, a run."""

from bench_kernel.testing import DomainConformance


class TestConformance(DomainConformance):
    plugin = "library"
