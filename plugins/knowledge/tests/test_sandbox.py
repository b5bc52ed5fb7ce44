"""The shell over the documents: tau2's export layout, pre-filter and result texts, and a real bubblewrap sandbox
(no network, nothing of the host but /usr, read-only documents, limits, a timeout, temporary copies removed)."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bench_knowledge import Document, KnowledgeBase, export_documents, file_name, knowledge_toolkit, refusal, resolve_variant
from bench_knowledge import sandbox as sandbox_module
from bench_knowledge.sandbox import CommandResult, Export, blocked_reason, sandbox_problem, sanitize_output
from bench_knowledge.texts import own_render, own_text
from bench_knowledge.toolkit import shell_text

from bench_kernel import State, Toolkit

KB = KnowledgeBase.of(
    [
        Document(id="doc_cards_(general)_001", title="Lost cards", content="Call us to replace a lost card.\nFee: none."),
        Document(id="doc_fees/002", title="Fees", content="The annual fee is 95 dollars."),
        Document(id="a", title="First", content="alpha"),
    ]
)
PROBLEM = sandbox_problem()
needs_sandbox = pytest.mark.skipif(PROBLEM is not None, reason=f"no sandbox on this machine: {PROBLEM}")


def shell(toolkit: Toolkit, command: str) -> str:
    return str(asyncio.run(toolkit.call_tool("shell", {"command": command})))


def shell_toolkit(variant: str = "terminal_use", **options: str) -> Toolkit:
    return knowledge_toolkit(Toolkit, KB, resolve_variant(variant, options))(State.from_records({}))


# --------------------------------------------------------------------------- layout, pre-filter, texts (no sandbox needed)


def test_documents_are_exported_as_tau2_lays_them_out(tmp_path: Path) -> None:
    export_documents(KB, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["INDEX.md", "a.md", "doc_cards__general__001.md", "doc_fees_002.md"]
    assert (tmp_path / "doc_cards__general__001.md").read_text() == "# Lost cards\n\nCall us to replace a lost card.\nFee: none."
    assert (tmp_path / "INDEX.md").read_text() == (
        "# Knowledge Base Index\n\n**Total documents:** 3\n\n## Documents\n\n- **a.md** - First\n"
        "- **doc_cards__general__001.md** - Lost cards\n- **doc_fees_002.md** - Fees\n"
    )
    assert file_name("x/../y é") == "x___y_é" and len(file_name("z" * 300)) == 255


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("cat ../secret", ".."),
        ("ls /etc", "absolute path: /etc"),
        ("ls; /usr/bin/id", "absolute path: /usr/bin/id"),
        ("/bin/ls", "absolute path: /bin/ls"),
        ("cat ~/notes", "~"),
        ("echo $HOME", "$HOME"),
        ("echo ${HOME}", "$HOME"),
        ("ls -la", None),
        ("grep -r 'a/b' .", None),
        ("grep '..' INDEX.md", None),
        ('cat "/etc/passwd"', None),
        ("echo 'x' | wc -l && ls", None),
        ("cat doc_1.md|head", None),
    ],
)
def test_the_pre_filter_blocks_what_tau2_blocks(command: str, reason: str | None) -> None:
    assert blocked_reason(command) == reason


def test_results_map_to_tau2s_texts() -> None:
    assert shell_text(None, "grep -r x .", CommandResult(1, "", "")) == own_text(None, "knowledge_shell_no_matches")
    assert shell_text(None, "ls nope", CommandResult(2, "", "ls: no\n")) == "Error (exit code 2): ls: no\n"
    assert shell_text(None, "false", CommandResult(1, "", "")) == "The command ended with exit code 1 and printed no error."
    assert shell_text(None, "true", CommandResult(0, "", "warning")) == "(no output)"
    assert shell_text(None, "ls", CommandResult(0, "a.md\n", "")) == "a.md\n"


def test_output_is_sanitised_as_tau2_does() -> None:
    listing = "total 8\n-rw-r--r-- 1 65534 65534   43 Nov 28 00:59 a.md\ndrwxr-xr-x 2 ann staff 4096 Jan 11 21:44 dir\n"
    assert sanitize_output(listing, user="ann") == (
        "total 8\n-rw-r--r-- 1 kb_user  kb_group  43 Jan  1 00:00 a.md\ndrwxr-xr-x 2 kb_user  kb_group  4096 Jan  1 00:00 dir\n"
    )
    assert sanitize_output("at /home/ann/x and /Users/ann", user="ann") == "at /home/kb_user/x and /home/kb_user"


def test_a_blocked_command_never_reaches_the_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox_module, "bwrap_path", lambda: None)
    text = shell(shell_toolkit(), "cat ../x")
    assert text == "Error (exit code 1): " + own_render(None, "knowledge_shell_blocked", reason="..")


def test_without_bubblewrap_a_shell_variant_is_refused_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox_module, "bwrap_path", lambda: None)
    sandbox_problem.cache_clear()
    try:
        reason = refusal(resolve_variant("terminal_use")) or ""
        assert "needs a sandbox for its shell tool: bubblewrap is not installed" in reason
        assert "alltools" in (refusal(resolve_variant("alltools")) or "")
        assert refusal(resolve_variant("bm25")) is None
    finally:
        sandbox_problem.cache_clear()


def test_a_sandbox_that_fails_its_probe_is_refused_with_bwraps_message(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(sandbox_module, "bwrap_path", lambda: str(fake))
    monkeypatch.setattr(sandbox_module, "_as_nobody", lambda: False)  # nobody could not reach tmp_path
    sandbox_problem.cache_clear()
    try:
        assert sandbox_problem() == ("bubblewrap cannot create a sandbox here (exit code 1: bwrap: No permissions to create new namespace)")
    finally:
        sandbox_problem.cache_clear()


# --------------------------------------------------------------------------- the real sandbox


@needs_sandbox
def test_commands_see_the_documents_and_nothing_of_the_host() -> None:
    tools = shell_toolkit()
    assert shell(tools, "ls") == "INDEX.md\na.md\ndoc_cards__general__001.md\ndoc_fees_002.md\n"
    assert shell(tools, "grep -l 'annual fee' *.md") == "doc_fees_002.md\n"
    assert shell(tools, "grep -l zzz *.md") == own_text(None, "knowledge_shell_no_matches")
    assert shell(tools, "pwd") == "/knowledge_base\n"
    # Quotes get past tau2's pre-filter; the sandbox itself has no /etc, no home and no /tmp.
    assert shell(tools, 'cat "/etc/passwd"').startswith("Error (exit code 1): cat: /etc/passwd: No such file or directory")
    root = set(shell(tools, 'ls "/"').split())
    assert (
        {"knowledge_base", "usr", "proc", "dev"} <= root <= {"bin", "sbin", "lib", "lib32", "lib64", "libx32", "knowledge_base", "usr", "proc", "dev"}
    )
    for path in ("/etc", "/home", "/root", "/tmp", "/work", str(Path.home())):
        assert "No such file or directory" in shell(tools, f'ls "{path}"'), path
    assert "kb_user  kb_group" in shell(tools, "ls -l a.md") and "Jan  1 00:00" in shell(tools, "ls -l a.md")


@needs_sandbox
def test_the_sandbox_has_no_network() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        # Quoted paths pass tau2's pre-filter, so these reach the sandbox.
        text = shell(shell_toolkit(), f'echo hi > "/dev/tcp/127.0.0.1/{port}" && echo connected')
    assert "connected" not in text and "Connection refused" in text
    assert "Network is unreachable" in shell(shell_toolkit(), 'echo > "/dev/tcp/1.1.1.1/53"')


@needs_sandbox
def test_the_read_only_variant_cannot_write_anywhere() -> None:
    tools = shell_toolkit()
    assert "Read-only file system" in shell(tools, "echo x > new.md")
    assert "Read-only file system" in shell(tools, "rm a.md")
    assert "Read-only file system" in shell(tools, "mkdir notes")
    assert "Read-only file system" in shell(tools, 'touch "/x"')
    assert shell(tools, "ls") == "INDEX.md\na.md\ndoc_cards__general__001.md\ndoc_fees_002.md\n"


@needs_sandbox
def test_the_write_variant_writes_in_its_own_copy_removed_with_its_toolkit() -> None:
    first, second = shell_toolkit("terminal_use_write"), shell_toolkit("terminal_use_write")
    assert shell(first, "echo remember > notes.md && cat notes.md") == "remember\n"
    assert shell(first, "cat notes.md") == "remember\n"  # kept between calls of one conversation
    assert "No such file" in shell(second, "cat notes.md")  # never seen by another
    assert "Read-only file system" in shell(first, 'touch "/x"')
    copy = vars(first)["_knowledge_export"].root
    assert copy.is_dir()
    del first
    gc.collect()
    assert not copy.exists()


@needs_sandbox
def test_a_command_past_the_timeout_is_stopped_with_exit_code_124() -> None:
    # The sleeps last minutes (the marker is their length): only the timeout can have ended them.
    marker = f"{100 + time.time_ns() % 1000}.{os.getpid()}"
    text = shell(shell_toolkit(shell_timeout_s="1"), f"sleep {marker} & sleep {marker}")
    assert text == "Error (exit code 124): " + own_render(None, "knowledge_shell_timeout", seconds="1")
    left = "?"
    for _ in range(50):  # bounded: the kill is asynchronous, give it up to ~5 s
        left = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True, check=False).stdout
        if not left:
            break
        time.sleep(0.1)
    assert left == "", "sandboxed processes outlived the timeout"


@needs_sandbox
def test_limits_apply_inside_the_sandbox() -> None:
    tools = shell_toolkit("terminal_use_write")
    limits = shell(tools, "ulimit -t; ulimit -f; ulimit -n; ulimit -u; ulimit -c").split()
    assert limits == ["35", str(sandbox_module.OUTPUT_LIMIT_BYTES // 1024), "256", "256", "0"]
    too_big = shell(tools, f"yes | head -c {sandbox_module.OUTPUT_LIMIT_BYTES + 1} > big.md; echo $?")
    assert too_big.split()[-1] == "153"  # killed by SIGXFSZ at the file size limit
    forks = shell(tools, "for i in $(seq 400); do sleep 2 & done 2>&1 | head -1; wait")
    assert "fork" in forks or "Resource temporarily unavailable" in forks


@needs_sandbox
def test_concurrent_commands_share_the_read_only_copy() -> None:
    tools = [shell_toolkit() for _ in range(8)]

    async def run_all() -> list[str]:
        return list(await asyncio.gather(*(t.call_tool("shell", {"command": "cat a.md | wc -c"}) for t in tools)))

    assert asyncio.run(run_all()) == ["14\n"] * 8


@needs_sandbox
def test_copies_are_removed_at_exit(tmp_path: Path) -> None:
    script = (
        "import asyncio, json\n"
        "from bench_knowledge import Document, KnowledgeBase\n"
        "from bench_knowledge.sandbox import Export, shared_export\n"
        "kb = KnowledgeBase.of([Document(id='a', title='t', content='c')])\n"
        "shared, own = shared_export(kb), Export(kb, writable=True)\n"
        "print(json.dumps([str(shared.root), str(own.root), asyncio.run(shared.run('cat a.md')).stdout]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60)
    shared, own, output = json.loads(done.stdout)
    assert output == "# t\n\nc" and not Path(shared).exists() and not Path(own).exists()


@needs_sandbox
def test_an_export_closes_once() -> None:
    export = Export(KB, writable=False)
    assert asyncio.run(export.run("cat a.md")).stdout == "# First\n\nalpha"
    export.close()
    export.close()
    assert export.closed and not export.root.exists()
