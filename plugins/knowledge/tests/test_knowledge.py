"""Knowledge retrieval: documents, tau2's variants, BM25 and grep equal to tau2's, result texts, composed toolkits."""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any

import pytest
from bench_knowledge import (
    OPTIONS,
    VARIANTS,
    BM25Index,
    Document,
    KnowledgeBase,
    RetrievalSettings,
    format_hits,
    knowledge_toolkit,
    refusal,
    resolve_variant,
)
from bench_knowledge.texts import PLACEHOLDERS, own_render, packaged

from bench_kernel import PLACEHOLDER, ConfigError, State, TaskFileError, ToolContext, ToolError, ToolKind, Toolkit, load_profile, tool

REFERENCE = Path(os.environ.get("BENCH_REFERENCE") or Path(__file__).resolve().parents[3] / ".." / "shared" / "reference")
DOCUMENTS = REFERENCE / "tau2" / "banking_knowledge" / "documents"
RECORDED = json.loads((Path(__file__).parent / "data" / "knowledge_tau2_rankings.json").read_text(encoding="utf-8"))
TAU2_VARIANTS = {
    "no_knowledge": (),
    "full_kb": (),
    "golden_retrieval": (),
    "bm25": ("KB_search",),
    "bm25_grep": ("KB_search", "grep"),
    "bm25_reranker": ("KB_search",),
    "bm25_reranker_grep": ("KB_search", "grep"),
    "openai_embeddings": ("KB_search",),
    "openai_embeddings_grep": ("KB_search", "grep"),
    "openai_embeddings_reranker": ("KB_search",),
    "openai_embeddings_reranker_grep": ("KB_search", "grep"),
    "qwen_embeddings": ("KB_search",),
    "qwen_embeddings_grep": ("KB_search", "grep"),
    "qwen_embeddings_reranker": ("KB_search",),
    "qwen_embeddings_reranker_grep": ("KB_search", "grep"),
    "grep_only": ("grep",),
    "terminal_use": ("shell",),
    "terminal_use_write": ("shell",),
    "alltools": ("KB_search_bm25", "KB_search_dense", "shell"),
    "alltools-qwen": ("KB_search_bm25", "KB_search_dense", "shell"),
}


@pytest.fixture(scope="module")
def tau2_kb() -> KnowledgeBase:
    """tau2's 698 documents, in the order tau2 loaded them when the rankings were recorded."""
    if not DOCUMENTS.is_dir():
        pytest.skip(
            f"tau2's banking_knowledge documents are not at {DOCUMENTS} (they live in ../shared/reference, "
            "beside the checkout; or set BENCH_REFERENCE)"
        )
    loaded = KnowledgeBase.from_directory(DOCUMENTS)
    by_id = {doc.id: doc for doc in loaded.documents}
    return KnowledgeBase.of(by_id[doc_id] for doc_id in RECORDED["documents"])


def small_kb() -> KnowledgeBase:
    return KnowledgeBase.of(
        [
            Document(id="fees", title="Fees", content="The annual fee is 95 dollars. A late fee applies after the due date."),
            Document(id="cards", title="Cards", content="Lost cards are replaced within five days; expedited shipping costs extra."),
            Document(id="empty", title="", content="Nothing about money here."),
            Document(id="fees-2", title="More fees", content="Wire transfer fee: 25 dollars. FEE waived for Gold members."),
        ]
    )


def toolkit(kb: KnowledgeBase, variant: str, **options: Any) -> Toolkit:
    return knowledge_toolkit(Toolkit, kb, resolve_variant(variant, options))(State.from_records({}))


# --------------------------------------------------------------------------- documents


def write_doc(directory: Path, name: str, data: Any) -> None:
    (directory / name).write_text(json.dumps(data), encoding="utf-8")


def test_a_directory_loads_in_glob_order_and_finds_documents_by_id(tmp_path: Path) -> None:
    for n in range(5):
        write_doc(tmp_path, f"d{n}.json", {"id": f"d{n}", "title": f"T{n}", "content": f"c{n}"})
    kb = KnowledgeBase.from_directory(tmp_path)
    assert [d.id for d in kb.documents] == [p.stem for p in tmp_path.glob("*.json")]
    assert kb.by_id("d3") == Document(id="d3", title="T3", content="c3") and kb.by_id("nope") is None
    assert len(kb) == 5 and kb.content_hash == KnowledgeBase.from_directory(tmp_path).content_hash


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ({"id": "a", "title": "t"}, "$.content"),
        ({"id": "a", "title": 3, "content": "c"}, "$.title"),
        ({"id": "a", "title": "t", "content": "c", "extra": 1}, "extra"),
        (["not", "an", "object"], "$"),
    ],
)
def test_a_malformed_document_names_its_file_and_json_path(tmp_path: Path, data: Any, where: str) -> None:
    write_doc(tmp_path, "bad.json", data)
    with pytest.raises(TaskFileError, match=r"bad\.json") as caught:
        KnowledgeBase.from_directory(tmp_path)
    assert where in str(caught.value)


def test_a_file_that_is_not_json_and_a_repeated_id_are_refused(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"broken\.json: not valid JSON"):
        KnowledgeBase.from_directory(tmp_path)
    (tmp_path / "broken.json").unlink()
    write_doc(tmp_path, "one.json", {"id": "same", "title": "t", "content": "c"})
    write_doc(tmp_path, "two.json", {"id": "same", "title": "t", "content": "c"})
    with pytest.raises(ConfigError, match="'same' is also the id of"):
        KnowledgeBase.from_directory(tmp_path)
    with pytest.raises(ConfigError, match="no documents directory"):
        KnowledgeBase.from_directory(tmp_path / "missing")


# --------------------------------------------------------------------------- variants


def test_every_tau2_variant_is_known_with_its_tools_and_the_alias() -> None:
    assert set(VARIANTS) - {"AllTools"} == set(TAU2_VARIANTS)
    assert VARIANTS["AllTools"] is VARIANTS["alltools"]
    for name, tools in TAU2_VARIANTS.items():
        assert VARIANTS[name].tools == tools, name
        assert list(knowledge_toolkit(Toolkit, small_kb(), resolve_variant(name)).specs()) == sorted(tools), name
    assert resolve_variant("AllTools").name == "alltools"


@pytest.mark.parametrize(
    ("name", "needs", "template"),
    [
        ("bm25", set(), "classic_rag_bm25_no_grep"),
        ("bm25_reranker_grep", {"reranker"}, "classic_rag_bm25"),
        ("openai_embeddings", {"embeddings"}, "classic_rag_openai_no_grep"),
        ("qwen_embeddings_reranker_grep", {"embeddings", "reranker"}, "classic_rag_qwen"),
        ("terminal_use_write", {"sandbox"}, "agentic_search_write"),
        ("alltools", {"embeddings", "sandbox"}, "all_tools"),
        ("golden_retrieval", set(), "required_docs"),
        ("grep_only", set(), "grep_only"),
    ],
)
def test_a_variant_says_what_it_needs_and_its_template(name: str, needs: set[str], template: str) -> None:
    assert VARIANTS[name].needs == needs and VARIANTS[name].template == template


def test_options_are_parsed_and_unknown_names_and_keys_list_the_known_ones() -> None:
    settings = resolve_variant("bm25_grep", {"top_k": "3", "grep_top_k": 4, "case_sensitive": "true", "reranker_min_score": "7", "timing": True})
    assert (settings.top_k, settings.grep_top_k, settings.case_sensitive, settings.reranker_min_score, settings.timing) == (3, 4, True, 7, True)
    assert settings.options() == {"top_k": 3, "grep_top_k": 4, "case_sensitive": True, "reranker_min_score": 7, "timing": True}
    with pytest.raises(ConfigError, match=r"unknown retrieval variant 'bm26' \(known: .*alltools.*bm25.*terminal_use_write"):
        resolve_variant("bm26")
    with pytest.raises(ConfigError, match=r"unknown retrieval option 'topk' \(known: top_k, grep_top_k, case_sensitive"):
        resolve_variant("bm25", {"topk": "3"})
    for key, bad in (("top_k", "0"), ("top_k", "ten"), ("case_sensitive", "maybe"), ("embeddings_role", "Bad Role")):
        with pytest.raises(ConfigError, match=f"retrieval option {key}="):
            resolve_variant("bm25", {key: bad})
    assert set(OPTIONS) >= {"top_k", "grep_top_k", "case_sensitive", "reranker_min_score"}


def test_refusal_names_missing_model_roles_only_when_the_roles_are_given() -> None:
    dense = resolve_variant("openai_embeddings_reranker", {"reranker_role": "rater"})
    assert refusal(dense) is None
    assert refusal(dense, roles={"embeddings", "rater"}) is None
    reason = refusal(dense, roles={"agent"}) or ""
    assert "embeddings role 'embeddings' (--embeddings-model)" in reason and "reranker role 'rater'" in reason
    assert refusal(resolve_variant("bm25"), roles=()) is None


# --------------------------------------------------------------------------- BM25


def okapi(corpus: list[list[str]], query: list[str], k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25) -> list[float]:
    """Okapi BM25 with an idf floor, written out from its formula (independently of bench's index)."""
    n, avgdl = len(corpus), sum(map(len, corpus)) / len(corpus)
    df = {t: sum(t in doc for doc in corpus) for doc in corpus for t in doc}
    idf = {t: math.log(n - f + 0.5) - math.log(f + 0.5) for t, f in df.items()}
    floor = epsilon * sum(idf.values()) / len(idf)
    idf = {t: floor if v < 0 else v for t, v in idf.items()}
    return [sum(idf.get(q, 0) * doc.count(q) * (k1 + 1) / (doc.count(q) + k1 * (1 - b + b * len(doc) / avgdl)) for q in query) for doc in corpus]


def test_bm25_scores_follow_okapi_with_tau2s_tokens_and_the_idf_floor() -> None:
    texts = [d.content for d in small_kb().documents] + ["fee fee fee the the", "the dollars the"]
    index = BM25Index(texts)
    corpus = [t.lower().split() for t in texts]
    for query in ("fee", "annual fee", "the the", "dollars. fee:", "FEE", "nothing-matches"):
        assert index.scores(query.lower().split()) == pytest.approx(okapi(corpus, query.lower().split()), abs=1e-12)
    common = BM25Index(["x the", "y the", "z the", "w"])  # "the" in 3 of 4 texts: a negative idf, raised to the floor
    raw = {t: math.log(4 - len(p) + 0.5) - math.log(len(p) + 0.5) for t, p in common.postings.items()}
    assert raw["the"] < 0 and common.idf["the"] == pytest.approx(0.25 * sum(raw.values()) / len(raw))


def test_bm25_returns_top_k_with_zero_scores_in_document_order_and_nothing_for_a_blank_query() -> None:
    index = BM25Index(["a b", "c d", "e f", "a", "g h"])
    assert [i for i, _ in index.top("a", 3)] == [3, 0, 1]
    assert BM25Index(["a b", "c d", "e f", "a"]).top("a", 2) == [(0, 0.0), (1, 0.0)]  # idf 0: in half the documents
    assert index.top("zzz", 2) == [(0, 0.0), (1, 0.0)]
    assert index.top("   ", 5) == [] and BM25Index([]).top("a", 5) == []
    assert BM25Index(["", " "]).top("a", 5) == [(0, 0.0), (1, 0.0)]  # documents without words


def test_bm25_rankings_and_scores_equal_tau2s_for_recorded_queries(tau2_kb: KnowledgeBase) -> None:
    """rank_bm25 0.2.2 under tau2's pipeline, recorded on the reference documents: every id and float score equal."""
    compared, position = 0, {doc.id: n for n, doc in enumerate(tau2_kb.documents)}
    for case in RECORDED["bm25"]:
        search = type(toolkit(tau2_kb, "bm25", **case["options"]))._knowledge  # type: ignore[attr-defined]
        found = [[position[doc.id], score] for doc, score in search.bm25_hits(case["query"])]
        assert found == case["ranked"], (case["query"], case["options"])
        compared += 1
    assert compared == len(RECORDED["bm25"]) >= 25


def test_kb_search_text_is_tau2s_byte_for_byte_without_the_timing_line(tau2_kb: KnowledgeBase) -> None:
    tools: dict[str, Toolkit] = {}
    for case in (c for c in RECORDED["bm25"] if c["output_sha256"]):
        key = json.dumps(case["options"], sort_keys=True)
        tools.setdefault(key, toolkit(tau2_kb, "bm25", **case["options"]))
        text = tools[key].call_tool("KB_search", {"query": case["query"]})
        assert hashlib.sha256(text.encode()).hexdigest() == case["output_sha256"], case["query"]


def test_the_glob_order_here_is_the_order_tau2_read(tau2_kb: KnowledgeBase) -> None:
    """Path.glob order is the file system's: equal here (the recording machine), maybe not on another file system."""
    order = [doc.id for doc in KnowledgeBase.from_directory(DOCUMENTS).documents]
    if order != RECORDED["documents"]:
        pytest.skip("this file system lists the documents in another order than the recording machine did")
    assert order == [doc.id for doc in tau2_kb.documents]


# --------------------------------------------------------------------------- grep


def test_grep_rankings_equal_tau2s_for_recorded_patterns(tau2_kb: KnowledgeBase) -> None:
    position = {doc.id: n for n, doc in enumerate(tau2_kb.documents)}
    for case in RECORDED["grep"]:
        tools = toolkit(tau2_kb, "grep_only", **case["options"])
        found = [[position[doc.id], score] for doc, score in type(tools)._knowledge.grep_hits(case["pattern"])]  # type: ignore[attr-defined]
        assert found == case["ranked"], (case["pattern"], case["options"])
        if case["output_sha256"]:
            text = tools.call_tool("grep", {"pattern": case["pattern"]})
            assert hashlib.sha256(text.encode()).hexdigest() == case["output_sha256"], case["pattern"]
    assert len(RECORDED["grep"]) >= 25


def test_grep_counts_matches_ignores_case_by_default_and_reads_a_bad_expression_as_text() -> None:
    tools = toolkit(small_kb(), "grep_only")
    text = tools.call_tool("grep", {"pattern": "fee"})
    assert [line for line in text.splitlines() if line.startswith("   ")][::3] == ["   ID: fees", "   ID: fees-2"]  # a tie
    assert text.count("Score: 2.0000") == 2
    assert "ID: fees-2" in toolkit(small_kb(), "grep_only").call_tool("grep", {"pattern": "fee:"})
    assert "No document matches" in tools.call_tool("grep", {"pattern": "(unclosed"})
    sensitive = toolkit(small_kb(), "grep_only", case_sensitive=True).call_tool("grep", {"pattern": "FEE"})
    assert "Score: 1.0000" in sensitive and "ID: fees\n" not in sensitive
    assert toolkit(small_kb(), "grep_only", grep_top_k=1).call_tool("grep", {"pattern": "e"}).count("   ID: ") == 1
    assert tools.call_tool("grep", {"pattern": "  "}) == own_render(None, "knowledge_no_matches", pattern="  ")


# --------------------------------------------------------------------------- texts and tools


def test_results_have_tau2s_layout_and_untitled_documents() -> None:
    doc, empty = small_kb().documents[0], small_kb().documents[2]
    assert format_hits([(doc, 1.23456), (empty, 0.0)]) == (
        f"1. Fees\n   ID: fees\n   Score: 1.2346\n   Content: {doc.content}\n\n"
        f"2. Untitled\n   ID: empty\n   Score: 0.0000\n   Content: {empty.content}\n"
    )


def test_kb_search_finds_nothing_with_its_text_and_can_add_tau2s_timing_line() -> None:
    plain = toolkit(small_kb(), "bm25").call_tool("KB_search", {"query": " "})
    assert plain == packaged("knowledge_no_results") == "No document in the knowledge base matched the query."
    timed = toolkit(small_kb(), "bm25", timing="true").call_tool("KB_search", {"query": "annual fee"})
    assert timed.splitlines()[-1].startswith("[Timing: retrieval=") and ", reranking=" in timed and "ms, total=" in timed


def test_kb_search_bm25_takes_k_as_tau2_slices_it() -> None:
    tools = toolkit(small_kb(), "alltools", top_k=3)
    assert tools.call_tool("KB_search_bm25", {"query": "fee"}).count("   ID: ") == 3
    assert tools.call_tool("KB_search_bm25", {"query": "fee", "k": 20}).count("   ID: ") == 3  # capped by top_k
    assert tools.call_tool("KB_search_bm25", {"query": "fee", "k": 1}).count("   ID: ") == 1
    assert tools.call_tool("KB_search_bm25", {"query": "fee", "k": -1}).count("   ID: ") == 2
    with pytest.raises(ToolError, match="k must be an integer"):
        tools.call_tool("KB_search_bm25", {"query": "fee", "k": "2"})


def test_tool_schemas_carry_tau2s_names_and_parameters_with_our_descriptions() -> None:
    specs = knowledge_toolkit(Toolkit, small_kb(), resolve_variant("alltools")).specs()
    assert all(spec.kind is ToolKind.READ for spec in specs.values())
    params = {name: spec.schema["function"]["parameters"] for name, spec in specs.items()}
    assert params["KB_search_bm25"]["required"] == ["query"] and params["KB_search_bm25"]["properties"]["k"]["default"] == 10
    assert list(params["shell"]["properties"]) == ["command"]
    grep_params = knowledge_toolkit(Toolkit, small_kb(), resolve_variant("grep_only")).specs()["grep"].schema
    assert list(grep_params["function"]["parameters"]["properties"]) == ["pattern"]


def test_the_toolkit_extends_the_domains_own_and_keeps_its_tools() -> None:
    class Bank(Toolkit):
        @tool(ToolKind.WRITE)
        def open_account(self, name: str) -> str:
            """Open an account.

            Args:
                name (str): The holder.
            """
            return f"opened {name}"

    composed = knowledge_toolkit(Bank, small_kb(), resolve_variant("bm25_grep"))
    assert issubclass(composed, Bank) and list(composed.specs()) == ["KB_search", "grep", "open_account"]
    assert list(Bank.specs()) == ["open_account"]
    instance = composed(State.from_records({}))
    assert instance.call_tool("open_account", {"name": "Ann"}) == "opened Ann"
    assert isinstance(composed(State.from_records({})), Toolkit)


def test_models_tools_outside_a_conversation_say_so() -> None:
    import asyncio

    tools = toolkit(small_kb(), "openai_embeddings")
    with pytest.raises(ToolError, match="only inside a conversation"):
        asyncio.run(tools.call_tool("KB_search", {"query": "fee"}))


def test_the_package_ships_every_text_with_its_placeholders_and_benchs_profile_holds_none() -> None:
    for key, allowed in PLACEHOLDERS.items():
        text = packaged(key)
        assert text and {m.group(1) for m in PLACEHOLDER.finditer(text)} == allowed, key
    assert not set(PLACEHOLDERS) & set(load_profile(None).texts)  # bench's profile (and its hash) owes nothing to us


def test_a_profile_directory_replaces_a_text_by_its_key(tmp_path: Path) -> None:
    (tmp_path / "texts").mkdir()
    (tmp_path / "profile.toml").write_text('format = 1\nname = "mine"\n', encoding="utf-8")
    (tmp_path / "texts" / "knowledge_no_matches.md").write_text("nothing for {{pattern}}", encoding="utf-8")
    profile = load_profile(tmp_path)
    cls = knowledge_toolkit(Toolkit, small_kb(), resolve_variant("bm25_grep"))
    tools = cls(State.from_records({}), context=ToolContext(profile=profile))
    assert tools.call_tool("grep", {"pattern": "zzz"}) == "nothing for zzz"
    assert tools.call_tool("KB_search", {"query": " "}) == packaged("knowledge_no_results")  # a key it lacks: ours
    assert refusal(resolve_variant("bm25"), profile=profile) is None


def test_a_profile_text_with_a_placeholder_its_key_does_not_take_is_refused(tmp_path: Path) -> None:
    (tmp_path / "texts").mkdir()
    (tmp_path / "profile.toml").write_text('format = 1\nname = "typo"\n', encoding="utf-8")
    (tmp_path / "texts" / "knowledge_no_matches.md").write_text("nothing for {{patern}}", encoding="utf-8")
    reason = refusal(resolve_variant("bm25"), profile=load_profile(tmp_path)) or ""
    assert reason == "profile 'typo': text 'knowledge_no_matches' uses {{patern}}, which it does not take (it takes: pattern)"


def test_settings_default_to_tau2s() -> None:
    settings = RetrievalSettings(variant=VARIANTS["bm25"])
    assert (settings.top_k, settings.grep_top_k, settings.case_sensitive, settings.reranker_min_score) == (10, 10, False, 5)
    assert settings.shell_timeout_s == 30 and settings.timing is False and settings.options() == {}


def test_every_public_name_resolves() -> None:
    import bench_knowledge

    missing = [name for name in bench_knowledge.__all__ if not hasattr(bench_knowledge, name)]
    assert not missing and sorted(bench_knowledge.__all__) == sorted(set(bench_knowledge.__all__))
    assert bench_knowledge.RETRIEVAL_VARIANTS is bench_knowledge.VARIANTS and bench_knowledge.retrieval_refusal is refusal
