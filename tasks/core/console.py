"""Rich consoles for the CLI: full width when the output goes to a log or a pipe."""
from __future__ import annotations

import sys

from rich.console import Console


def console(stderr: bool = False) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, width=None if stream.isatty() else 160)
