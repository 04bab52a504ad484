"""User-named output files on a shared machine (issue #35, item 7): the staging every command's output goes
through. A write that fails is one line and leaves no temporary file; a link planted between the check and the
rename is refused, not followed. Each command's own table (links, devices, inputs, good writes through the real
entry point) is its paper's test_shared_outputs.py, on tests/output_table.py.
"""
from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys

import pytest

from tasks.core.inputs import InputError, check_output
from tasks.core.io import staged_output
from tests.conftest import ROOT
from tests.output_table import SECRET, plant
from tests.platform.second_user import other  # noqa: F401


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
