"""`python -m stages <paper> <stage>` runs one stage; `python -m stages report` the claims report."""
from __future__ import annotations

import sys

from tasks.core.io import repo_root

from .environment import configure

USAGE = "usage: python -m stages <paper> <stage>  |  python -m stages report"


def main(argv: list[str]) -> int:
    root = repo_root()
    configure(root)
    if argv == ["report"]:
        from .report import write_report

        print(write_report(root))
        return 0
    if len(argv) != 2:
        print(USAGE, file=sys.stderr)
        return 2
    from .runner import run_stage

    try:
        return run_stage(root, *argv)
    except KeyError as error:
        print(f"error: {error.args[0]}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
