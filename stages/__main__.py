"""`python -m stages <paper> <stage>` runs one stage; `python -m stages report` the claims report.

A stage runs in a fork of the warm host when one serves (stages/warm.py), else here.
"""
from __future__ import annotations

import sys

from tasks.core.inputs import InputError
from tasks.core.io import repo_root

from .environment import configure

USAGE = "usage: python -m stages <paper> <stage>  |  python -m stages report"


def main(argv: list[str]) -> int:
    root = repo_root()
    configure(root)
    if argv == ["report"]:
        from .report import write_report

        try:
            print(write_report(root))
        except InputError as error:  # a claims.json that is no claims document
            print(f"error: {error}", file=sys.stderr)
            return 2
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
    from .warm import run_in_host

    try:
        configure(repo_root())  # the host's child takes this environment, so it must be the stage's
    except InputError as error:  # a bad PAPERS_* setting
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)

    def failed_everywhere(child: int) -> None:
        from .lost import fail_lost_stage

        fail_lost_stage(repo_root(), sys.argv[1:], child)

    warm = run_in_host("stages", sys.argv[1:], on_lost=failed_everywhere)
    sys.exit(main(sys.argv[1:]) if warm is None else warm)
