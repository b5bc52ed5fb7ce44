"""Our Datasette plugin, registered in-process by `bench view`: the run, conversation and comparison pages."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs
from datasette import hookimpl
from datasette.utils.asgi import Response
from markupsafe import Markup, escape

from bench_kernel import BenchError, Store, task_id_key
from bench_view import duplex, pages
from bench_view.readonly import open_read_only

NAME = "bench-view"
TASK_ORDER = "task_id"
"""The collation our canned queries order task ids by."""


def settings(datasette: Any) -> tuple[str, str]:
    """The served results database: its Datasette name and its path."""
    config = datasette.plugin_config(NAME) or {}
    return config["database"], config["path"]


async def with_store(datasette: Any, read: Callable[[Store, str], Any]) -> Any:
    """read(store, database) on a fresh immutable connection, off the event loop."""
    database, path = settings(datasette)

    def work() -> Any:
        store = open_read_only(path)
        try:
            return read(store, database)
        finally:
            store.close()

    return await asyncio.to_thread(work)


async def page(datasette: Any, request: Any, template: str, context: dict[str, Any], status: int = 200) -> Response:
    """Render one of our templates inside Datasette's layout."""
    html = await datasette.render_template(template, {**context, "database": settings(datasette)[0]}, request=request)
    return Response.html(html, status=status)


async def problem(datasette: Any, request: Any, text: str, status: int) -> Response:
    """A page saying what is wrong (unknown run or conversation, missing parameter)."""
    return await page(datasette, request, "bench_problem.html", {"problem": text}, status)


async def index_view(datasette: Any, request: Any) -> Response:
    """Every run, with its page and a comparison form."""
    return await page(datasette, request, "bench_index.html", {"runs": await with_store(datasette, lambda s, d: pages.runs(s))})


async def run_view(datasette: Any, request: Any) -> Response:
    """A run's report, each figure linking to its conversations."""
    run_id = request.args.get("id")
    if not run_id:
        return await problem(datasette, request, "which run? add ?id=RUN", 400)
    try:
        context = await with_store(datasette, lambda s, d: pages.run_page(s, run_id, d))
    except BenchError as exc:
        return await problem(datasette, request, str(exc), 404)
    return await page(datasette, request, "bench_run.html", context)


async def conversation_view(datasette: Any, request: Any) -> Response:
    """One conversation, everything about it on one page."""
    conversation_id = request.args.get("id") or ""
    context = await with_store(datasette, lambda s, d: pages.conversation_page(s, conversation_id, d))
    if context is None:
        return await problem(datasette, request, f"no conversation {conversation_id!r} in this database", 404)
    return await page(datasette, request, "bench_conversation.html", context)


async def audio_view(datasette: Any, request: Any) -> Any:
    """A full-duplex conversation's kept recording (?id=CONVERSATION): the WAV file its stored timeline names, nothing else."""
    conversation_id = request.args.get("id") or ""

    def find(store: Store, database: str) -> Path | str:
        try:
            timeline = duplex.load_timeline(store, conversation_id)
        except BenchError as exc:
            return str(exc)
        if timeline is None:
            known = store.db.execute("select 1 from conversations where id = ?", [conversation_id]).fetchone()
            return (
                f"conversation {conversation_id!r} is not a full-duplex conversation: it has no recording"
                if known
                else f"no conversation {conversation_id!r} in this database"
            )
        try:
            return duplex.recording(timeline, store.path)
        except duplex.NoRecording as exc:
            return f"conversation {conversation_id!r}: {exc}"

    found = await with_store(datasette, find)
    if isinstance(found, str):
        return await problem(datasette, request, found, 404)
    wanted = duplex.byte_range(request.headers.get("range"), found.stat().st_size)
    if wanted is None:
        return Response.text("range not satisfiable", status=416, headers={"content-range": f"bytes */{found.stat().st_size}"})
    return FileSlice(found, wanted)


@attrs.frozen
class FileSlice:
    """An ASGI response streaming part of a file (206 with Content-Range) or all of it (200), as audio/wav."""

    path: Path
    part: duplex.ByteRange
    chunk: int = 64 * 1024

    def headers(self) -> list[tuple[bytes, bytes]]:
        """The response's headers: type, length, byte ranges, an inline file name."""
        found = [
            ("content-type", "audio/wav"),
            ("accept-ranges", "bytes"),
            ("content-length", str(self.part.end - self.part.start + 1)),
            ("content-disposition", f'inline; filename="{self.path.name}"'),
        ]
        if self.part.partial:
            found.append(("content-range", f"bytes {self.part.start}-{self.part.end}/{self.part.size}"))
        return [(k.encode(), v.encode("latin-1", "replace")) for k, v in found]

    async def asgi_send(self, send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        """Send the headers, then the bytes chunk by chunk (a 20-minute recording is about 38 MB)."""
        await send({"type": "http.response.start", "status": 206 if self.part.partial else 200, "headers": self.headers()})
        with self.path.open("rb") as source:
            source.seek(self.part.start)
            left = self.part.end - self.part.start + 1
            while left > 0:
                data = await asyncio.to_thread(source.read, min(self.chunk, left))
                if not data:
                    break  # the file shrank under us: end the body rather than hang
                left -= len(data)
                await send({"type": "http.response.body", "body": data, "more_body": left > 0})
        if left > 0:
            await send({"type": "http.response.body", "body": b"", "more_body": False})


async def compare_view(datasette: Any, request: Any) -> Response:
    """Two runs side by side (?a=RUN&b=RUN)."""
    run_a, run_b = request.args.get("a"), request.args.get("b")
    runs = await with_store(datasette, lambda s, d: pages.runs(s))
    if not run_a or not run_b:
        return await page(datasette, request, "bench_compare.html", {"runs": runs, "a": run_a, "b": run_b})
    try:
        context = await with_store(datasette, lambda s, d: pages.compare_page(s, run_a, run_b, d))
    except BenchError as exc:
        return await problem(datasette, request, str(exc), 404)
    return await page(datasette, request, "bench_compare.html", {**context, "runs": runs, "a": run_a, "b": run_b})


@hookimpl
def register_routes() -> list[tuple[str, Any]]:
    """Our pages under /-/bench."""
    return [
        (r"^/-/bench$", index_view),
        (r"^/-/bench/run$", run_view),
        (r"^/-/bench/conversation$", conversation_view),
        (r"^/-/bench/compare$", compare_view),
        (r"^/-/bench/audio$", audio_view),
    ]


@hookimpl
def prepare_connection(conn: Any) -> None:
    """`collate task_id`: task ids in reading order ("2" before "10"), as the kernel's reports list them."""
    conn.create_collation(TASK_ORDER, compare_task_ids)


def compare_task_ids(a: str, b: str) -> int:
    """-1, 0 or 1 as task id a sorts before, with or after b (the kernel's task_id_key)."""
    key_a, key_b = task_id_key(a), task_id_key(b)
    return (key_a > key_b) - (key_a < key_b)


@hookimpl
def menu_links() -> list[dict[str, str]]:
    """Links to our pages in Datasette's menu."""
    return [{"href": "/-/bench", "label": "bench runs"}, {"href": "/-/bench/compare", "label": "compare two runs"}]


@hookimpl
def render_cell(value: Any, column: str, table: str | None) -> Markup | None:
    """Conversation and run ids anywhere (tables, canned queries) link to our pages."""
    if not isinstance(value, str) or not value:
        return None
    if column.endswith("conversation_id") or (table == "conversations" and column == "id"):
        return Markup(f'<a href="{escape(pages.conversation_url(value))}">{escape(value)}</a>')
    if column == "run_id" or (table == "runs" and column == "id"):
        return Markup(f'<a href="{escape(pages.run_url(value))}">{escape(value)}</a>')
    return None
