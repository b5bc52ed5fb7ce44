"""bench-compose: tasks composed from a domain's atomic subtasks, as tau2-bench's telecom generator makes them.

A library, not a plugin: it registers nothing (no `bench` entry point); a domain imports it and depends on it.
A domain declares its faults as `Subtask`s in selection sets; `compose` picks none or one per set, a `Composer` per
intent builds each task (ids from `composed_id`, personas cycled by `with_personas`) and `verify` checks one.
"""

from __future__ import annotations

from .compose import Composer, Composition, Subtask, compose, composed_id, verify, with_personas

__all__ = ["Composer", "Composition", "Subtask", "compose", "composed_id", "verify", "with_personas"]
