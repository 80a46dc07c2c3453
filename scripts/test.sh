#!/usr/bin/env bash
# The test suite (README's test command; .ci/run calls it): the Rust workspace, then the Python
# package built from this checkout and tested with pytest (scripts/test_python.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# The `ci` profile (Cargo.toml): release code generation without LTO and debug info, so the
# 50-odd test binaries build in minutes, not half an hour, on 2 cores.
cargo test --profile ci --workspace
scripts/test_python.sh
