"""The documents an agent searches: `Document` and `KnowledgeBase`, read from a directory of JSON files."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

import attrs

from bench_kernel import ConfigError, read_json, structure


@attrs.frozen(kw_only=True)
class Document:
    """One knowledge-base document: an id, a title and a Markdown body (searches index the body only)."""

    id: str
    title: str
    content: str


@attrs.frozen(kw_only=True)
class KnowledgeBase:
    """Documents in load order: the order decides BM25 and grep ties and the order of a whole-KB text."""

    documents: tuple[Document, ...]
    _by_id: dict[str, Document] = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        by_id: dict[str, Document] = {}
        for doc in self.documents:
            if doc.id in by_id:
                raise ConfigError(f"knowledge base: two documents have the id {doc.id!r}")
            by_id[doc.id] = doc
        object.__setattr__(self, "_by_id", by_id)

    @classmethod
    def from_directory(cls, path: str | Path) -> KnowledgeBase:
        """Every `*.json` of `path` (`{"id", "title", "content"}`), in `Path.glob` order as tau2 reads them.

        The glob order is the file system's directory order, not sorted: the same directory gives the same
        order, a copy on another file system may not (see docs/knowledge.md).
        """
        directory = Path(path)
        if not directory.is_dir():
            raise ConfigError(f"{directory}: no documents directory there")
        documents: list[Document] = []
        seen: dict[str, Path] = {}
        for file in directory.glob("*.json"):
            doc = structure(read_json(file), Document, source=str(file))
            if doc.id in seen:
                raise ConfigError(f"{file}: the document id {doc.id!r} is also the id of {seen[doc.id]} @ $.id")
            seen[doc.id] = file
            documents.append(doc)
        return cls(documents=tuple(documents))

    @classmethod
    def of(cls, documents: Iterable[Document]) -> KnowledgeBase:
        """A knowledge base of these documents, in this order."""
        return cls(documents=tuple(documents))

    def by_id(self, doc_id: str) -> Document | None:
        """The document with this id, or None."""
        return self._by_id.get(doc_id)

    def __len__(self) -> int:
        return len(self.documents)

    @functools.cached_property
    def content_hash(self) -> str:
        """sha256 of every document's id, title and content in order: equal hashes, equal knowledge bases."""
        digest = hashlib.sha256()
        for doc in self.documents:
            digest.update(json.dumps([doc.id, doc.title, doc.content]).encode())
            digest.update(b"\n")
        return digest.hexdigest()
