"""Task audits (`bench audit`): per task a ceiling, floors and flags that say whether its reward can be trusted.

`flags` holds the static flags (read from the task and the data alone) and the gold traces they need; `auditing`
plays the floors and the oracle through the run's own conversation code and caches each task's audit in the store;
`card` is the validity card of every run's report; `render` prints an audit; `runs` is what runs take from audits
(`--exclude-flagged`, the static flags a run records). The attribution rules ask `static_flags(task, data)` or
`cached_flags(store, domain, task)` which flags a task has.
"""

from __future__ import annotations

from .cache import cached_flags
from .flags import FLAGS, STATIC_FLAGS, static_flags

__all__ = ["FLAGS", "STATIC_FLAGS", "cached_flags", "static_flags"]
