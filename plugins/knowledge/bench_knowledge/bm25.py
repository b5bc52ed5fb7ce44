"""Okapi BM25 whose scores equal rank_bm25 0.2.2's `BM25Okapi` bit for bit, in pure Python.

rank_bm25 scores a query with numpy arrays, one element-wise operation at a time; each is an IEEE double
operation, so doing the same operations in the same order on Python floats gives the same doubles. A query
token absent from a document adds `idf * 0.0`, which leaves a score unchanged, so only the documents that
hold a token are visited (postings) and the others keep their score without the work.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

K1 = 1.5
B = 0.75
EPSILON = 0.25


def tokenize(text: str) -> list[str]:
    """tau2's tokens: lower-cased, split on whitespace, punctuation kept on the tokens."""
    return text.lower().split()


class BM25Index:
    """The index of a list of texts; `scores(tokens)` gives one score per text, in order."""

    def __init__(self, texts: Sequence[str], *, k1: float = K1, b: float = B, epsilon: float = EPSILON) -> None:
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self.size = len(texts)
        self.postings: dict[str, list[tuple[int, int]]] = {}
        """token -> [(text index, count)] in text order."""
        lengths = []
        for index, text in enumerate(texts):
            tokens = tokenize(text)
            lengths.append(len(tokens))
            counts: dict[str, int] = {}
            for token in tokens:
                counts[token] = counts.get(token, 0) + 1
            for token, count in counts.items():
                self.postings.setdefault(token, []).append((index, count))
        self.avgdl = sum(lengths) / self.size if self.size else 0.0
        # rank_bm25's per-document term: k1 * (1 - b + b * doc_len / avgdl), evaluated left to right as numpy does
        # (texts without tokens make avgdl 0, but then no token has postings and the term is never used).
        self.length_norm = [k1 * (1 - b + b * length / self.avgdl) if self.avgdl else k1 for length in lengths]
        self.idf = self._idf()

    def _idf(self) -> dict[str, float]:
        # The postings keep tokens in first-seen order, the order rank_bm25 sums its idfs in.
        idf, negative, total = {}, [], 0.0
        for token, docs in self.postings.items():
            freq = len(docs)
            value = math.log(self.size - freq + 0.5) - math.log(freq + 0.5)
            idf[token] = value
            total += value
            if value < 0:
                negative.append(token)
        if idf:
            floor = self.epsilon * (total / len(idf))
            for token in negative:
                idf[token] = floor
        return idf

    def scores(self, tokens: Sequence[str]) -> list[float]:
        """One score per text for these query tokens (a repeated token counts each time)."""
        scores = [0.0] * self.size
        boost = self.k1 + 1
        for token in tokens:
            idf = self.idf.get(token) or 0
            for index, count in self.postings.get(token, ()):
                scores[index] += idf * (count * boost / (count + self.length_norm[index]))
        return scores

    def top(self, query: str, k: int) -> list[tuple[int, float]]:
        """The k best texts for a query as (index, score), best first, ties in text order; zero scores included.

        A blank query finds nothing (tau2's retriever returns no results for it).
        """
        if not query.strip() or self.size == 0:
            return []
        scores = self.scores(tokenize(query))
        order = sorted(range(self.size), key=scores.__getitem__, reverse=True)
        return [(index, scores[index]) for index in order[: max(0, min(k, self.size))]]
