"""`papers metadistill minimize` as a user meets it: a good function and a BBOB problem give one JSON answer
within the budget; a bad option, a function that raises or returns a non-number or a non-finite value, a missing
or broken checkpoint: one line naming the culprit, exit 2, no traceback."""
from __future__ import annotations

import json

import pytest
import torch

from flows.metadistill.les import LES, save
from tests.cli_table import Row, check_rows, run_rows

USER_MODULE = '''
import numpy as np

def sphere(x):
    return float(np.sum((x - 1.0) ** 2))

def raises(x):
    raise ValueError("my model diverged")

def nan(x):
    return float("nan")

def vector(x):
    return x

def words(x):
    return "low"

def exits(x):
    raise SystemExit(3)

not_callable = 3
'''


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("metadistill_cli")
    (folder / "user_fn.py").write_text(USER_MODULE)
    (folder / "broken_module.py").write_text("raise RuntimeError('import-time failure')\n")
    torch.manual_seed(0)
    save(folder / "student.pt", LES().double())
    (folder / "junk.pt").write_bytes(b"not a checkpoint")
    return folder


def test_good_input(folder):
    row = Row(("metadistill", "minimize", "user_fn:sphere", "--dim", "3", "--budget", "400", "--popsize", "16",
               "--checkpoint", str(folder / "student.pt"), "--json"), code=0)
    (result,) = run_rows([row], cwd=folder)
    assert result.code == 0, result.stderr[-500:]
    own = json.loads(result.stdout.strip().splitlines()[-1])
    assert own["nfev"] == 400 and len(own["x"]) == 3 and own["student"] == "md" and own["fun"] >= 0


@pytest.mark.slow
def test_good_inputs_teacher_and_bbob(folder):
    minimize = ("metadistill", "minimize")
    rows = [Row((*minimize, "user_fn:sphere", "--dim", "3", "--budget", "400", "--student", "cmaes", "--json"), code=0),
            Row((*minimize, "--bbob", "1:2", "--dim", "4", "--budget", "500", "--popsize", "16", "--checkpoint",
                 str(folder / "student.pt"), "--ssft", "1", "--json"), code=0)]
    results = run_rows(rows, cwd=folder)
    assert [r.code for r in results] == [0, 0], [r.stderr[-500:] for r in results]
    teacher, bbob = (json.loads(r.stdout.strip().splitlines()[-1]) for r in results)
    # CMA-ES on a shifted sphere at `cma`'s default population in d = 3 (4 + floor(3 ln 3) = 7): 57 populations
    assert teacher["fun"] < 1e-2 and teacher["popsize"] == 7 and teacher["nfev"] == 399
    assert bbob["nfev"] == 496 and bbob["precision"] >= 0 and bbob["f_opt"] == pytest.approx(bbob["fun"] - bbob["precision"])


@pytest.mark.heavy  # a second child process that imports torch: ~4-7 s (test_good_input stays)
def test_bad_inputs(folder):
    m = ("metadistill", "minimize")
    ok = ("--dim", "3", "--budget", "100", "--popsize", "8")
    ck = ("--checkpoint", str(folder / "student.pt"))
    check_rows([
        Row((*m, "user_fn:raises", *ok, *ck), names=("user_fn:raises", "evaluation 1", "ValueError", "diverged")),
        Row((*m, "user_fn:nan", *ok, "--student", "cmaes"), names=("user_fn:nan", "nan", "not a finite")),
        Row((*m, "user_fn:vector", *ok, *ck), names=("user_fn:vector", "expected one real number")),
        Row((*m, "user_fn:words", *ok, *ck), names=("user_fn:words", "'low'")),
        Row((*m, "user_fn:exits", *ok, *ck), names=("user_fn:exits", "SystemExit")),
        Row((*m, "user_fn:not_callable", *ok, *ck), names=("not_callable", "not callable")),
        Row((*m, "user_fn:missing", *ok, *ck), names=("missing",)),
        Row((*m, "no_such_module:f", *ok, *ck), names=("no_such_module", "no module named")),
        Row((*m, "broken_module:f", *ok, *ck), names=("broken_module", "import-time failure")),
        Row((*m, "sphere", *ok, *ck), names=("MODULE:FUNCTION", "'sphere'")),
        Row((*m, *ok, *ck), names=("--bbob",)),
        Row((*m, "user_fn:sphere", "--bbob", "1:1", *ok, *ck), names=("exactly one",)),
        Row((*m, "--bbob", "25:1", *ok, *ck), names=("--bbob", "1..24")),
        Row((*m, "--bbob", "one", *ok, *ck), names=("--bbob", "'one'")),
        Row((*m, "--bbob", "1:0", *ok, *ck), names=("--bbob", "instance")),
        Row((*m, "user_fn:sphere", "--dim", "0", "--budget", "100", *ck), names=("--dim", "0")),
        Row((*m, "user_fn:sphere", "--dim", "100000", "--budget", "100", *ck), names=("--dim", "100,000")),
        Row((*m, "user_fn:sphere", "--dim", "3", "--budget", "10", *ck), names=("--budget", "10")),
        Row((*m, "user_fn:sphere", "--dim", "3", "--budget", "1000000000", *ck), names=("--budget",)),
        Row((*m, "user_fn:sphere", *ok, "--lower", "2", "--upper", "1", *ck), names=("--lower/--upper",)),
        Row((*m, "user_fn:sphere", *ok, "--lower", "nan", *ck), names=("--lower", "nan")),
        Row((*m, "user_fn:sphere", *ok, "--upper", "inf", *ck), names=("--upper", "inf")),
        Row((*m, "user_fn:sphere", *ok, "--student", "gpt", *ck), names=("--student", "gpt")),
        Row((*m, "user_fn:sphere", *ok, "--student", "cmaes", "--ssft", "1"), names=("--ssft", "cmaes")),
        Row((*m, "user_fn:sphere", *ok, "--seed", "-1", *ck), names=("--seed",)),
        Row((*m, "user_fn:sphere", *ok, "--checkpoint", str(folder / "none.pt")), names=("none.pt", "papers run metadistill")),
        Row((*m, "user_fn:sphere", *ok, "--checkpoint", str(folder / "junk.pt")), names=("junk.pt", "not a metadistill")),
    ], cwd=folder)
