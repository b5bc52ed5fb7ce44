"""The life cycle the testing kit's servers share: `with` serves from a thread of its own, `async with` on the caller's loop."""

from __future__ import annotations

import asyncio
import threading
from typing import Self


class BackgroundServer:
    """A server with `open()`/`close()` coroutines, run in a background thread (`with`) or on the running loop (`async with`)."""

    thread_name = "fake-server"
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None

    async def open(self) -> None:
        """Bind a free port on the running loop."""
        raise NotImplementedError

    async def close(self) -> None:
        """Stop listening and close open connections."""
        raise NotImplementedError

    def start(self) -> Self:
        """Serve from a background thread with its own event loop; returns once the port is bound."""
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = self._loop = asyncio.new_event_loop()
            try:
                loop.run_until_complete(self.open())
            except BaseException as exc:  # noqa: BLE001 - re-raised in the starting thread
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            loop.run_forever()
            loop.close()

        self._thread = threading.Thread(target=run, name=self.thread_name, daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            raise failure[0]
        return self

    def stop(self) -> None:
        """Close the server and every connection, and end the background thread."""
        if self._thread is None or self._loop is None:
            return
        asyncio.run_coroutine_threadsafe(self.close(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
