"""Tasks built when first used: a domain that makes its tasks (composes them) builds only those a run plays."""

from __future__ import annotations

import contextlib
import copy
import hashlib
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar, overload

from bench_kernel.errors import ConfigError
from bench_kernel.schema.tasks import Task
from bench_kernel.serialization import canonical_json, unstructure

CACHE_VARIABLE = "BENCH_CACHE_DIR"
"""The directory of bench's caches (default ~/.cache/bench); task-set hashes live in its `task-sets/`."""
T = TypeVar("T")


class LazyTasks(Sequence[Task]):
    """A domain's tasks known by id up front, each built on first access by `build(ids)` (docs/plugins.md)."""

    def __init__(self, ids: Sequence[str], build: Callable[[Sequence[str]], Iterable[Task]], *, inputs_key: str | None = None) -> None:
        self.ids, self.every_id, self.inputs_key = list(ids), list(ids), inputs_key
        self._build = build
        self._built: dict[str, Task] = {}

    @property
    def built(self) -> int:
        """How many tasks of the whole set have been built so far."""
        return len(self._built)

    def _get(self, ids: Sequence[str]) -> list[Task]:
        missing = [i for i in ids if i not in self._built]
        if missing:
            self._built.update((t.id, t) for t in self._build(missing))
            unbuilt = [i for i in missing if i not in self._built]
            if unbuilt:
                raise ConfigError(f"the domain's task builder made no task {unbuilt[0]!r}")
        return [self._built[i] for i in ids]

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, index: int) -> Task: ...
    @overload
    def __getitem__(self, index: slice) -> list[Task]: ...
    def __getitem__(self, index: int | slice) -> Task | list[Task]:
        return self._get(self.ids[index]) if isinstance(index, slice) else self._get([self.ids[index]])[0]

    def __iter__(self) -> Iterator[Task]:
        return iter(self._get(self.ids))

    def get(self, task_id: str) -> Task | None:
        """The task with this id, built if need be (None when this view has no such task)."""
        return self._get([task_id])[0] if task_id in self.ids else None

    def narrowed(self, ids: Iterable[str]) -> LazyTasks:
        """A view of the tasks among `ids`, in this view's order, sharing the builds and the whole set."""
        wanted, view = set(ids), copy.copy(self)
        view.ids = [i for i in self.ids if i in wanted]
        return view

    def every(self) -> list[Task]:
        """Every task of the whole set (not only this view's), built."""
        return self._get(self.every_id)


def task_ids(tasks: Sequence[Task]) -> list[str]:
    """The tasks' ids, without building lazy ones."""
    return list(tasks.ids) if isinstance(tasks, LazyTasks) else [t.id for t in tasks]


def task_set_hash(tasks: Sequence[Task], policy: str) -> str:
    """A hash of every task of the set and the policy; for lazy tasks with an inputs key, kept on disk by that key."""

    def compute() -> str:
        every = tasks.every() if isinstance(tasks, LazyTasks) else tasks
        return hashlib.sha256(canonical_json({"tasks": [unstructure(t) for t in every], "policy": policy}).encode()).hexdigest()

    key = tasks.inputs_key if isinstance(tasks, LazyTasks) else None
    if key is None:
        return compute()
    name = hashlib.sha256(canonical_json([key, policy]).encode()).hexdigest()
    return cached_text("task-sets", f"{name}.sha256", compute, _sha256_text)


def _sha256_text(text: str) -> str:
    if len(text) != 64:
        raise ValueError("not a sha256 digest")
    return text


def cached_text(cache: str, key: str, compute: Callable[[], str], read: Callable[[str], T]) -> T:
    """`read` of the text kept under `key` (a content hash, so never stale) in one of bench's caches, or of `compute`'s, kept there."""
    # `read` raises ValueError for a text it refuses (damaged): computed again and written anew.
    path = cache_dir(cache) / key
    with contextlib.suppress(OSError, ValueError):
        return read(path.read_text(encoding="utf-8"))
    text = compute()
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:  # a cache that cannot be written costs the next run the computation, nothing else
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink()
    return read(text)


def cache_dir(name: str) -> Path:
    """One of bench's caches (kept by content, so never stale): $BENCH_CACHE_DIR/NAME, by default ~/.cache/bench/NAME."""
    return Path(os.environ.get(CACHE_VARIABLE) or Path.home() / ".cache" / "bench") / name


def inputs_key(paths: Iterable[Path], *parts: str) -> str:
    """A content hash of files and strings (what decides a lazy task set), with the kernel's task schema's code."""
    digest = hashlib.sha256()
    schema = Path(__file__).parents[1]
    for path in [*paths, schema / "schema" / "tasks.py", schema / "serialization.py"]:
        digest.update(path.name.encode() + b"\0" + (path.read_bytes() if path.is_file() else b"-") + b"\0")
    for part in parts:
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()
