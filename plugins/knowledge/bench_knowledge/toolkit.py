"""The retrieval tools a variant adds to a domain's toolkit, with tau2's names, parameters and result layout.

`knowledge_toolkit(base, kb, settings)` returns a subclass of `base` with the variant's tools. Tools that
call models (dense search, the reranker) or the sandbox are coroutines, which conversations await; BM25 and
grep are plain methods. The texts a tool shows besides documents (nothing found, blocked commands, the
rating prompt) are this package's `knowledge_*` texts, which the run's profile may replace (tau2's own).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Collection, Sequence
from typing import Any

import attrs

from bench_kernel import Profile, ToolError, ToolKind, Toolkit, tool

from .bm25 import BM25Index
from .dense import DENSE, cosine_ranking, query_text
from .documents import Document, KnowledgeBase
from .grep import grep
from .rerank import rerank
from .sandbox import (
    BLOCKED_EXIT_CODE,
    CommandResult,
    Export,
    blocked_reason,
    sandbox_problem,
    shared_export,
)
from .texts import own_render, own_text, profile_problems
from .variants import RetrievalSettings, missing_roles

Hits = list[tuple[Document, float]]
_BM25_INDEXES: dict[str, BM25Index] = {}
"""BM25 indexes by knowledge-base content hash: every toolkit class over the same documents shares one."""


@attrs.define
class Timing:
    """Milliseconds spent embedding the query, retrieving and reranking (tau2's `[Timing: ...]` line)."""

    query_ms: float = 0.0
    retrieval_ms: float = 0.0
    reranking_ms: float = 0.0

    def footer(self) -> str:
        """The line tau2 appends to search results."""
        total = self.query_ms + self.retrieval_ms + self.reranking_ms
        reranking = f", reranking={self.reranking_ms:.0f}ms" if self.reranking_ms > 0 else ""
        return f"\n\n[Timing: retrieval={self.retrieval_ms:.0f}ms{reranking}, total={total:.0f}ms]"


def format_hits(hits: Sequence[tuple[Document, float]]) -> str:
    """tau2's result layout: per document a numbered title, its id, the score (4 decimals) and the whole content."""
    return "\n".join(
        f"{n}. {doc.title or 'Untitled'}\n   ID: {doc.id}\n   Score: {score:.4f}\n   Content: {doc.content}\n"
        for n, (doc, score) in enumerate(hits, 1)
    )


class KnowledgeSearch:
    """The searches of one knowledge base under one set of settings (shared by every toolkit of the class)."""

    def __init__(self, kb: KnowledgeBase, settings: RetrievalSettings) -> None:
        self.kb = kb
        self.settings = settings
        self.contents = [doc.content for doc in kb.documents]

    @functools.cached_property
    def bm25(self) -> BM25Index:
        """The BM25 index of the contents, built on first use (about 0.1 s for tau2's 698 documents) once per process."""
        index = _BM25_INDEXES.get(self.kb.content_hash)
        if index is None:
            index = _BM25_INDEXES[self.kb.content_hash] = BM25Index(self.contents)
        return index

    def bm25_hits(self, query: str) -> Hits:
        """The top_k documents by BM25, zero scores included."""
        return [(self.kb.documents[i], score) for i, score in self.bm25.top(query, self.settings.top_k)]

    def grep_hits(self, pattern: str) -> Hits:
        """The grep_top_k documents with the most matches of a regular expression."""
        found = grep(self.contents, pattern, self.settings.grep_top_k, case_sensitive=self.settings.case_sensitive)
        return [(self.kb.documents[i], score) for i, score in found]

    async def dense_hits(self, models: Any, query: str, timing: Timing) -> Hits:
        """The top_k documents by cosine between the query's and the documents' vectors."""
        if not query or not query.strip():
            raise ToolError("the query is empty: nothing to embed")
        role = self.settings.embeddings_role
        started = time.perf_counter()
        text = query_text(query, models.config(role).model, self.settings.query_instruction)
        vector = await DENSE.query_vector(models, role, text)
        timing.query_ms = _ms_since(started)
        documents = await DENSE.document_vectors(models, role, self.kb, self.settings.embedding_batch_size)
        started = time.perf_counter()
        ranked = cosine_ranking(vector, documents, self.settings.top_k)
        timing.retrieval_ms = _ms_since(started)
        return [(self.kb.documents[i], score) for i, score in ranked]

    async def reranked(self, models: Any, profile: Profile | None, query: str, hits: Hits) -> Hits:
        """The hits the reranker keeps, best first (documents without content are not rated, as in tau2)."""
        if not hits:
            return hits
        prompts = [(n, own_render(profile, "knowledge_rerank", query=query, document=doc.content)) for n, (doc, _) in enumerate(hits) if doc.content]
        kept = await rerank(
            models, self.settings.reranker_role, prompts, min_score=self.settings.reranker_min_score, concurrency=self.settings.reranker_concurrency
        )
        return [(hits[n][0], score) for n, score in kept]


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000


# --------------------------------------------------------------------------- what every tool reaches through self


def _search(toolkit: Toolkit) -> KnowledgeSearch:
    return type(toolkit)._knowledge  # type: ignore[attr-defined]


def _profile(toolkit: Toolkit) -> Profile | None:
    return getattr(getattr(toolkit, "context", None), "profile", None)


def _models(toolkit: Toolkit) -> Any:
    models = getattr(getattr(toolkit, "context", None), "models", None)
    if models is None:
        raise ToolError("this search calls models and works only inside a conversation")
    return models


def _results(toolkit: Toolkit, hits: Hits, timing: Timing | None) -> str:
    text = format_hits(hits) if hits else own_text(_profile(toolkit), "knowledge_no_results")
    return text + timing.footer() if timing is not None and _search(toolkit).settings.timing else text


def _slice(hits: Hits, k: Any) -> Hits:
    if isinstance(k, bool) or not isinstance(k, int):
        raise ToolError(f"k must be an integer, not {k!r}")
    return hits[:k]  # Python's slice, as tau2 applies it (a negative k drops from the end)


def _bm25(toolkit: Toolkit, query: str, k: Any = None) -> str:
    timing, started = Timing(), time.perf_counter()
    hits = _search(toolkit).bm25_hits(query)
    timing.retrieval_ms = _ms_since(started)
    if k is not None:
        hits = _slice(hits, k)
    started = time.perf_counter()  # tau2 times its (empty) list of postprocessors too: a reranking figure of 0 ms
    timing.reranking_ms = _ms_since(started)
    return _results(toolkit, hits, timing)


async def _searched(toolkit: Toolkit, query: str, *, by_meaning: bool, k: Any = None) -> str:
    """A search that calls models: dense retrieval (`by_meaning`) or BM25, then the reranker when the variant has one."""
    search, timing, models = _search(toolkit), Timing(), _models(toolkit)
    if by_meaning:
        hits = await search.dense_hits(models, query, timing)
    else:
        started = time.perf_counter()
        hits = search.bm25_hits(query)
        timing.retrieval_ms = _ms_since(started)
    if k is not None:
        hits = _slice(hits, k)
    started = time.perf_counter()
    if search.settings.variant.reranker:
        hits = await search.reranked(models, _profile(toolkit), query, hits)
    timing.reranking_ms = _ms_since(started)
    return _results(toolkit, hits, timing)


# --------------------------------------------------------------------------- the tools (our descriptions)


@tool(ToolKind.READ)
def kb_search_sync(self: Toolkit, query: str) -> str:
    """Search the knowledge base and return the documents that best match a query, best first.

    Args:
        query (str): What to look for, in keywords or a short question.

    Returns:
        The matching documents with their titles, ids, scores and full contents.
    """
    return _bm25(self, query)


@tool(ToolKind.READ)
async def kb_search_async(self: Toolkit, query: str) -> str:
    """Search the knowledge base and return the documents that best match a query, best first.

    Args:
        query (str): What to look for, in keywords or a short question.

    Returns:
        The matching documents with their titles, ids, scores and full contents.
    """
    return await _searched(self, query, by_meaning=_search(self).settings.variant.search == "dense")


@tool(ToolKind.READ)
def grep_tool(self: Toolkit, pattern: str) -> str:
    """Find the knowledge-base documents whose content matches a regular expression, most matches first.

    Args:
        pattern (str): A Python regular expression such as 'wire transfer' or 'fee|charge' (not case-sensitive
            unless configured so; an invalid expression is matched as plain text).

    Returns:
        The matching documents with their titles, ids, match counts and full contents.
    """
    hits = _search(self).grep_hits(pattern)
    if not hits:
        return own_render(_profile(self), "knowledge_no_matches", pattern=pattern)
    return format_hits(hits)


@tool(ToolKind.READ)
def kb_search_bm25(self: Toolkit, query: str, k: int = 10) -> str:
    """Search the knowledge base by keywords (BM25 ranking) and return the best-matching documents.

    Args:
        query (str): The words to look for.
        k (int): How many documents to return at most (up to the configured limit, 10 by default).

    Returns:
        The matching documents with their titles, ids, scores and full contents.
    """
    return _bm25(self, query, k)


@tool(ToolKind.READ)
async def kb_search_dense(self: Toolkit, query: str, k: int = 10) -> str:
    """Search the knowledge base by meaning (embedding similarity) and return the closest documents.

    Args:
        query (str): A question or description of what you need.
        k (int): How many documents to return at most (up to the configured limit, 10 by default).

    Returns:
        The closest documents with their titles, ids, similarity scores and full contents.
    """
    return await _searched(self, query, by_meaning=True, k=k)


@tool(ToolKind.READ)
async def shell_tool(self: Toolkit, command: str) -> str:
    """Run a shell command in the knowledge-base directory, where each document is a Markdown file.

    The directory holds one `.md` file per document and INDEX.md, which lists every file with its title.
    Use ordinary Unix tools: ls, cat, head, grep, rg, find, wc, sed, awk, sort. Paths stay inside the
    directory: `..`, absolute paths and `~` are refused.

    Args:
        command (str): The command line, e.g. "grep -ril 'overdraft' . | head" or "cat INDEX.md".

    Returns:
        What the command printed, or its error output with the exit code.
    """
    return await _shell(self, command)


async def _shell(toolkit: Toolkit, command: str) -> str:
    settings, profile = _search(toolkit).settings, _profile(toolkit)
    reason = blocked_reason(command)
    if reason is not None:
        result = CommandResult(BLOCKED_EXIT_CODE, "", own_render(profile, "knowledge_shell_blocked", reason=reason))
    else:
        timeout_text = own_render(profile, "knowledge_shell_timeout", seconds=f"{settings.shell_timeout_s:g}")
        try:
            result = await _export(toolkit).run(command, timeout_s=settings.shell_timeout_s, timeout_text=timeout_text)
        except OSError as exc:
            raise ToolError(f"the sandbox could not run the command: {exc}") from exc
    return shell_text(profile, command, result)


def shell_text(profile: Profile | None, command: str, result: CommandResult) -> str:
    """tau2's mapping of a command's outcome to the tool's text."""
    if result.code != 0:
        if result.code == 1 and "grep" in command and not result.stderr:
            return own_text(profile, "knowledge_shell_no_matches")
        if result.stderr:
            return f"Error (exit code {result.code}): {result.stderr}"
        return own_render(profile, "knowledge_shell_failed", code=str(result.code))
    return result.stdout or "(no output)"


def _export(toolkit: Toolkit) -> Export:
    search = _search(toolkit)
    if search.settings.variant.shell != "write":
        return shared_export(search.kb)
    # Each toolkit (one conversation) writes in its own copy, removed when the toolkit is dropped.
    own: Export | None = vars(toolkit).get("_knowledge_export")
    if own is None:
        own = vars(toolkit)["_knowledge_export"] = Export(search.kb, writable=True)
    return own


# --------------------------------------------------------------------------- composing


def _tools_for(settings: RetrievalSettings) -> dict[str, Callable[..., Any]]:
    variant = settings.variant
    calls_models = variant.search == "dense" or variant.reranker
    chosen = {
        "KB_search": kb_search_async if calls_models else kb_search_sync,
        "grep": grep_tool,
        "KB_search_bm25": kb_search_bm25,
        "KB_search_dense": kb_search_dense,
        "shell": shell_tool,
    }
    return {name: chosen[name] for name in variant.tools}


def knowledge_toolkit(base: type[Toolkit], kb: KnowledgeBase, settings: RetrievalSettings) -> type[Toolkit]:
    """A subclass of `base` with the retrieval tools of `settings.variant` over `kb` (none for no_knowledge,
    full_kb and golden_retrieval, whose knowledge is in the policy)."""
    namespace: dict[str, Any] = {"__module__": base.__module__, "_knowledge": KnowledgeSearch(kb, settings), **_tools_for(settings)}
    name = f"{base.__name__}_{settings.name.replace('-', '_')}"
    namespace["__qualname__"] = name
    return type(name, (base,), namespace)


def refusal(settings: RetrievalSettings, roles: Collection[str] | None = None, *, profile: Profile | None = None) -> str | None:
    """Why this variant cannot run here, or None: no working sandbox for a shell variant; when the run's model roles
    are given, a missing embeddings or reranker role; when its profile is given (`DomainOptions.profile`), a text of
    ours it replaces with a placeholder the text does not take."""
    problems = profile_problems(profile)
    if "sandbox" in settings.variant.needs:
        problem = sandbox_problem()
        if problem is not None:
            problems.append(f"the {settings.name} retrieval variant needs a sandbox for its shell tool: {problem}")
    if roles is not None:
        from bench_kernel import role_option_hint  # the model hub's module, imported only when roles are checked

        for role in missing_roles(settings, roles):
            what = "embeddings" if role == settings.embeddings_role else "reranker"
            problems.append(f"the {settings.name} retrieval variant needs a model for its {what} role {role!r} ({role_option_hint(role)})")
    return "; ".join(problems) or None
