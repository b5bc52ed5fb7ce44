"""A failed conversation's page as headless Chromium renders it (Debian's `chromium`, no driver or Selenium needed).

Opt-in: skips unless `chromium` is on the PATH (`apt-get install -y chromium`). The screenshot goes to
test-artefacts/view/ at the repository root (or $BENCH_ARTEFACTS/view/), never into git.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import quote

import pytest
from viewdb import SLOPPY_RUN

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if not CHROMIUM:
    pytest.skip("the Chromium test needs Debian's chromium: apt-get install -y chromium", allow_module_level=True)

ARTEFACTS = Path(os.environ.get("BENCH_ARTEFACTS") or Path(__file__).resolve().parents[3] / "test-artefacts") / "view"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--window-size=1280,2400",
)


def chromium(*args: str, profile: Path) -> str:
    """Run headless Chromium once with its own profile directory; its stdout."""
    done = subprocess.run([str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_a_failed_conversation_renders_its_task_and_expected_against_actual(viewer: str, tmp_path: Path) -> None:
    url = f"{viewer}/-/bench/conversation?id={quote(f'{SLOPPY_RUN}/agent/6/0', safe='')}"
    dom = html.unescape(chromium("--dump-dom", url, profile=tmp_path / "dom"))
    assert '<span class="badge failed" id="verdict">failed</span>' in dom
    assert 'id="task"' in dom and 'data-action="a2"' in dom and "not called as expected" in dom
    assert re.search(r'closest call: reactivate_line\(customer_id="C-1002X"\) differs on customer_id', dom)
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTEFACTS / "failed-conversation.png"
    chromium(f"--screenshot={shot}", url, profile=tmp_path / "shot")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
