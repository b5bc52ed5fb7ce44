"""tau2's retrieval variants by name, and the settings one run resolves from a name and `--retrieval-option`s."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, Literal

import attrs

from bench_kernel import ConfigError

Search = Literal["bm25", "dense"]
Shell = Literal["read", "write"]
Needs = Literal["embeddings", "reranker", "sandbox"]
TOOL_ORDER = ("KB_search", "grep", "KB_search_bm25", "KB_search_dense", "shell")


@attrs.frozen(kw_only=True)
class RetrievalVariant:
    """One of tau2's retrieval set-ups: the agent tools it adds, what they need, and its prompt template."""

    name: str
    template: str
    """The stem of its prompt template in tau2's `prompts/` (e.g. `classic_rag_bm25_no_grep`)."""
    search: Search | None = None
    """The backend of `KB_search` (None: no `KB_search`)."""
    reranker: bool = False
    """`KB_search` results are re-rated by an LLM (a judge role) and filtered by `reranker_min_score`."""
    grep: bool = False
    shell: Shell | None = None
    all_tools: bool = False
    """tau2's AllTools: `KB_search_bm25`, `KB_search_dense` and a read-only `shell` instead of `KB_search`."""
    embedding_provider: str | None = None
    """What tau2 embeds with for this variant: "openai" or "openrouter" (the text its all-tools prompt names)."""
    embedding_model: str | None = None
    """tau2's embedding model for this variant; bench embeds with the run's `embeddings` role instead."""
    policy: Literal["standard", "full_kb", "golden"] = "standard"
    """How the policy is assembled: the template alone, with the whole knowledge base, or with the task's documents."""

    @property
    def tools(self) -> tuple[str, ...]:
        """The agent tools this variant adds, by tau2's names."""
        if self.all_tools:
            return ("KB_search_bm25", "KB_search_dense", "shell")
        if self.shell is not None:
            return ("shell",)
        return tuple(name for name, on in (("KB_search", self.search is not None), ("grep", self.grep)) if on)

    @property
    def dense(self) -> bool:
        """True when a tool searches by embeddings."""
        return self.search == "dense" or self.all_tools

    @property
    def needs(self) -> frozenset[Needs]:
        """What it needs beyond the documents: an embeddings role, a reranker (judge) role, a sandbox."""
        found: set[Needs] = set()
        if self.dense:
            found.add("embeddings")
        if self.reranker:
            found.add("reranker")
        if self.shell is not None:
            found.add("sandbox")
        return frozenset(found)


EMBEDDERS = {"openai": ("openai", "text-embedding-3-large"), "qwen": ("openrouter", "qwen3-embedding-8b")}
"""tau2's embedding provider and model for its OpenAI and Qwen variants."""


def _classic(name: str, backend: str, *, grep: bool, reranker: bool) -> RetrievalVariant:
    provider, model = EMBEDDERS.get(backend, (None, None))
    return RetrievalVariant(
        name=name,
        template=f"classic_rag_{backend}" + ("" if grep else "_no_grep"),
        search="bm25" if backend == "bm25" else "dense",
        grep=grep,
        reranker=reranker,
        embedding_provider=provider,
        embedding_model=model,
    )


def _all_tools(name: str, backend: str) -> RetrievalVariant:
    provider, model = EMBEDDERS[backend]
    return RetrievalVariant(name=name, template="all_tools", all_tools=True, shell="read", embedding_provider=provider, embedding_model=model)


def _all_variants() -> dict[str, RetrievalVariant]:
    variants = [
        RetrievalVariant(name="no_knowledge", template="no_knowledge"),
        RetrievalVariant(name="full_kb", template="full_kb", policy="full_kb"),
        RetrievalVariant(name="golden_retrieval", template="required_docs", policy="golden"),
    ]
    for family, backend in (("qwen_embeddings", "qwen"), ("openai_embeddings", "openai"), ("bm25", "bm25")):
        for reranker in (False, True):
            for grep in (True, False):
                name = family + ("_reranker" if reranker else "") + ("_grep" if grep else "")
                variants.append(_classic(name, backend, grep=grep, reranker=reranker))
    variants += [
        RetrievalVariant(name="grep_only", template="grep_only", grep=True),
        RetrievalVariant(name="terminal_use", template="agentic_search", shell="read"),
        RetrievalVariant(name="terminal_use_write", template="agentic_search_write", shell="write"),
        _all_tools("alltools", "openai"),
        _all_tools("alltools-qwen", "qwen"),
    ]
    found = {variant.name: variant for variant in variants}
    found["AllTools"] = found["alltools"]  # tau2's alias
    return found


VARIANTS: Mapping[str, RetrievalVariant] = _all_variants()
"""tau2's 20 retrieval variants by name, plus its alias `AllTools` for `alltools`."""
DEFAULT_VARIANT = "alltools"
"""tau2's default (it needs an embeddings role and the sandbox)."""


@attrs.frozen(kw_only=True)
class RetrievalSettings:
    """A variant and the settings of one run (`--retrieval-option KEY=VALUE`)."""

    variant: RetrievalVariant
    top_k: int = 10
    """Documents a search returns at most (`KB_search`, `KB_search_bm25`, `KB_search_dense`)."""
    grep_top_k: int = 10
    case_sensitive: bool = False
    """grep matches case-sensitively."""
    reranker_min_score: int = 5
    """Documents the reranker rates below this (0-10) are dropped (tau2's variants use 5)."""
    embeddings_role: str = "embeddings"
    """The model role that embeds documents and queries."""
    reranker_role: str = "judge"
    """The model role that rates documents for the reranker."""
    reranker_concurrency: int = 20
    """Rating calls of one search in flight at most."""
    query_instruction: str | None = None
    """Text put before each query as `Instruct: <text>\\nQuery:<query>`; None: tau2's web-search instruction for
    models whose name contains "qwen", nothing for others; "" never."""
    embedding_batch_size: int = 0
    """Documents per embeddings request when indexing (0: all in one request, as tau2)."""
    timing: bool = False
    """Append tau2's `[Timing: ...]` line to search results (off: results are the same on every run)."""
    shell_timeout_s: float = 30.0

    @property
    def name(self) -> str:
        """The variant's name."""
        return self.variant.name

    def model_roles(self) -> tuple[str, ...]:
        """The model roles its tools call (`DomainData.model_roles`: a run refuses to start without them)."""
        return tuple(missing_roles(self, ()))

    def options(self) -> dict[str, Any]:
        """The settings that differ from the defaults, by option name."""
        defaults = RetrievalSettings(variant=self.variant)
        return {
            f.name: getattr(self, f.name)
            for f in attrs.fields(RetrievalSettings)
            if f.name != "variant" and getattr(self, f.name) != getattr(defaults, f.name)
        }


def _integer(low: int) -> Callable[[Any], int]:
    def parse(value: Any) -> int:
        if isinstance(value, bool):
            raise ValueError("expected an integer")
        number = int(value) if isinstance(value, int) or (isinstance(value, str) and value.strip().lstrip("-").isdigit()) else None
        if number is None or number < low:
            raise ValueError(f"expected an integer of at least {low}")
        return number

    return parse


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    raise ValueError("expected true or false")


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("expected a text")
    return value


def _role(value: Any) -> str:
    from bench_kernel import ROLE_NAME  # the model hub's module, imported only when a role option is given

    if not isinstance(value, str) or not ROLE_NAME.match(value):
        raise ValueError("expected a model role name (lowercase letters, digits, '-' and '_')")
    return value


def _seconds(value: Any) -> float:
    number = float(value)
    if not 0 < number <= 3600:
        raise ValueError("expected seconds between 0 and 3600")
    return number


OPTIONS: Mapping[str, Callable[[Any], Any]] = {
    "top_k": _integer(1),
    "grep_top_k": _integer(1),
    "case_sensitive": _boolean,
    "reranker_min_score": _integer(0),
    "embeddings_role": _role,
    "reranker_role": _role,
    "reranker_concurrency": _integer(1),
    "query_instruction": _text,
    "embedding_batch_size": _integer(0),
    "timing": _boolean,
    "shell_timeout_s": _seconds,
}
"""The option names `resolve_variant` knows (tau2's four first), each with its parser."""


def resolve_variant(name: str, options: Mapping[str, Any] | None = None) -> RetrievalSettings:
    """The settings for a variant name (tau2's names, `AllTools` too) and options; ConfigError names what is known."""
    variant = VARIANTS.get(name)
    if variant is None:
        known = ", ".join(sorted(n for n in VARIANTS if n != "AllTools"))
        raise ConfigError(f"unknown retrieval variant {name!r} (known: {known})")
    values: dict[str, Any] = {}
    for key, raw in (options or {}).items():
        parse = OPTIONS.get(key)
        if parse is None:
            raise ConfigError(f"unknown retrieval option {key!r} (known: {', '.join(OPTIONS)})")
        try:
            values[key] = parse(raw)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"retrieval option {key}={raw!r}: {exc}") from None
    return RetrievalSettings(variant=variant, **values)


def missing_roles(settings: RetrievalSettings, roles: Collection[str]) -> list[str]:
    """The model roles the settings need that are not in `roles`."""
    needed = []
    if "embeddings" in settings.variant.needs:
        needed.append(settings.embeddings_role)
    if "reranker" in settings.variant.needs:
        needed.append(settings.reranker_role)
    return [role for role in needed if role not in roles]
