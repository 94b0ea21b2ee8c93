#!/usr/bin/env bash
# CI check of the asv suite (about a minute): a broken benchmark fails the build.
#   1. asv check           every benchmark imports and has valid signatures
#   2. python smoke.py     every benchmark class runs once (impl=einplan, threads=1)
#   3. asv run --quick     a tiny subset through asv itself (results not saved)
# Uses the einplan importable from the current python (--python=same): run it
# after the package is built/installed.  Exit status non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")"

if ! python -m asv --version >/dev/null 2>&1; then
    python -m pip install --quiet "asv>=0.6"
fi
python -m asv machine --yes >/dev/null            # asv run needs a machine description

python -m asv check --python=same
python smoke.py

# asv run exits 2 when a benchmark fails (set -e stops here then)
python -m asv run --python=same --quick --show-stderr --dry-run \
    --bench '^bench_field_cases\.Jax\.' --bench '^bench_gemm\.GEMMRate\.'
echo "check_quick: asv check, smoke run and quick asv subset passed"
