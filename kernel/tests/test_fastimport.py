"""Start-up: the store loads sqlite_utils without numpy, and numpy stays importable afterwards."""

from __future__ import annotations

import subprocess
import sys

import pytest

from bench_kernel.store.fastimport import without_unused_modules


def test_importing_the_store_does_not_import_numpy_and_numpy_still_imports_after() -> None:
    pytest.importorskip("numpy", reason="numpy is not installed here: nothing to keep out")
    code = ("import sys, bench_kernel.store.store; loaded = 'numpy' in sys.modules; import numpy; "
            "sys.exit(1 if loaded else 0)")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_a_module_hidden_in_the_block_cannot_be_imported_there_and_an_imported_one_is_left_alone() -> None:
    with without_unused_modules("bench_never_such_module", "sys"):
        with pytest.raises(ImportError):
            import bench_never_such_module  # noqa: F401
        assert sys.modules["sys"] is sys
    assert "bench_never_such_module" not in sys.modules
