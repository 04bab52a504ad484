"""User-named output files on a shared machine (issue #35, item 7), checked per command through the real `papers`
entry point: a symbolic link another account planted at the output option (aimed at a root-only file, or dangling),
a device or FIFO, and an output that is one of the command's inputs are refused before any work, one line, exit 2;
a good write has the bytes of a direct write and the mode of a new file (the umask) or of the file it replaces.

A command's table runs in ONE child process (tests/cli_table.py: each start of `papers` costs seconds), in root's
own folder, with the other account's 0777 folder (`shared`) beside it.
"""
from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.cli_table import Result, Row, run_rows

SECRET = "root only: must survive\n"
UMASK = 0o027  # the child's: a new output must be 0o640
PLANT = "import os, sys; a = sys.argv[1:]; [os.symlink(a[i], a[i + 1]) for i in range(0, len(a), 2)]"


@dataclass(frozen=True)
class Case:
    work: Path  # root's own folder, the working directory of the commands
    shared: Path  # the other account's 0777 folder, where it plants its links
    secret: Path  # root-only (0600), in a folder only root can enter
    results: dict[str, Result]


def plant(other, *pairs: Path) -> None:
    """Symbolic links made by the other account: (target, link), (target, link), ..."""
    done = other.python(PLANT, *map(str, pairs))
    assert done.returncode == 0, done.stderr


def output_case(tmp_path_factory, other, inputs: Callable[[Path], None], rows: Callable[[Path], dict[str, tuple[str, ...]]],
                links: tuple[str, ...] = (), dangling: tuple[str, ...] = ()) -> Iterator[Case]:
    """The fixture's body: `inputs(work)` makes the input files, the other account links `shared/<name>` to the secret
    for each of `links` and to nowhere (`shared/made-by-<name>`) for each of `dangling`, then every row of
    `rows(shared)` (name -> papers ARGS) runs in one child under UMASK."""
    work = tmp_path_factory.mktemp("outputs")  # under pytest's 0700 folder: the other account cannot enter
    secret = tmp_path_factory.mktemp("root_only") / "secret"
    secret.write_text(SECRET)
    secret.chmod(0o600)
    shared = other.folder()
    shared.chmod(0o777)  # a scratch folder open to all, as shared machines have
    inputs(work)
    plant(other, *(p for name in links for p in (secret, shared / name)),
          *(p for name in dangling for p in (shared / f"made-by-{name}", shared / name)))
    table = rows(shared)
    umask = os.umask(UMASK)
    try:
        results = run_rows([Row(args) for args in table.values()], cwd=work)
    finally:
        os.umask(umask)
    try:
        yield Case(work, shared, secret, dict(zip(table, results)))
    finally:
        shutil.rmtree(shared)


def assert_refused(result: Result, *names: str) -> None:
    """Exit 2, exactly one line on stderr naming every culprit, no traceback, nothing on stdout."""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.code == 2, result.stderr
    assert len(lines) == 1, result.stderr
    assert all(name in lines[0] for name in names), (names, lines[0])
    assert "Traceback" not in result.stderr + result.stdout


def assert_link_refused(case: Case, row: str, option: str) -> None:
    """The planted link to the root-only file is refused and the file is as it was."""
    assert_refused(case.results[row], option, str(case.shared), "symbolic link")
    assert case.secret.read_text() == SECRET
    assert stat.S_IMODE(case.secret.stat().st_mode) == 0o600


def assert_planted_link_refused(tmp_path_factory, other, args: tuple[str, ...], link: str, option: str = "--out",
                                inputs: Callable[[Path], None] = lambda work: None) -> None:
    """`papers ARGS OPTION shared/<link>`, a link the other account planted to the root-only file, is refused (a table
    of one row)."""
    rows = lambda shared: {"link": (*args, option, str(shared / link))}  # noqa: E731
    for case in output_case(tmp_path_factory, other, inputs, rows, links=(link,)):
        assert_link_refused(case, "link", option)


def assert_dangling_refused(case: Case, row: str, option: str, link: str) -> None:
    """The planted link to nowhere is refused and creates nothing."""
    assert_refused(case.results[row], option, "dangling", "symbolic link")
    assert not (case.shared / f"made-by-{link}").exists()


def assert_written(case: Case, name: str, expected: bytes, mode: int = 0o666 & ~UMASK) -> None:
    """`work/name` holds the bytes of a direct write, with `mode` (a new file's: the umask's), and no temporary
    file is left behind."""
    assert (case.work / name).read_bytes() == expected
    assert stat.S_IMODE((case.work / name).stat().st_mode) == mode
    leftovers = sorted(p.name for p in case.work.iterdir() if p.name.startswith("."))
    assert leftovers == [], leftovers
