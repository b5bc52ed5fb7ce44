"""aiohttp imported without loading the system's CA certificates at import time.

aiohttp builds two default TLS contexts when it is imported, each loading the system's CA bundle (~15 ms apiece:
a third of `bench run`'s wait for its first request on plain-http endpoints, which never use them). Here they are
built as `DeferredCAContext`s: the same settings, the certificates loaded when the context first wraps a connection.
bench-openai itself speaks TLS through its own certifi context; other aiohttp users in the process get contexts
that verify exactly as before.
"""

from __future__ import annotations

import contextlib
import importlib
import ssl
import sys
import threading
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any


class DeferredCAContext(ssl.SSLContext):
    """An SSL context that loads its default CA certificates on first use (wrapping or inspecting), not when made."""

    _pending: Callable[[], None] | None = None
    _lock = threading.Lock()

    def defer(self, load: Callable[[], None]) -> None:
        """Run `load` (e.g. the real set_default_verify_paths) just before the context is first used."""
        self._pending = load

    def loaded(self) -> bool:
        """Whether the deferred certificates are in (or none were deferred)."""
        return self._pending is None

    def _ensure(self) -> None:
        if self._pending is not None:
            with self._lock:
                if self._pending is not None:
                    self._pending()
                    self._pending = None

    def wrap_socket(self, *args: Any, **kwargs: Any) -> Any:
        self._ensure()
        return super().wrap_socket(*args, **kwargs)

    def wrap_bio(self, *args: Any, **kwargs: Any) -> Any:
        self._ensure()
        return super().wrap_bio(*args, **kwargs)

    def cert_store_stats(self) -> Any:
        self._ensure()
        return super().cert_store_stats()

    def get_ca_certs(self, binary_form: bool = False) -> Any:
        self._ensure()
        return super().get_ca_certs(binary_form)


_real_set_default_verify_paths = ssl.SSLContext.set_default_verify_paths


def _defer_verify_paths(self: ssl.SSLContext) -> None:
    if isinstance(self, DeferredCAContext):
        self.defer(lambda: _real_set_default_verify_paths(self))
    else:
        _real_set_default_verify_paths(self)


@contextlib.contextmanager
def _deferred_defaults() -> Iterator[None]:
    """Inside: every new SSLContext is a DeferredCAContext, and set_default_verify_paths waits for its first use."""
    real_new = ssl.SSLContext.__dict__["__new__"]

    def deferred_new(cls: type[ssl.SSLContext], *args: Any, **kwargs: Any) -> ssl.SSLContext:
        return real_new(DeferredCAContext if cls is ssl.SSLContext else cls, *args, **kwargs)

    ssl.SSLContext.__new__ = deferred_new  # type: ignore[method-assign,assignment]
    ssl.SSLContext.set_default_verify_paths = _defer_verify_paths  # type: ignore[method-assign]
    try:
        yield
    finally:
        ssl.SSLContext.__new__ = real_new  # type: ignore[method-assign]
        ssl.SSLContext.set_default_verify_paths = _real_set_default_verify_paths  # type: ignore[method-assign]


def import_aiohttp() -> ModuleType:
    """aiohttp, its default TLS contexts deferred when this process imports it first (else as it is)."""
    if "aiohttp.connector" in sys.modules:
        return importlib.import_module("aiohttp")
    with _deferred_defaults():
        connector = importlib.import_module("aiohttp.connector")
    for name in ("_SSL_CONTEXT_VERIFIED", "_SSL_CONTEXT_UNVERIFIED"):
        context = getattr(connector, name, None)
        if isinstance(context, ssl.SSLContext) and not isinstance(context, DeferredCAContext):
            # Made some other way than the two patched calls: load its certificates now, as aiohttp meant.
            _real_set_default_verify_paths(context)
    return importlib.import_module("aiohttp")


import_aiohttp()  # importing this module is what clients do to import aiohttp this way
