"""Table-driven runs of `papers` commands as a user meets them, under a memory limit.

Starting `papers` costs seconds of imports, so a table of bad inputs runs in one child process
(the address-space limit applies to every row): each row calls the real entry point,
`stages.cli.main`, with its argv, and records the exit code, stdout and stderr. A row that
crashes the child (a segfault, the OOM killer) fails every row after it, loudly.
"""
from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import ROOT, stage_env

MEMORY_LIMIT_MB = 6144  # address space of the child; torch alone maps ~2 GB of it

_CHILD = r"""
import contextlib, io, json, os, resource, sys
limit = int(sys.argv[1]) * 2**20
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
rows = json.loads(sys.stdin.read())
from stages.cli import main
results = []
for row in rows:
    out, err = io.StringIO(), io.StringIO()
    sys.argv = ["papers", *row["args"]]
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main()
        except SystemExit as exit:
            code = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
        except BaseException:
            import traceback
            traceback.print_exc()
            code = -1
    results.append({"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()})
    os.chdir(row.get("cwd") or os.getcwd())
sys.__stdout__.write(json.dumps(results))
"""


@dataclass(frozen=True)
class Row:
    """One invocation: `papers ARGS`; what it must exit with and what stderr must name."""

    args: tuple[str, ...]
    code: int = 2
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class Result:
    code: int
    stdout: str
    stderr: str


def run_rows(rows: list[Row], cwd: Path = ROOT, memory_mb: int = MEMORY_LIMIT_MB, timeout: float = 600,
             env: dict[str, str] | None = None) -> list[Result]:
    """Run every row in one child process limited to `memory_mb` of address space (environment: `env`, else a
    stage's)."""
    payload = json.dumps([{"args": list(row.args)} for row in rows])
    done = subprocess.run([sys.executable, "-c", _CHILD, str(memory_mb)], input=payload, cwd=cwd,
                          env=env if env is not None else stage_env(ROOT), capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"the table's process died (exit {done.returncode}):\n{done.stderr[-3000:]}"
    return [Result(**result) for result in json.loads(done.stdout)]


def check_rows(rows: list[Row], **options) -> None:
    """Each row exits as it must, its stderr names every culprit, and nothing prints a traceback."""
    failures = []
    for row, result in zip(rows, run_rows(rows, **options)):
        problems = []
        if result.code != row.code:
            problems.append(f"exit {result.code}, expected {row.code}")
        if "Traceback" in result.stderr or "Traceback" in result.stdout:
            problems.append("printed a traceback")
        problems += [f"stderr does not name {name!r}" for name in row.names if name not in result.stderr]
        if row.code == 2 and len([line for line in result.stderr.splitlines() if line.strip()]) > 2:
            problems.append("more than one line of error")
        if problems:
            failures.append(f"papers {' '.join(row.args)}: {'; '.join(problems)}\n  stderr: {result.stderr.strip()[-800:]}")
    assert not failures, "\n".join(failures)


def ok(*args: str) -> Row:
    """`papers ARGS` must succeed."""
    return Row(tuple(args), code=0)


def bad(args: tuple[str, ...], *names: str) -> Row:
    """`papers ARGS` must exit 2 with one line naming each of `names`."""
    return Row(tuple(args), code=2, names=names)


def write(path: Path, text: str | bytes) -> str:
    """An input file for a row: `text` written at `path`, whose name it returns."""
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(path)
