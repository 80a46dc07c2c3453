#!/usr/bin/env bash
# The test suite (README's test command; .ci/run calls it): the Rust workspace, then the Python
# package built from this checkout and tested with pytest (scripts/test_python.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# The `ci` profile (Cargo.toml): release code generation without LTO and debug info, so the
# 50-odd test binaries build in minutes, not half an hour, on 2 cores.
cargo test --profile ci --workspace
# The README's main command, as a user types it (in the ci profile, already built above): a
# workspace member that adds a binary must not make `cargo run` ambiguous again.
smoke_out="$(mktemp -d)"
cargo run --profile ci -q -- run scenarios/example.toml --quiet --out "$smoke_out/example" >/dev/null
test -s "$smoke_out/example/summary.json"
rm -rf "$smoke_out"
scripts/test_python.sh
