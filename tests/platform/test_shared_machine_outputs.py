"""User-named output files on a shared machine (issue #35, item 7): through the real `papers` entry point, a
symbolic link another account planted at `--out`/`--sol` (aimed at a root-only file, or dangling), a device
or FIFO, and an output that is one of the command's inputs are refused before any work, one line, exit 2;
a write that fails is one line too and leaves no temporary file; a good write has the bytes of a direct
write and the mode of a new file (the umask) or of the file it replaces.

Every command runs in ONE child process (tests/cli_table.py: each start of `papers` costs seconds).
"""
from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from tasks.core.inputs import InputError, check_output
from tasks.core.io import staged_output
from tests.cli_table import Result, Row, run_rows
from tests.conftest import ROOT
from tests.platform.second_user import other  # noqa: F401

SECRET = "root only: must survive\n"
UMASK = 0o027  # the child's: a new output must be 0o640
G2O = ("VERTEX_SE3:QUAT 0 0 0 0 0 0 0 1\nVERTEX_SE3:QUAT 1 1 0 0 0 0 0 1\nVERTEX_SE3:QUAT 2 2 0 0 0 0 0 1\n"
       "EDGE_SE3:QUAT 0 1 1 0 0 0 0 0 1 " + " ".join("1" if c == r else "0" for r in range(6) for c in range(r, 6)) + "\n"
       "EDGE_SE3:QUAT 1 2 1.1 0 0 0 0 0 1 " + " ".join("1" if c == r else "0" for r in range(6) for c in range(r, 6)) + "\n")
PLANT = "import os, sys; a = sys.argv[1:]; [os.symlink(a[i], a[i + 1]) for i in range(0, len(a), 2)]"


@dataclass(frozen=True)
class Case:
    work: Path  # root's own folder, the working directory of the commands
    shared: Path  # the other account's 0777 folder, where it plants its links
    secret: Path  # root-only (0600), in a folder only root can enter
    results: dict[str, Result]


def plant(other, *pairs: Path) -> None:  # noqa: F811 - the fixture
    """Symbolic links made by the other account: (target, link), (target, link), ..."""
    done = other.python(PLANT, *map(str, pairs))
    assert done.returncode == 0, done.stderr


def inputs(work: Path) -> None:
    """The commands' input files: a pose graph (and a hard link to it), a point, a problem, a mesh, a model."""
    (work / "a.g2o").write_text(G2O)
    os.link(work / "a.g2o", work / "hard.g2o")
    (work / "sub").mkdir()
    np.save(work / "x.npy", np.linspace(-1, 1, 4))
    np.save(work / "X.npy", np.ones((6, 2)))
    (work / "problem.json").write_text('{"problem": "lasso", "X": "X.npy", "y": "y.csv", "lam": 0.1, "iterations": 10}')
    (work / "userfn.py").write_text("def quad(x):\n    return 0.5 * float(x @ x)\n")
    (work / "car.stl").write_bytes(b"solid car\nendsolid car\n")
    (work / "lm").mkdir()
    (work / "lm" / "tiny_lm.json").write_text('{"symbols": ["a"], "config": {"d_model": 4, "context": 4}}')
    (work / "lm" / "model.safetensors").write_bytes(b"")
    (work / "private.g2o").write_text("an older result\n")
    (work / "private.g2o").chmod(0o600)
    os.mkfifo(work / "fifo.npy")


def rows(shared: Path) -> dict[str, tuple[str, ...]]:
    """name -> papers ARGS; `link-*`: the other account's links to the secret, `dangling-*`: to nowhere."""
    link, zovh = (lambda name: str(shared / name)), ("zovh", "estimate", "userfn:quad", "--at", "x.npy", "--queries", "5")
    se3, mip = ("se3-sync", "solve", "--g2o", "a.g2o", "--method", "chain"), ("mip", "stop", "m.mps", "--stopper", "s.pt")
    return {
        "link-se3": (*se3, "--out", link("se3.g2o")),
        "link-mip": (*mip, "--sol", link("mip.sol")),
        "link-qaoa2": ("qaoa2", "solve", "graph.txt", "--policy", "kl", "--out", link("qaoa2.txt")),
        "link-zovh": (*zovh, "--out", link("zovh.npy")),
        "link-prox": ("prox", "solve", "problem.json", "--out", link("prox.npy")),
        "link-ddsvm": ("ddsvm", "fit", "data.csv", "--label", "kind", "--out", link("ddsvm.safetensors")),
        "link-unidrag": ("unidrag", "optimize", "car.stl", "--out", link("unidrag.stl")),
        "link-balora": ("balora", "finetune", "--model", "lm", "--data", "d.txt", "--rank", "2", "--out", link("balora")),
        "dangling-se3": (*se3, "--out", link("dangling.g2o")),
        "dangling-mip": (*mip, "--sol", link("dangling.sol")),
        "device-se3": (*se3, "--out", "/dev/full"),
        "device-mip": (*mip, "--sol", "/dev/full"),
        "fifo-zovh": (*zovh, "--out", "fifo.npy"),
        "input-se3": (*se3, "--out", "a.g2o"),
        "input-se3-spelling": (*se3, "--out", "./sub/../a.g2o"),
        "input-se3-hard-link": (*se3, "--out", "hard.g2o"),
        "input-zovh": (*zovh, "--out", "x.npy"),
        "input-prox-data": ("prox", "solve", "problem.json", "--out", "X.npy"),
        "write-se3": (*se3, "--out", "fresh.g2o"),
        "write-se3-over-private": (*se3, "--out", "private.g2o"),
        "write-zovh": (*zovh, "--out", "H.npy"),
        "write-zovh-no-suffix": (*zovh, "--out", "Hraw"),
    }


@pytest.fixture(scope="module")
def case(tmp_path_factory, other) -> Case:  # noqa: F811 - the fixture
    work = tmp_path_factory.mktemp("outputs")  # under pytest's 0700 folder: the other account cannot enter
    secret = tmp_path_factory.mktemp("root_only") / "secret"
    secret.write_text(SECRET)
    secret.chmod(0o600)
    shared = other.folder()
    shared.chmod(0o777)  # a scratch folder open to all, as shared machines have
    inputs(work)
    plant(other, *(p for name in ("se3.g2o", "mip.sol", "qaoa2.txt", "zovh.npy", "prox.npy", "ddsvm.safetensors",
                                  "unidrag.stl", "balora") for p in (secret, shared / name)),
          shared / "made-by-dangling-se3", shared / "dangling.g2o", shared / "made-by-dangling-mip", shared / "dangling.sol")
    table = rows(shared)
    umask = os.umask(UMASK)
    try:
        results = run_rows([Row(args) for args in table.values()], cwd=work)
    finally:
        os.umask(umask)
    yield Case(work, shared, secret, dict(zip(table, results)))
    shutil.rmtree(shared)


def assert_refused(result: Result, *names: str) -> None:
    """Exit 2, exactly one line on stderr naming every culprit, no traceback, nothing on stdout."""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.code == 2, result.stderr
    assert len(lines) == 1, result.stderr
    assert all(name in lines[0] for name in names), (names, lines[0])
    assert "Traceback" not in result.stderr + result.stdout


@pytest.mark.parametrize("command", ["se3", "mip", "qaoa2", "zovh", "prox", "ddsvm", "unidrag", "balora"])
def test_planted_link_to_a_root_only_file_is_refused(case, command):
    option = "--sol" if command == "mip" else "--out"
    assert_refused(case.results[f"link-{command}"], option, str(case.shared), "symbolic link")
    assert case.secret.read_text() == SECRET
    assert stat.S_IMODE(case.secret.stat().st_mode) == 0o600


@pytest.mark.parametrize("command", ["se3", "mip"])
def test_dangling_link_is_refused_and_creates_nothing(case, command):
    option = "--sol" if command == "mip" else "--out"
    assert_refused(case.results[f"dangling-{command}"], option, "dangling", "symbolic link")
    assert not (case.shared / f"made-by-dangling-{command}").exists()


@pytest.mark.parametrize("name, option", [("device-se3", "--out"), ("device-mip", "--sol"), ("fifo-zovh", "--out")])
def test_device_or_fifo_is_refused_before_work(case, name, option):
    assert_refused(case.results[name], option, "not a regular file")


@pytest.mark.parametrize("name, culprit", [("input-se3", "--g2o a.g2o"), ("input-se3-spelling", "--g2o a.g2o"),
                                           ("input-se3-hard-link", "--g2o a.g2o"), ("input-zovh", "--at x.npy"),
                                           ("input-prox-data", "input X X.npy")])
def test_output_equal_to_an_input_is_refused(case, name, culprit):
    assert_refused(case.results[name], "--out", "is the input", culprit)
    assert (case.work / "a.g2o").read_text() == G2O
    assert np.array_equal(np.load(case.work / "x.npy"), np.linspace(-1, 1, 4))
    assert np.array_equal(np.load(case.work / "X.npy"), np.ones((6, 2)))


def direct_se3_write(work: Path, target: Path) -> bytes:
    """What `se3-sync solve --method chain` wrote before staging: write_g2o straight to the path."""
    from flows.se3_sync.cli import anchor
    from tasks.sync.g2o import invert_poses, read_g2o, write_g2o
    from tasks.sync.methods import METHODS

    loaded = read_g2o(work / "a.g2o")
    poses_T = anchor(invert_poses(METHODS["chain"](loaded.graph).poses), loaded.T)
    write_g2o(target, loaded.vertex_ids, poses_T, loaded.graph.edges, loaded.graph.Z)
    return target.read_bytes()


def test_good_write_has_the_direct_writes_bytes_and_the_umasks_mode(case, tmp_path):
    for name in ("write-se3", "write-se3-over-private", "write-zovh", "write-zovh-no-suffix"):
        assert case.results[name].code == 0, case.results[name].stderr
    expected = direct_se3_write(case.work, tmp_path / "direct.g2o")
    assert (case.work / "fresh.g2o").read_bytes() == expected
    assert stat.S_IMODE((case.work / "fresh.g2o").stat().st_mode) == 0o666 & ~UMASK
    assert (case.work / "private.g2o").read_bytes() == expected
    assert stat.S_IMODE((case.work / "private.g2o").stat().st_mode) == 0o600  # a private file stays private


def test_npy_output_is_exactly_the_named_file(case, tmp_path):
    np.save(tmp_path / "direct.npy", np.load(case.work / "H.npy"))
    assert (case.work / "H.npy").read_bytes() == (tmp_path / "direct.npy").read_bytes()
    assert (case.work / "Hraw").read_bytes() == (tmp_path / "direct.npy").read_bytes()
    assert not (case.work / "Hraw.npy").exists()  # the file named, not np.save's name + .npy
    leftovers = sorted(p.name for p in case.work.iterdir() if p.name.startswith("."))
    assert leftovers == [], leftovers


def test_failed_write_is_one_line_and_keeps_the_old_file(tmp_path):
    target = tmp_path / "out.g2o"
    target.write_text("old\n")
    with pytest.raises(InputError) as refused:
        with staged_output(target, "--out") as temporary:
            temporary.write_text("half a result")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert str(refused.value) == f"--out {target}: could not write (No space left on device)"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.g2o"] and target.read_text() == "old\n"


FILE_SIZE_LIMIT = """
import resource, signal, sys
from pathlib import Path
from tasks.core.inputs import InputError
from tasks.core.io import staged_output
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the kernel then fails write(2) with EFBIG instead of killing us
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
try:
    with staged_output(Path(sys.argv[1]), "--out") as temporary:
        temporary.write_bytes(bytes(65536))
except InputError as error:
    print(error)
"""


def test_real_write_error_is_one_line_and_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "big.npy"
    done = subprocess.run([sys.executable, "-c", FILE_SIZE_LIMIT, str(target)], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout == f"--out {target}: could not write (File too large)\n"
    assert list(tmp_path.iterdir()) == []


def test_link_planted_during_the_work_is_refused_not_followed(tmp_path, other):  # noqa: F811 - the fixture
    secret = tmp_path / "secret"
    secret.write_text(SECRET)
    secret.chmod(0o600)
    shared = other.folder()
    shared.chmod(0o777)
    try:
        target = check_output(shared / "result.txt", "--out")
        with pytest.raises(InputError) as refused:
            with staged_output(target, "--out") as temporary:
                temporary.write_text("the result")
                plant(other, secret, target)  # between the check and the rename
        assert str(refused.value).startswith(f"--out {target}: is a symbolic link")
        assert secret.read_text() == SECRET
        assert sorted(p.name for p in shared.iterdir()) == ["result.txt"] and target.is_symlink()
    finally:
        shutil.rmtree(shared)
