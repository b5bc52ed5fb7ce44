"""Record tau2-bench's own BM25 and grep rankings over its banking_knowledge documents (plugins/knowledge/tests/data/).

Run it with a Python that has tau2-bench 1.0.1 and rank-bm25 0.2.2 installed, from outside the bench checkout:

    cd /tmp && TAU2_DATA_DIR=/path/to/tau2/data /path/to/tau2-venv/bin/python \\
        /path/to/bench/scripts/record_tau2_knowledge.py /path/to/bench/plugins/knowledge/tests/data/knowledge_tau2_rankings.json

It builds tau2's environment for the `bm25` and `grep_only` variants (with some retrieval options), asks tau2's
pipelines for each query's ranked (document id, score) and calls the tools for their texts, of which only a
sha256 is kept (without KB_search's timing line). What is written: the document load order, and per query the
ranked documents as positions in that order with their float scores. No text of tau2's.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from typing import Any

BM25_QUERIES = [
    "credit card annual fee",
    "how do I dispute a charge on my debit card",
    "lost card replacement expedited shipping",
    "overdraft",
    "Overdraft Protection",
    "wire transfer limits international",
    "the",
    "the the the",
    "a of to and",
    "zzqxj blorpt",
    "",
    "   ",
    "referral bonus for a friend",
    "cash back rewards points redemption",
    "close my savings account early",
    "verify identity date of birth email phone",
    "transfer_to_human_agents",
    "interest rate APY",
    "business checking account minimum balance",
    "fraud alert travel notice",
    "credit limit increase request",
    "Gold Rewards card",
    "$",
    "ATM withdrawal limit per day",
    "student account eligibility age",
    "deceased account holder estate",
    "crypto",
    "dispute dispute dispute",
    "What's the fee? (monthly)",
    "Überweisung café naïve",
    "APY APY",
    "rho-bank",
]
GREP_PATTERNS = [
    "annual fee",
    "Annual Fee",
    "credit.*card",
    "fee|charge",
    "overdraft",
    "(unclosed",
    "[a-",
    "\\d{3}-\\d{4}",
    "zzqxj",
    "",
    "the",
    "_\\d{4}",
    "Rho-Bank",
    "APY",
    "^#",
    "dispute",
    "*",
    "crypto",
    "wire transfer",
    "Platinum|Diamond",
]
BM25_OPTIONS: list[dict[str, Any]] = [{}, {"top_k": 3}, {"top_k": 25}]
GREP_OPTIONS: list[dict[str, Any]] = [{}, {"grep_top_k": 5}, {"case_sensitive": True}]
NOTE = (
    "Recorded by bench's scripts/record_tau2_knowledge.py from tau2-bench 1.0.1's own retrieval pipeline with rank-bm25 "
    "0.2.2 over tau2's banking_knowledge documents: the document load order tau2 used (Path.glob order on the "
    "recording machine), then per query the ranked documents (as positions in that order) with their float scores, "
    "and the sha256 of the tool's text (KB_search without its timing line, grep as is) when it found documents. "
    "Ids and numbers only."
)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def record() -> dict[str, Any]:
    from tau2.domains.banking_knowledge.environment import get_environment, get_knowledge_base

    order = [doc.id for doc in get_knowledge_base().get_all_documents()]
    position = {doc_id: n for n, doc_id in enumerate(order)}
    found: dict[str, Any] = {"note": NOTE, "tau2_version": "1.0.1", "rank_bm25_version": "0.2.2", "documents": order, "bm25": [], "grep": []}
    for options in BM25_OPTIONS:
        tools = get_environment(retrieval_variant="bm25", retrieval_kwargs=options or None).tools
        for query in BM25_QUERIES:
            ranked = tools._kb_pipeline.retrieve(query)
            text = re.sub(r"\n\n\[Timing: [^\]]*\]$", "", tools.KB_search(query))
            found["bm25"].append(
                {
                    "query": query,
                    "options": options,
                    "ranked": [[position[i], s] for i, s in ranked],
                    "output_sha256": digest(text) if ranked else None,
                }
            )
    for options in GREP_OPTIONS:
        tools = get_environment(retrieval_variant="grep_only", retrieval_kwargs=options or None).tools
        for pattern in GREP_PATTERNS:
            ranked = tools._grep_pipeline.retrieve(pattern)
            found["grep"].append(
                {
                    "pattern": pattern,
                    "options": options,
                    "ranked": [[position[i], s] for i, s in ranked],
                    "output_sha256": digest(tools.grep(pattern)) if ranked else None,
                }
            )
    return found


def write(found: dict[str, Any], path: str) -> None:
    """One line per query, so a change shows as a line in a diff."""
    lines = ["{"]
    for n, (key, value) in enumerate(found.items()):
        end = "," if n < len(found) - 1 else ""
        if key in ("bm25", "grep"):
            cases = ",\n".join("  " + json.dumps(case, ensure_ascii=False) for case in value)
            lines.append(f' "{key}": [\n{cases}\n ]{end}')
        else:
            lines.append(f' "{key}": {json.dumps(value)}{end}')
    lines.append("}")
    with open(path, "w", encoding="utf-8") as file:
        file.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    write(record(), sys.argv[1])
