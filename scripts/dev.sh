#!/usr/bin/env bash
# Set up a virtualenv with the kernel and every plugin, then run the demo or the tests.
#   bash scripts/dev.sh demo   # bench run --plugin mock, offline, prints the report
#   bash scripts/dev.sh test   # the whole test suite (kernel + every plugin)
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${BENCH_VENV:-.venv}"
python="${PYTHON:-python3}"

setup() {
    [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
    local args=(-e "./kernel[test]")
    for dir in plugins/*/ contrib_domains/*/ contrib_metrics/*/ contrib_judges/*/; do
        [ -f "$dir/pyproject.toml" ] && args+=(-e "./$dir")
    done
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${args[@]}"
}

case "${1:-}" in
    setup) setup ;;
    demo) setup; shift; "$venv/bin/bench" run --plugin mock "$@" ;;
    test) setup; shift; "$venv/bin/python" -m pytest "$@" ;;
    *) echo "usage: bash scripts/dev.sh setup|demo|test [args...]" >&2; exit 2 ;;
esac
