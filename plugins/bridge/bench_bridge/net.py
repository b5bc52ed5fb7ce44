"""Loopback sockets bound before their server starts, so a URL is known while the server is still to come."""

from __future__ import annotations

import socket


def loopback_socket() -> socket.socket:
    """A socket bound to a free 127.0.0.1 port (not yet listening: the server that takes it listens)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock
