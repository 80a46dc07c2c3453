"""Shared fixtures: the repository's bundled scenarios."""

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def example() -> Path:
    """scenarios/example.toml: a 2 MiB permutation on a 128-host fat tree (tests shrink it)."""
    return REPO / "scenarios" / "example.toml"


@pytest.fixture(scope="session")
def traced_dir(tmp_path_factory) -> Path:
    """A results folder of the example with small flows and every optional table on (traced
    connections and ToR uplinks, the message log), written by ``fabricsim.run(out=...)``: the
    files ``fabricsim run --out`` writes."""
    import fabricsim
    from test_run import SMALL

    out = tmp_path_factory.mktemp("traced") / "run"
    fabricsim.run(REPO / "scenarios" / "example.toml", overrides=SMALL, progress=False, out=out)
    return out
