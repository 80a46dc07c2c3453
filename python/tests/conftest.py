"""Shared fixtures: the repository's bundled scenarios."""

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def example() -> Path:
    """scenarios/example.toml: a 2 MiB permutation on a 128-host fat tree (tests shrink it)."""
    return REPO / "scenarios" / "example.toml"
