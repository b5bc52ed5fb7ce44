"""Failure attribution's accuracy on the labelled set of scripted conversations (plugins/trust/tests/attribution_cases.py).

Plays every case through the real run loop on the mock domain, then prints the confusion table (true label by the
rules' label), the accuracy per true label, and the cases the rules get wrong with the rule that fired.

    .venv/bin/python benchmarks/attribution_accuracy.py [--db PATH] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins" / "trust" / "tests"))

from attribution_cases import CASES, confusion, play_cases

from bench_kernel import ATTRIBUTION_LABELS as LABELS


def main() -> None:
    """Play the set and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, help="results database to play into (default: a temporary one)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        results = play_cases(args.db or Path(folder) / "cases.db")
    table, accuracy = confusion(results)
    missed = {name: {"truth": t, "label": label, "rule": rule} for name, (t, label, rule) in sorted(results.items()) if t != label}
    if args.json:
        print(
            json.dumps(
                {
                    "cases": len(CASES),
                    "accuracy": accuracy,
                    "missed": missed,
                    "confusion": {f"{t}->{label}": n for (t, label), n in sorted(table.items())},
                },
                indent=2,
            )
        )
        return
    labels = [*LABELS, *sorted({label for _, label in table} - set(LABELS))]
    width = max(len(label) for label in labels) + 2
    print(f"{len(CASES)} scripted conversations, played through the run loop on the mock domain\n")
    print("truth \\ label".ljust(width + 2) + "".join(label[:width].rjust(width) for label in labels) + "  cases".rjust(8))
    for truth in LABELS:
        counts = [table[(truth, label)] for label in labels]
        print(truth.ljust(width + 2) + "".join(str(n).rjust(width) for n in counts) + str(sum(counts)).rjust(8))
    print()
    for truth, share in accuracy.items():
        total = sum(n for (t, _), n in table.items() if t == truth)
        print(f"accuracy {truth}: {share:.1%} ({table[(truth, truth)]} of {total})")
    for name, miss in missed.items():
        print(f"missed {name}: truth {miss['truth']}, labelled {miss['label']} by rule {miss['rule']}")


if __name__ == "__main__":
    main()
