"""``python -m fabricsim COMMAND ...``: the commands of the Python package, which the ``fabricsim``
binary forwards to (``fabricsim sweep FILE`` runs ``python3 -m fabricsim sweep FILE``).

Commands:
  sweep FILE     run a sweep file in parallel (local cores or a Ray cluster), resumable
  plot RUN_DIR   plot a run's outputs to image files
  report RUN_DIR write one self-contained HTML page about a run

Each command lives in its own module with a ``main(argv) -> int``; ``COMMAND --help`` says more.
"""

from __future__ import annotations

import importlib
import sys
from typing import List, Optional

#: command name -> the module whose ``main(argv)`` runs it
COMMANDS = {"sweep": "fabricsim._sweep", "plot": "fabricsim._plot", "report": "fabricsim._report"}


def main(argv: Optional[List[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command not in COMMANDS:
        print(f"error: unknown command `{command}`; allowed: {', '.join(COMMANDS)}", file=sys.stderr)
        return 2
    return int(importlib.import_module(COMMANDS[command]).main(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
