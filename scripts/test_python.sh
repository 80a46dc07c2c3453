#!/usr/bin/env bash
# Builds the Python package `fabricsim` (python/, over crates/fabricsim-py) into a virtual
# environment and runs its tests (python/tests) with pytest. Needs python3 (>= 3.9, with venv)
# and cargo; maturin, numpy, pandas, pytest, matplotlib, polars, pyarrow and ray come from PyPI; as root with
# apt-get, Debian's chromium is installed for the report's browser test.
#   FABRICSIM_VENV  the environment to use or create (default target/py-venv)
#   PYTHON          the interpreter that creates it (default python3)
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${FABRICSIM_VENV:-target/py-venv}"
if [ ! -x "$venv/bin/python" ]; then
  "${PYTHON:-python3}" -m venv "$venv"
fi
venv="$(cd "$venv" && pwd)"
# maturin's build backend runs the `maturin` command: the environment's own, found on PATH.
export PATH="$venv/bin:$PATH"
pip install --quiet --disable-pip-version-check "maturin>=1.5,<2" pandas pytest matplotlib polars pyarrow
# Ray publishes wheels for some Python versions only: without one its tests are skipped (and say so).
pip install --quiet --disable-pip-version-check ray || echo "test_python.sh: ray did not install; the Ray sweep tests will be skipped" >&2
# Built with the `ci` profile (Cargo.toml: release without LTO), as scripts/test.sh builds the
# tests: a wheel for use is `pip install ./python` (release).
MATURIN_PEP517_ARGS="--profile ci" pip install --quiet --disable-pip-version-check --no-build-isolation --force-reinstall --no-deps ./python
# The sweep tests also run `fabricsim sweep` through the CLI binary (a no-op after scripts/test.sh).
cargo build --profile ci --quiet -p fabricsim-cli
export FABRICSIM_BIN="$PWD/target/ci/fabricsim"
# The report's test opens a report in a real headless browser, Debian's chromium: installed
# here when missing where we can (root with apt-get, as on CI); there a browser still missing
# fails that test instead of skipping it.
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  if ! command -v chromium >/dev/null 2>&1; then
    echo "test_python.sh: installing chromium for the report's browser test" >&2
    apt_options=(-qq -o Acquire::Retries=3 -o DPkg::Lock::Timeout=300)
    DEBIAN_FRONTEND=noninteractive apt-get "${apt_options[@]}" update
    DEBIAN_FRONTEND=noninteractive apt-get "${apt_options[@]}" install -y --no-install-recommends chromium >/dev/null
  fi
  export FABRICSIM_REQUIRE_BROWSER=1
fi
# Run from the repository root with the installed package (python/ itself is not on sys.path).
pytest -q python/tests
