"""The knowledge base's documents, read from a directory of `{id, title, content}` JSON files."""

from __future__ import annotations

from pathlib import Path

import attrs

from bench_kernel import ConfigError, read_json


@attrs.frozen
class Document:
    """One knowledge-base document."""

    id: str
    title: str
    content: str


def load_documents(directory: Path) -> tuple[Document, ...]:
    """Every `*.json` document in `Path.glob` order (tau2's order: it breaks search ties and orders the full KB)."""
    if not directory.is_dir():
        raise ConfigError(f"no documents directory at {directory}")
    found = []
    for path in directory.glob("*.json"):
        data = read_json(path)
        if not isinstance(data, dict) or not all(isinstance(data.get(k), str) for k in ("id", "title", "content")):
            raise ConfigError(f"{path}: expected a document {{id, title, content}} (strings) @ $")
        found.append(Document(id=data["id"], title=data["title"], content=data["content"]))
    return tuple(found)
