"""The kernel's conformance kit, run against this plugin (registration, tasks, schemas, gold, do-nothing, shared records, a run)."""

from bench_kernel.testing import DomainConformance


class TestConformance(DomainConformance):
    plugin = "banking_knowledge"
