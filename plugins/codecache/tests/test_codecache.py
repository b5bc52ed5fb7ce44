"""The generated-code cache: the same code as compiling gives, across processes, hash seeds and future flags."""

from __future__ import annotations

import importlib.util
import marshal
import os
import subprocess
import sys
import types
from pathlib import Path

import attr
import pytest
from bench_codecache import CodeCache, future_flags
from bench_codecache import cache as codecache

ATTRS_HASH = "def __hash__(self):\n        return hash((\n                {salt},\n                self.x,\n            ))\n"


def _run(code: object, *names: str) -> dict[str, object]:
    namespace: dict[str, object] = {}
    exec(code, namespace)
    return {name: namespace[name] for name in names}


def test_a_source_compiles_once_and_is_read_back_by_the_next_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_CODE_CACHE", "write")
    path = tmp_path / "code.marshal"
    first = CodeCache(path)
    code = first.compile("def f(a):\n    return a * 2\n", "<gen f>", "exec", 0)
    assert first.compile("def f(a):\n    return a * 2\n", "<gen f>", "exec", 0) == code
    assert first.added == 1
    first.save()
    second = CodeCache(path)
    again = second.compile("def f(a):\n    return a * 2\n", "<gen f>", "exec", 0)
    assert second.added == 0 and again == code
    assert _run(again, "f")["f"](21) == 42  # type: ignore[operator]
    # Another file name or another source is another entry.
    second.compile("def f(a):\n    return a * 2\n", "<gen g>", "exec", 0)
    second.compile("def f(a):\n    return a * 3\n", "<gen f>", "exec", 0)
    assert second.added == 2


def test_the_hash_salt_attrs_writes_is_the_processs_own(tmp_path: Path) -> None:
    cache = CodeCache(tmp_path / "code.marshal")
    cache.compile(ATTRS_HASH.format(salt=-1234567890123456789), "<attrs generated hash M.C>", "exec", 0)
    code = cache.compile(ATTRS_HASH.format(salt=42), "<attrs generated hash M.C>", "exec", 0)
    assert cache.added == 1  # one entry for every salt
    fresh = compile(ATTRS_HASH.format(salt=42), "<attrs generated hash M.C>", "exec", dont_inherit=True)
    method, fresh_method = (next(c for c in m.co_consts if isinstance(c, types.CodeType)) for m in (code, fresh))
    for part in ("co_code", "co_consts", "co_names", "co_varnames", "co_filename", "co_firstlineno"):
        assert getattr(method, part) == getattr(fresh_method, part), part
    obj = types.SimpleNamespace(x=5)
    assert _run(code, "__hash__")["__hash__"](obj) == hash((42, 5))  # type: ignore[operator]


def test_the_patched_modules_future_flags_are_kept(tmp_path: Path) -> None:
    cache = CodeCache(tmp_path / "code.marshal")
    lazy = types.ModuleType("lazy")
    exec("from __future__ import annotations", lazy.__dict__)
    source = "def f(x: NotDefinedAnywhere) -> None:\n    return None\n"
    with_flags = cache.compile(source, "<gen>", "exec", future_flags(lazy))
    assert _run(with_flags, "f")["f"].__annotations__["x"] == "NotDefinedAnywhere"  # type: ignore[attr-defined]
    without = cache.compile(source, "<gen>", "exec", future_flags(types.ModuleType("eager")))
    with pytest.raises(NameError):
        _run(without, "f")


def test_an_unreadable_or_foreign_file_means_compiling_as_before(tmp_path: Path) -> None:
    path = tmp_path / "code.marshal"
    probe = CodeCache(tmp_path / "probe.marshal")
    probe.compile("x = 1\n", "<gen>", "exec", 0)
    damaged = importlib.util.MAGIC_NUMBER + marshal.dumps({key: (b"not code", None) for key in probe.entries})
    for content in (b"", b"not marshal at all", b"\x00\x00\x00\x00garbage", damaged):
        path.write_bytes(content)
        cache = CodeCache(path)
        assert _run(cache.compile("x = 1\n", "<gen>", "exec", 0), "x") == {"x": 1}
        assert cache.added == 1


def test_nothing_is_written_where_python_writes_no_bytecode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.delenv("BENCH_CODE_CACHE", raising=False)
    cache = CodeCache(tmp_path / "code.marshal")
    cache.compile("x = 1\n", "<gen>", "exec", 0)
    cache.save()
    assert not (tmp_path / "code.marshal").exists()
    monkeypatch.setenv("BENCH_CODE_CACHE", "write")  # what set-up runs: written as compileall writes .pyc files
    cache.save()
    assert (tmp_path / "code.marshal").exists()


def test_attrs_and_cattrs_compile_through_the_cache_in_this_process() -> None:
    if os.environ.get("BENCH_CODE_CACHE") == "0":
        pytest.skip("BENCH_CODE_CACHE=0 turns the cache off")
    import cattrs.gen

    assert attr._make.compile.__qualname__.startswith("caching_compile")  # type: ignore[attr-defined]
    assert cattrs.gen.compile.__qualname__.startswith("caching_compile")  # type: ignore[attr-defined]
    assert codecache._cache is not None


CLASS_SCRIPT = """
import bench_kernel, attrs, cattrs
@attrs.frozen
class Point:
    x: int
    y: str = "a"
converter = cattrs.Converter()
print(hash(Point(1, "b")), converter.unstructure(Point(2)), converter.structure({"x": 3, "y": "c"}, Point), Point(4))
from bench_codecache import cache as codecache
print(codecache._cache.added if codecache._cache else "off")
"""


def test_classes_behave_the_same_from_the_cache_under_another_hash_seed(tmp_path: Path) -> None:
    def run(seed: str, mode: str) -> list[str]:
        env = {**os.environ, "PYTHONHASHSEED": seed, "BENCH_CODE_CACHE": mode, "BENCH_CODE_CACHE_FILE": str(tmp_path / "code.marshal")}
        done = subprocess.run([sys.executable, "-c", CLASS_SCRIPT], env=env, capture_output=True, text=True, timeout=60, check=True)
        return done.stdout.splitlines()

    written = run("1", "write")
    assert written[1] != "0"  # compiled and written
    cached = run("2", "write")
    assert cached[1] == "0"  # every class and (un)structure function came from the file
    reference = run("2", "0")
    assert cached[0] == reference[0]  # the same hash, repr, (un)structuring as compiling under that seed gives
    assert written[0] != reference[0]  # (the hash does change with the seed: the salt was put in, not kept)
