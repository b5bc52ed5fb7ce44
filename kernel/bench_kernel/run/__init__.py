"""Runs: configuration, planning, concurrent execution and resumption."""
