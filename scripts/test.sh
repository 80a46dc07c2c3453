#!/usr/bin/env bash
# The test suite (README's test command; .ci/run calls it): the Rust workspace, then the Python
# package built from this checkout and tested with pytest (scripts/test_python.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release --workspace
scripts/test_python.sh
