"""Full-duplex conversations in the viewer: the recording route, the timeline strip, the event lines, the run header.

The database holds real full-duplex runs of the mock domain (text-paced tones: the voice plugin is not loaded), one
keeping its audio; the pages are fetched from a real Datasette app through its own client (no server process).
"""

from __future__ import annotations

import asyncio
import html
import json
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from bench_duplex import Timeline, TimelineEntry, ToolStamp
from bench_view import duplex, pages
from bench_view.readonly import open_read_only
from bench_view.server import build_app
from click.testing import CliRunner

from bench_kernel import Store
from bench_kernel.testing import bench_cli

KEPT = "duplex/agent/reactivate_and_restart/0"
"""A full-duplex conversation whose recording was kept: the user calls a tool (restarts the router), the agent two."""
SILENT = "duplex-silent/agent/upgrade_by_email/0"
"""A full-duplex conversation of a run without --keep-audio."""
TASKS = ("--task-id", "upgrade_by_email", "--task-id", "reactivate_and_restart")

Get = Callable[..., httpx.Response]


def bench(*args: str) -> None:
    """Run `bench ARGS` in-process with the mock domain only (no voice plugin: speech is text-paced tones)."""
    result = CliRunner().invoke(bench_cli(["mock"]), [*args, "--plugin", "mock", "--format", "none", "--progress", "none"])
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def duplex_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Runs: full duplex keeping audio (2 tasks), full duplex without audio, and a turn-based run."""
    folder = tmp_path_factory.mktemp("duplex")
    db = folder / "results.db"
    bench("run", "--mode", "full-duplex", *TASKS, "--no-baseline", "--run-id", "duplex", "--db", str(db), "--keep-audio", str(folder / "audio"))
    bench("run", "--mode", "full-duplex", *TASKS[:2], "--no-baseline", "--run-id", "duplex-silent", "--db", str(db))
    bench("run", *TASKS[:2], "--no-baseline", "--run-id", "turns", "--db", str(db))
    return db


def client(db: Path) -> Get:
    """GET on a real Datasette app over db, through Datasette's own client."""
    datasette = build_app(db)

    async def fetch(path: str, headers: dict[str, str] | None) -> httpx.Response:
        await datasette.invoke_startup()
        return await datasette.client.get(path, headers=headers or {})

    def get(path: str, status: int = 200, headers: dict[str, str] | None = None) -> httpx.Response:
        response = asyncio.run(fetch(path, headers))
        assert response.status_code == status, (path, response.status_code, response.text[:300])
        return response

    return get


@pytest.fixture(scope="module")
def get(duplex_db: Path) -> Get:
    return client(duplex_db)


def url(route: str, conversation_id: str) -> str:
    return f"/-/bench/{route}?id={quote(conversation_id, safe='')}"


def stored(db: Path, conversation_id: str, kind: str) -> list[dict[str, Any]]:
    """The data of a conversation's events of one kind, in order."""
    store = open_read_only(db)
    try:
        rows = store.db.execute(
            "select data_json from conversation_events where conversation_id = ? and kind = ? order by idx", [conversation_id, kind]
        ).fetchall()
    finally:
        store.close()
    return [json.loads(row[0]) for row in rows]


def test_audio_route_serves_the_kept_recording(get: Get, duplex_db: Path) -> None:
    recording = Path(stored(duplex_db, KEPT, Timeline.kind)[0]["audio_file"])
    whole = get(url("audio", KEPT))
    assert whole.headers["content-type"] == "audio/wav" and whole.headers["accept-ranges"] == "bytes"
    assert whole.content == recording.read_bytes() and whole.content[:4] == b"RIFF"
    part = get(url("audio", KEPT), 206, headers={"range": "bytes=8-11"})
    assert part.content == b"WAVE" and part.headers["content-range"] == f"bytes 8-11/{recording.stat().st_size}"
    assert get(url("audio", KEPT), 206, headers={"range": "bytes=-2"}).content == recording.read_bytes()[-2:]
    get(url("audio", KEPT), 416, headers={"range": f"bytes={recording.stat().st_size}-"})


def test_audio_route_refuses_conversations_without_a_recording(get: Get) -> None:
    assert "no kept recording" in html.unescape(get(url("audio", SILENT), 404).text)
    assert "not a full-duplex conversation" in html.unescape(get(url("audio", "turns/agent/upgrade_by_email/0"), 404).text)
    assert "no conversation 'nope'" in html.unescape(get("/-/bench/audio?id=nope", 404).text)
    assert "no conversation ''" in html.unescape(get("/-/bench/audio", 404).text)


def test_audio_route_serves_nothing_but_the_named_recording(get: Get, duplex_db: Path, tmp_path: Path) -> None:
    recording = Path(stored(duplex_db, KEPT, Timeline.kind)[0]["audio_file"])
    # No parameter names a file: a path given anyway changes nothing.
    assert get(url("audio", KEPT) + f"&path={quote(str(duplex_db))}").content == recording.read_bytes()
    # A doctored database naming another file gets a 404, not the file; a recording gone is a 404 too.
    doctored = tmp_path / "doctored.db"
    shutil.copy(duplex_db, doctored)
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the viewer")
    rename_recording(doctored, KEPT, str(secret))
    rename_recording(doctored, "duplex/agent/upgrade_by_email/0", str(tmp_path / "gone.wav"))
    other = client(doctored)
    refused = other(url("audio", KEPT), 404)
    assert "not a WAV recording" in html.unescape(refused.text) and "not for the viewer" not in refused.text
    assert "is gone" in html.unescape(other(url("audio", "duplex/agent/upgrade_by_email/0"), 404).text)
    page = html.unescape(other(url("conversation", KEPT)).text)
    assert 'id="duplex-audio"' not in page and "not a WAV recording" in page


def rename_recording(db: Path, conversation_id: str, audio_file: str) -> None:
    """Point a conversation's stored timeline at another file."""
    store = Store(db)
    try:
        row = store.db.execute(
            "select idx, data_json from conversation_events where conversation_id = ? and kind = ?", [conversation_id, Timeline.kind]
        ).fetchone()
        data = {**json.loads(row[1]), "audio_file": audio_file}
        store.db.execute(
            "update conversation_events set data_json = ? where conversation_id = ? and idx = ?", [json.dumps(data), conversation_id, row[0]]
        )
        store.db.conn.commit()
    finally:
        store.close()


def test_a_relative_recording_is_found_beside_the_database(duplex_db: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # not where the recording is
    timeline = Timeline(ticks=10, audio_file="audio/" + Path(stored(duplex_db, KEPT, Timeline.kind)[0]["audio_file"]).name)
    assert duplex.recording(timeline, duplex_db) == duplex_db.parent / timeline.audio_file
    with pytest.raises(duplex.NoRecording, match="is gone"):
        duplex.recording(timeline, tmp_path / "results.db")


def test_conversation_page_has_the_player_and_one_rect_per_speech_run(get: Get, duplex_db: Path) -> None:
    speech = stored(duplex_db, KEPT, "duplex.speech")
    store = open_read_only(duplex_db)
    try:
        data = pages.conversation_page(store, KEPT, "results")
    finally:
        store.close()
    assert data is not None and data["duplex"]["audio_url"] == url("audio", KEPT) and data["duplex"]["audio_note"] is None
    strip = data["duplex"]["strip"]
    assert [(r["side"], r["title"].split(":")[0]) for r in strip["runs"]] == [
        (s["side"], f"{s['side']} {s['start_tick'] / 5:.1f}-{s['end_tick'] / 5:.1f} s") for s in speech
    ]
    assert [m["kind"] for m in strip["marks"]] == ["tool-agent", "tool-agent", "tool-user"]
    page = html.unescape(get(url("conversation", KEPT)).text)
    assert f'<audio controls preload="metadata" id="duplex-audio" src="{url("audio", KEPT)}">' in page
    svg = re.search(r'<svg class="duplex-strip".*?</svg>', page, re.S)
    assert svg and len(re.findall(r'<rect class="run ', svg.group(0))) == len(speech) == 5
    assert "<title>agent 33.2-33.8 s: All done.</title>" in svg.group(0)


def test_event_list_summarises_the_timeline_and_reads_speech_as_lines(get: Get, duplex_db: Path) -> None:
    data = stored(duplex_db, KEPT, Timeline.kind)[0]
    assert duplex.summary(data) == (
        f"39.6 s (198 ticks of 200 ms), speech runs: user 3, agent 2, 3 tool calls, audio kept ({Path(data['audio_file']).name})"
    )
    page = html.unescape(get(url("conversation", KEPT)).text)
    timeline_event = re.search(r'<div class="event" data-kind="duplex.timeline">(.*?)</div>\s*</div>', page, re.S)
    assert timeline_event and duplex.summary(data) in timeline_event.group(1) and "utterance" not in timeline_event.group(1)
    assert '<div class="line">agent 33.2-33.8 s: All done.</div>' in page
    assert '<div class="line">user 37.8-39.4 s: Thank you, that is all.</div>' in page
    silent = html.unescape(get(url("conversation", SILENT)).text)
    assert "2 tool calls, audio not kept" in silent and 'id="duplex-audio"' not in silent and "no recording kept" in silent


def test_turn_based_conversations_have_no_duplex_section(get: Get) -> None:
    assert 'id="duplex"' not in get(url("conversation", "turns/agent/upgrade_by_email/0")).text


def test_run_page_shows_the_full_duplex_settings(get: Get) -> None:
    page = html.unescape(get("/-/bench/run?id=duplex").text)
    [shown] = re.findall(r'<p class="meta" id="duplex-settings">(.*?)</p>', page)
    assert shown.startswith("full duplex: keep_audio ") and shown.endswith(", max_seconds 1200.0, speech_complexity control, tick_ms 200")
    assert 'id="duplex-settings"' not in get("/-/bench/run?id=turns").text


def long_call(runs: int = 300) -> Timeline:
    """A 20-minute call (6,000 ticks): runs of both sides, backchannels, yields, a truncation, effects, tool calls."""
    user, agent, user_runs, agent_runs = [], [], [], []
    for n in range(runs):
        start = n * 20
        agent_runs.append((start, start + 9))
        agent.append(TimelineEntry(tick=start, text=f"agent says {n} <b>"))
        user_runs.append((start + 10, start + 11 if n % 2 else start + 19))
        action = "backchannel" if n % 2 else "generate_message"
        user.append(TimelineEntry(tick=start + 10, text="mm-hm" if n % 2 else f"user says {n}", action=action))
    user.append(TimelineEntry(tick=5, action="stop_talking", effects=({"type": "burst", "snr_db": 5},)))
    user_runs.append((3, 6))  # a barge-in: the user starts while the agent speaks, then yields
    agent.append(TimelineEntry(tick=8, truncated=True))
    tools = [ToolStamp(tick=7, requestor="agent", id="c1", name="find", error=True)]
    return Timeline(
        ticks=6000, agent_speech=agent_runs, user_speech=sorted(user_runs), agent=agent, user=sorted(user, key=lambda e: e.tick), tools=tools
    )


def test_a_twenty_minute_call_fits_the_strip() -> None:
    timeline = long_call()
    began = time.perf_counter()
    strip = duplex.strip(timeline)
    assert time.perf_counter() - began < 2
    assert len(strip["runs"]) == len(timeline.agent_speech) + len(timeline.user_speech) == 601
    assert all(
        r["x"] >= duplex.LEFT and r["x"] + r["w"] <= duplex.WIDTH - duplex.RIGHT + duplex.MIN_RUN and r["w"] >= duplex.MIN_RUN for r in strip["runs"]
    )
    assert [a["label"] for a in strip["axis"]][:3] == ["0 s", "120 s", "240 s"] and len(strip["axis"]) <= 13
    kinds = {m["kind"] for m in strip["marks"]}
    assert kinds == {"tool-error", "yield", "backchannel", "barge-in", "truncated", "effect"}
    assert sum("backchannel" in r["cls"] for r in strip["runs"]) == 150
    assert strip["runs"][0]["title"] == "agent 0.0-1.8 s (interrupted): agent says 0 <b>"
    assert strip["runs"][1]["title"] == "user 0.6-1.2 s (interrupted, overlapped): (no text)"


def test_byte_ranges() -> None:
    assert duplex.byte_range(None, 10) == duplex.ByteRange(0, 9, 10, False)
    assert duplex.byte_range("bytes=2-", 10) == duplex.ByteRange(2, 9, 10, True)
    assert duplex.byte_range("bytes=2-50", 10) == duplex.ByteRange(2, 9, 10, True)
    assert duplex.byte_range("bytes=-3", 10) == duplex.ByteRange(7, 9, 10, True)
    assert duplex.byte_range("bytes=0-1,4-5", 10) == duplex.ByteRange(0, 9, 10, False)
    assert duplex.byte_range("bytes=x-y", 10) == duplex.ByteRange(0, 9, 10, False)
    assert duplex.byte_range("bytes=10-", 10) is None and duplex.byte_range("bytes=5-2", 10) is None


def test_a_recording_of_another_length_is_flagged(duplex_db: Path) -> None:
    recording = Path(stored(duplex_db, KEPT, Timeline.kind)[0]["audio_file"])
    assert duplex.length_note(Timeline(ticks=198), recording) is None
    assert "the recording lasts 39.6 s but the conversation 2.0 s" in (duplex.length_note(Timeline(ticks=10), recording) or "")
