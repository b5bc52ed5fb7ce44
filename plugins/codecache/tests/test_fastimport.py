"""Start-up: with bench-codecache the store loads sqlite_utils without numpy, and numpy stays importable afterwards."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest
from bench_codecache.fastimport import without_unused_modules


def test_the_store_loads_sqlite_utils_without_numpy_with_the_accelerator_only_and_numpy_still_imports_after() -> None:
    pytest.importorskip("numpy", reason="numpy is not installed here: nothing to keep out")
    check = "from bench_kernel import Store; loaded = 'numpy' in sys.modules; import numpy; sys.exit(10 + loaded)"
    accelerated = subprocess.run([sys.executable, "-c", f"import sys; {check}"], check=False)
    plain = subprocess.run([sys.executable, "-c", f"import sys; sys.modules['bench_codecache'] = None; {check}"], check=False)
    assert (accelerated.returncode, plain.returncode) == (10, 11)  # without it, sqlite_utils loads numpy as it always did


def test_a_module_hidden_in_the_block_cannot_be_imported_there_and_an_imported_one_is_left_alone() -> None:
    with without_unused_modules("bench_never_such_module", "sys"):
        with pytest.raises(ImportError):
            import bench_never_such_module  # noqa: F401
        assert sys.modules["sys"] is sys
    assert "bench_never_such_module" not in sys.modules


def test_sqlite_utils_patterns_compile_on_first_use_and_match_as_compiled() -> None:
    import re

    import sqlite_utils.db
    from bench_codecache.fastimport import LazyPattern, lazy_patterns

    from bench_kernel import Store  # noqa: F401 - imports sqlite_utils as the store does

    pattern = sqlite_utils.db._virtual_table_using_re
    schema = "CREATE VIRTUAL TABLE [docs_fts] USING FTS5 (title, content='docs')"
    if isinstance(pattern, LazyPattern):  # (another test may have imported sqlite_utils first, the usual way)
        assert pattern._compiled is None or pattern._compiled.pattern == pattern._args[0]
    assert pattern.match(schema).group("squarequoted_table", "using") == ("docs_fts", "FTS5")
    assert pattern.match("CREATE TABLE t (x)") is None
    with lazy_patterns(__name__):
        lazy = re.compile(r"a+b", re.I)
        other = sys.modules["re"].sub  # calls from elsewhere are untouched
    assert isinstance(lazy, LazyPattern) and lazy._compiled is None
    assert lazy.findall("AAb ab b") == ["AAb", "ab"] and isinstance(lazy._compiled, re.Pattern)
    assert other("x", "y", "x") == "y" and re.compile("q").pattern == "q"


def test_the_store_loads_sqlite_utils_without_running_dateutils_parser_and_its_recipes_still_parse_dates() -> None:
    check = (
        "from bench_kernel import Store; from sqlite_utils import recipes; ran = 'dateutil.parser._parser' in sys.modules; "
        "assert recipes.parsedate('5 March 2024') == '2024-03-05', 'recipes'; import dateutil.parser; "
        "assert dateutil.parser.isoparse('2024-03-05T10:00').hour == 10; sys.exit(10 + ran)"
    )
    accelerated = subprocess.run([sys.executable, "-c", f"import sys; {check}"], check=False)
    plain = subprocess.run([sys.executable, "-c", f"import sys; sys.modules['bench_codecache'] = None; {check}"], check=False)
    assert (accelerated.returncode, plain.returncode) == (10, 11)  # without it, sqlite_utils runs dateutil's parser at import


def test_a_lazy_module_runs_when_first_used_and_one_already_imported_is_left_alone() -> None:
    from bench_codecache.fastimport import LazyFinder, lazy_modules

    sys.modules.pop("tabnanny", None)
    with lazy_modules("tabnanny", "sys"):
        assert [f.names for f in sys.meta_path if isinstance(f, LazyFinder)] == [("tabnanny",)]
        import tabnanny
    assert not any(isinstance(f, LazyFinder) for f in sys.meta_path)
    assert type(tabnanny) is not types.ModuleType  # bound, not run (any attribute would run it)
    assert callable(tabnanny.check) and type(tabnanny) is types.ModuleType  # first use runs it
