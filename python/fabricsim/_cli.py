"""What the commands on a results folder (``fabricsim plot``, ``fabricsim report``) share: the
argument parser with ``RUN_DIR`` and ``--out``, and reading the folder with one error line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from ._result import Result


def parser(command: str, description: str, out_help: str) -> argparse.ArgumentParser:
    """The parser of ``fabricsim COMMAND RUN_DIR [--out PATH]``; commands add their options."""
    p = argparse.ArgumentParser(prog=f"fabricsim {command}", description=description)
    p.add_argument("run_dir", metavar="RUN_DIR", type=Path, help="results folder of a run (`fabricsim run --out RUN_DIR`)")
    p.add_argument("--out", type=Path, help=out_help)
    return p


def load(run_dir: Path) -> Optional["Result"]:
    """The run in ``run_dir``, or None after printing why it cannot be read."""
    from ._result import load as load_result

    try:
        return load_result(run_dir)
    except (FileNotFoundError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return None
