"""A shell over the knowledge base's documents, in a bubblewrap sandbox.

The documents are exported as files (tau2's layout: `<sanitized id>.md` holding `# title`, a blank line and
the content, plus `INDEX.md`) and bound read-only (writable for the write variant) at `/knowledge_base`, the
working directory. The sandbox sees /usr (read-only, with the usual /bin, /lib symlinks), its own /proc and
a minimal /dev, and nothing else of the host: no /etc, no home, no /tmp; it has no network (`--unshare-all`),
no capabilities, and runs as `nobody` when bench runs as root. Each command gets limits on CPU time, file
size, open files, memory and processes, and a wall-clock timeout (exit code 124).

Before a command runs, tau2's pre-filter refuses commands that name `..`, an absolute path, `~` or `$HOME`
outside quotes (exit code 1); output goes through tau2's sanitiser (`ls -l` owners and dates, home paths).
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import os
import re
import resource
import shutil
import signal
import subprocess
import tempfile
import weakref
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO

import attrs

from .documents import Document, KnowledgeBase

MOUNT_POINT = "/knowledge_base"
TIMEOUT_S = 30.0
TIMEOUT_EXIT_CODE = 124
BLOCKED_EXIT_CODE = 1
NOBODY = 65534
OUTPUT_LIMIT_BYTES = 16 * 1024 * 1024
"""The most a command may write to one file, its output included (RLIMIT_FSIZE): past it the writer is stopped."""
LIMITS = {"-t": 35, "-f": OUTPUT_LIMIT_BYTES // 1024, "-n": 256, "-c": 0, "-u": 256, "-v": 4 * 1024 * 1024}
"""bash `ulimit` flags and values set inside the sandbox: CPU seconds, file size and memory in KiB, open files,
core size, processes (counted inside the sandbox's user namespace on Linux 5.14 and later)."""
RLIMIT_OF = {
    "-t": resource.RLIMIT_CPU,
    "-f": resource.RLIMIT_FSIZE,
    "-n": resource.RLIMIT_NOFILE,
    "-c": resource.RLIMIT_CORE,
    "-u": resource.RLIMIT_NPROC,
    "-v": resource.RLIMIT_AS,
}
SHELL = "/usr/bin/bash"
SANDBOX_USER, SANDBOX_GROUP, SANDBOX_DATE = "kb_user", "kb_group", "Jan  1 00:00"
_LS_LINE = re.compile(r"^([d\-lrwxst@]+\s+\d+\s+)(\S+)\s+(\S+)\s+(\d+)\s+(\w{3}\s+\d+\s+[\d:]+)\s+(.*)$", re.MULTILINE)


# --------------------------------------------------------------------------- export


def file_name(doc_id: str) -> str:
    """A document's file name stem: tau2's sanitising of its id (other characters than letters, digits, `._-` become `_`)."""
    safe = doc_id.replace("/", "_").replace("\\", "_").replace("..", "_")
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in safe)[:255]


def index_text(documents: Sequence[Document]) -> str:
    """INDEX.md: a header, the number of documents and one line per document (file and title), sorted by id."""
    lines = ["# Knowledge Base Index\n\n", f"**Total documents:** {len(documents)}\n\n", "## Documents\n\n"]
    lines += [f"- **{file_name(doc.id)}.md** - {doc.title}\n" for doc in sorted(documents, key=lambda d: d.id)]
    return "".join(lines)


def export_documents(kb: KnowledgeBase, directory: Path) -> None:
    """Write each document as `<file_name(id)>.md` and the index into `directory` (in document order: a later
    document whose id sanitises to the same name replaces the earlier file, as in tau2)."""
    directory.mkdir(parents=True, exist_ok=True)
    for doc in kb.documents:
        (directory / f"{file_name(doc.id)}.md").write_text(f"# {doc.title}\n\n{doc.content}", encoding="utf-8")
    (directory / "INDEX.md").write_text(index_text(kb.documents), encoding="utf-8")


# --------------------------------------------------------------------------- tau2's pre-filter and sanitiser


def blocked_reason(command: str) -> str | None:
    """What makes tau2 refuse a command (`..`, an absolute path, `~`, `$HOME` outside quotes), or None."""
    stripped = re.sub(r"'[^']*'", '""', command)
    stripped = re.sub(r'"[^"]*"', '""', stripped)
    if ".." in stripped:
        return ".."
    if re.search(r"(?:^|[\s;|&])(/[a-zA-Z])", stripped):
        path = re.search(r"(?:^|[\s;|&])(/[a-zA-Z][^\s;|&]*)", stripped)
        if path:
            return f"absolute path: {path.group(1)}"
    if stripped.strip().startswith("/"):
        return "absolute path at start"
    if "~" in stripped:
        return "~"
    if "$HOME" in stripped or "${HOME}" in stripped:
        return "$HOME"
    return None


def sanitize_output(output: str, user: str | None = None) -> str:
    """tau2's clean-up: `ls -l` owner, group and date made constant, `/home/<user>` and `/Users/<user>` made `/home/kb_user`."""
    if not output:
        return output
    result = _LS_LINE.sub(lambda m: f"{m.group(1)}{SANDBOX_USER}  {SANDBOX_GROUP}  {m.group(4)} {SANDBOX_DATE} {m.group(6)}", output)
    user = user if user is not None else _user_name()
    if user:
        result = re.sub(rf"/(?:Users|home)/{re.escape(user)}(?=/|$)", "/home/kb_user", result)
    return result


@functools.cache
def _user_name() -> str | None:
    try:
        import getpass

        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no name to hide then
        return None


# --------------------------------------------------------------------------- running


@attrs.frozen
class CommandResult:
    """What a command gave: exit code, standard output and standard error (both sanitised)."""

    code: int
    stdout: str
    stderr: str


def bwrap_path() -> str | None:
    """The bubblewrap binary on PATH, or None."""
    return shutil.which("bwrap")


def _as_nobody() -> bool:
    # Root is exempt from the process limit and should not run model-written commands: the sandbox runs as nobody.
    return os.geteuid() == 0


def _root_links() -> list[str]:
    """/bin, /lib, ... as the host has them: symlinks into /usr (merged /usr) or read-only binds."""
    args = []
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        host = Path("/") / name
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), f"/{name}"]
        elif host.is_dir():
            args += ["--ro-bind", str(host), f"/{name}"]
    return args


def _ulimits() -> str:
    parts = []
    for flag, value in LIMITS.items():
        hard = resource.getrlimit(RLIMIT_OF[flag])[1]
        unit = 1024 if flag in ("-f", "-v") else 1
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard // unit)
        parts.append(f"ulimit {flag} {value}")
    return "; ".join(parts)


def bwrap_command(bwrap: str, directory: Path, command: str, *, writable: bool) -> list[str]:
    """The argv running `command` with bash inside a sandbox whose working directory is `directory`."""
    bind = "--bind" if writable else "--ro-bind"
    inner = f'{_ulimits()}; exec -a bash {SHELL} -c "$1"'
    return [
        bwrap,
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--ro-bind",
        "/usr",
        "/usr",
        *_root_links(),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        bind,
        str(directory),
        MOUNT_POINT,
        "--chdir",
        MOUNT_POINT,
        "--remount-ro",
        "/",
        "--hostname",
        "sandbox",
        "--clearenv",
        "--setenv",
        "PATH",
        "/usr/local/bin:/usr/bin:/bin",
        "--setenv",
        "LANG",
        "C.UTF-8",
        "--setenv",
        "HOME",
        MOUNT_POINT,
        "--",
        SHELL,
        "-c",
        inner,
        "bash",
        command,
    ]


async def run_sandboxed(
    directory: Path, command: str, *, writable: bool, timeout_s: float = TIMEOUT_S, timeout_text: str | None = None
) -> CommandResult:
    """Run one command in a fresh sandbox over `directory`; a command past `timeout_s` is killed (exit code 124)."""
    bwrap = bwrap_path()
    if bwrap is None:
        raise OSError("bubblewrap (bwrap) is not installed")
    argv = bwrap_command(bwrap, directory, command, writable=writable)
    nobody = _as_nobody()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
            user=NOBODY if nobody else None,
            group=NOBODY if nobody else None,
            extra_groups=[] if nobody else None,
        )
        try:
            async with asyncio.timeout(timeout_s):  # not wait_for, which can swallow a cancellation on Python 3.11
                code = await process.wait()
        except TimeoutError:
            _kill(process)
            await process.wait()
            text = timeout_text if timeout_text is not None else f"the command ran past {timeout_s:g} seconds and was stopped"
            return CommandResult(TIMEOUT_EXIT_CODE, "", text)
        finally:
            if process.returncode is None:  # cancelled: leave nothing running
                _kill(process)
        return CommandResult(code, sanitize_output(_read(out)), sanitize_output(_read(err)))


def _kill(process: asyncio.subprocess.Process) -> None:
    # bwrap runs in its own session; the sandboxed processes die with it (--die-with-parent, its own PID namespace).
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _read(file: IO[bytes]) -> str:
    file.seek(0)  # an anonymous file the command wrote through its descriptor
    return file.read(OUTPUT_LIMIT_BYTES).decode("utf-8", errors="replace")


# --------------------------------------------------------------------------- whether it works here


@functools.cache
def sandbox_problem() -> str | None:
    """Why no sandbox can run on this machine (bwrap or bash missing, or a probe sandbox failing), or None."""
    bwrap = bwrap_path()
    if bwrap is None:
        return "bubblewrap is not installed (the `bwrap` command; e.g. `apt-get install bubblewrap`)"
    if not Path(SHELL).exists():
        return f"{SHELL} is missing (the sandbox runs commands with bash)"
    directory = Path(tempfile.mkdtemp(prefix="bench-kb-probe-"))
    try:
        _open_to_sandbox(directory)
        (directory / "probe.md").write_text("probe\n", encoding="utf-8")
        argv = bwrap_command(bwrap, directory, "cat probe.md", writable=False)
        nobody = _as_nobody()
        try:
            done = subprocess.run(
                argv,
                capture_output=True,
                timeout=TIMEOUT_S,
                check=False,
                user=NOBODY if nobody else None,
                group=NOBODY if nobody else None,
                extra_groups=[] if nobody else None,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return f"bubblewrap cannot start here: {exc}"
        if done.returncode != 0 or done.stdout != b"probe\n":
            detail = done.stderr.decode(errors="replace").strip().splitlines()
            return f"bubblewrap cannot create a sandbox here (exit code {done.returncode}: {detail[0] if detail else 'no message'})"
        return None
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _open_to_sandbox(directory: Path) -> None:
    """Let the sandbox's user (nobody, when bench runs as root) reach an exported directory."""
    if _as_nobody():
        directory.chmod(0o755)


# --------------------------------------------------------------------------- exported copies


class Export:
    """One exported copy of a knowledge base in a temporary directory, removed when the object is dropped or at exit."""

    def __init__(self, kb: KnowledgeBase, *, writable: bool) -> None:
        self.writable = writable
        self.root = Path(tempfile.mkdtemp(prefix="bench-kb-"))
        self._finalizer = weakref.finalize(self, shutil.rmtree, self.root, ignore_errors=True)
        self.directory = self.root / "knowledge_base"
        _open_to_sandbox(self.root)
        export_documents(kb, self.directory)
        _open_tree(self.directory, writable=writable)

    async def run(self, command: str, *, timeout_s: float = TIMEOUT_S, timeout_text: str | None = None) -> CommandResult:
        """Run a command over this copy (the pre-filter is the caller's)."""
        return await run_sandboxed(self.directory, command, writable=self.writable, timeout_s=timeout_s, timeout_text=timeout_text)

    def close(self) -> None:
        """Remove the directory now."""
        self._finalizer()

    @property
    def closed(self) -> bool:
        """True once the directory is removed."""
        return not self._finalizer.alive


def _open_tree(directory: Path, *, writable: bool) -> None:
    if not _as_nobody():
        return
    paths: Iterable[Path] = [directory, *directory.iterdir()]
    for path in paths:
        path.chmod(0o755 if path.is_dir() else 0o644)
        if writable:
            os.chown(path, NOBODY, NOBODY)


_SHARED: dict[str, Export] = {}


def shared_export(kb: KnowledgeBase) -> Export:
    """The process's one read-only copy of a knowledge base (conversations cannot change it, so they share it)."""
    export = _SHARED.get(kb.content_hash)
    if export is None or export.closed:
        export = _SHARED[kb.content_hash] = Export(kb, writable=False)
    return export


@atexit.register
def _remove_shared() -> None:
    for export in _SHARED.values():
        export.close()
    _SHARED.clear()
