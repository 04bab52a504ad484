"""`papers mip-early-stop stop` as a user meets it: every bad input is one line and exit 2, and a good one
reports SCIP's own status and objective (never the stopper's clip bound B).

The stopper is an untrained network in a real bundle (what the calibrate stage writes), built
here in milliseconds; the instances are a 21-variable MIS and two-variable LP models.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from tasks.mip import isolated
from tasks.mip.features import FEATURES
from tasks.mip.generators import generate
from tasks.mip.model import GapLSTM, Normalizer, save_model
from tests.cli_table import Row, check_rows, run_rows
from tests.conftest import ROOT, stage_env

BOUND = 1e4  # the mis family's B

LP = {
    "infeasible.lp": "Minimize\n obj: x + y\nSubject To\n c1: x + y >= 3\nBinary\n x y\nEnd\n",
    "unbounded.lp": "Maximize\n obj: x + y\nSubject To\n c1: x - y <= 1\nBounds\n x >= 0\n y >= 0\nGeneral\n x y\nEnd\n",
    # optimum 1e16 = 10 * 1e15: every coefficient within the 1e15 limit, the objective far beyond B
    "big.lp": "Maximize\n obj: 1e15 x + y\nSubject To\n c1: x + y <= 10\nBounds\n 0 <= x <= 10\n 0 <= y <= 10\n"
              "General\n x y\nEnd\n",
    "absurd.lp": "Maximize\n obj: 1e16 x + y\nSubject To\n c1: x + y <= 1\nBinary\n x y\nEnd\n",
    "words.lp": "this is not a model\n",
}


def stopper_bundle(path: Path, **meta) -> Path:
    torch.manual_seed(0)
    model = GapLSTM(len(FEATURES), 4, 1).eval()
    save_model(path, model, Normalizer(mu=np.zeros(len(FEATURES)), scale=np.ones(len(FEATURES))), meta)
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("mip_stop")
    f = {name: folder / name for name in LP}
    for name, text in LP.items():
        f[name].write_text(text)
    generate("mis", {"n_min": 20, "n_max": 22, "p": 0.2}, 1, folder / "mis.mps")
    mps = (folder / "mis.mps").read_text()
    f["mis.mps"] = folder / "mis.mps"
    f["truncated.mps"] = folder / "truncated.mps"  # head -c 1500: the reader's syntax error
    f["truncated.mps"].write_text(mps[:1500])
    f["crash.mps"] = folder / "crash.mps"  # cut after a row's type: pyscipopt's reader segfaults
    f["crash.mps"].write_text(mps[: mps.index(" L  ", mps.index("ROWS")) + 4])
    f["nan-objective.mps"] = folder / "nan-objective.mps"  # SCIP parses "nan", then ignores its time limit
    f["nan-objective.mps"].write_text(re.sub(r"(\n +x0 +Obj +)1 ", r"\1nan ", mps, count=1))
    f["binary.mps"] = folder / "binary.mps"
    f["binary.mps"].write_bytes(b"NAME\0\x01\x02" * 100)
    f["model.xyz"] = folder / "model.xyz"
    f["model.xyz"].write_text(mps)
    f["plain.mps.gz"] = folder / "plain.mps.gz"
    f["plain.mps.gz"].write_text(mps)
    f["huge.lp"] = folder / "huge.lp"  # one variable over the size limit
    with open(f["huge.lp"], "w") as handle:
        handle.write("Minimize\n obj: x0\nSubject To\n c0: x0 >= 0\nBounds\n")
        handle.write("".join(f" x{i} <= 1\n" for i in range(isolated.MAX_VARS + 1)))
        handle.write("End\n")
    f["folder"] = folder / "folder"
    f["folder"].mkdir()
    calibrated = {"family": "mis", "eps_a": 1.0, "sample_dt": 0.02, "scores": [0.5] * 19, "alpha": 0.1,
                  "quantile": "finite", "gap": 1e-4, "time_limit": 5.0, "bound": BOUND, "epsilon": 1e-3,
                  "signature": {"sense": [-1], "n_vars": [15, 30], "n_cons": [20, 50]}}
    f["stopper.pt"] = stopper_bundle(folder / "stopper.pt", **calibrated)
    f["model.pt"] = stopper_bundle(folder / "model.pt", family="mis", eps_a=1.0)  # the train stage's, no scores
    f["garbage.pt"] = folder / "garbage.pt"
    f["garbage.pt"].write_bytes(np.random.default_rng(0).bytes(2000))
    f["tensor.pt"] = folder / "tensor.pt"
    torch.save(torch.zeros(3), f["tensor.pt"])
    return f


def stop(instance, *extra: str, stopper=None) -> tuple[str, ...]:
    return ("mip-early-stop", "stop", str(instance), "--stopper", str(stopper), *extra)


@pytest.mark.heavy  # a reader process per file in a child process: ~7-15 s (tests/mip/test_isolated.py stays)
def test_bad_inputs_are_one_line_and_exit_2(files, tmp_path):
    f, s = files, files["stopper.pt"]
    rows = [
        Row(stop(tmp_path / "missing.mps", stopper=s), 2, ("missing.mps", "no such file")),
        Row(stop(f["folder"], stopper=s), 2, ("folder", "not a regular file")),
        Row(stop(f["binary.mps"], stopper=s), 2, ("binary.mps", "binary file")),
        Row(stop(f["model.xyz"], stopper=s), 2, ("model.xyz", ".xyz", ".mps, .lp")),
        Row(stop(f["plain.mps.gz"], stopper=s), 2, ("plain.mps.gz", "not a gzip file")),
        Row(stop(f["truncated.mps"], stopper=s), 2, ("truncated.mps", "Syntax error")),
        Row(stop(f["crash.mps"], stopper=s), 2, ("crash.mps", "crashed while parsing: signal SIGSEGV")),
        Row(stop(f["nan-objective.mps"], stopper=s), 2, ("nan-objective.mps", "NaN")),
        Row(stop(f["absurd.lp"], "--force", stopper=s), 2, ("absurd.lp", "1e+16", "1e+15")),
        Row(stop(f["words.lp"], stopper=s), 2, ("words.lp", "no variables")),
        Row(stop(f["huge.lp"], "--force", stopper=s), 2, ("huge.lp", "1,000,000")),
        Row(stop(f["mis.mps"], stopper=f["garbage.pt"]), 2, ("garbage.pt", "not a torch file", "stoppers/FAMILY.pt")),
        Row(stop(f["mis.mps"], stopper=f["model.pt"]), 2, ("model.pt", "calibration scores")),
        Row(stop(f["mis.mps"], stopper=f["tensor.pt"]), 2, ("tensor.pt", "not a model of this paper")),
        Row(stop(f["mis.mps"], stopper=tmp_path / "nothere.pt"), 2, ("nothere.pt", "no such file")),
        Row(stop(f["mis.mps"], "--alpha", "1.5", stopper=s), 2, ("--alpha", "(0, 1)")),
        Row(stop(f["mis.mps"], "--sol", "/nonexistent/dir/x.sol", stopper=s), 2, ("--sol", "/nonexistent/dir")),
        Row(stop(f["infeasible.lp"], stopper=s), 2, ("infeasible.lp", "'mis'", "--force")),
        Row(("mip-early-stop", "--help"), 0),
        Row(("mip-early-stop", "stop", "--help"), 0),
    ]
    check_rows(rows)


def mis_graph(mps: Path):
    """The graph of the MIS instance, read without SCIP: its constraint rows `e<u>_<v>` (x_u + x_v <= 1)."""
    import networkx as nx

    text = mps.read_text()
    rows = re.findall(r"^ L +e(\d+)_(\d+)\s*$", text, re.M)
    names = set(re.findall(r"^ +x(\d+) ", text, re.M))
    assert rows and names, "the MIS file's edge rows and variables"
    graph = nx.Graph([(int(u), int(v)) for u, v in rows])
    graph.add_nodes_from(int(n) for n in names)
    return graph


def max_independent_set_size(mps: Path) -> int:
    """The exact maximum independent set: a maximum clique of the complement of the graph."""
    import networkx as nx

    return len(nx.max_weight_clique(nx.complement(mis_graph(mps)), weight=None)[0])


def chosen_nodes(solution: Path) -> set[int]:
    """The nodes a SCIP solution file sets to 1 (it lists the nonzero variables: `x12  1  (obj:1)`)."""
    values = re.findall(r"^x(\d+)\s+(\S+)", solution.read_text(), re.M)
    return {int(node) for node, value in values if round(float(value)) == 1}


@pytest.mark.heavy  # six SCIP solves, full and stopped, in a child process: ~17 s
def test_results_are_scips_own(files, tmp_path):
    f, s = files, files["stopper.pt"]
    solution = tmp_path / "mis.sol"
    rows = [Row(stop(f["mis.mps"], "--json", "--sol", str(solution), stopper=s), 0),
            Row(stop(f["infeasible.lp"], "--json", "--force", stopper=s), 0),
            Row(stop(f["unbounded.lp"], "--json", "--force", stopper=s), 0),
            Row(stop(f["big.lp"], "--json", "--force", stopper=s), 0),
            Row(stop(f["big.lp"], "--force", "--no-compare", stopper=s), 0),
            Row(stop(f["mis.mps"], "--alpha", "0.04", stopper=s), 0)]
    results = run_rows(rows)
    assert [r.code for r in results] == [0] * len(rows), [r.stderr for r in results]
    mis, infeasible, unbounded, big = (json.loads(r.stdout) for r in results[:4])

    assert mis["status"] in ("optimal", "gaplimit", "userinterrupt") and mis["stopper_in_range"]
    optimum = max_independent_set_size(f["mis.mps"])  # found without SCIP, from the file's edge rows
    assert mis["full_status"] == "optimal" and mis["full_objective"] == pytest.approx(optimum)
    chosen = chosen_nodes(solution)  # the incumbent SCIP wrote: an independent set of the file's graph, of its size
    assert chosen and not mis_graph(f["mis.mps"]).subgraph(chosen).edges and len(chosen) == mis["objective"]
    assert mis["time_saved_s"] is not None and mis["solution_file"] == str(solution) and solution.is_file()

    assert infeasible["status"] == "infeasible" and infeasible["objective"] is None
    assert infeasible["time_saved_s"] is None and not infeasible["stopped_early"]
    assert unbounded["status"] in ("unbounded", "inforunbd") and unbounded["objective"] is None
    assert unbounded["time_saved_s"] is None

    assert big["objective"] == pytest.approx(1e16) and big["full_objective"] == pytest.approx(1e16), "not clipped to B"
    assert not big["stopper_in_range"] and not big["stopped_early"] and big["time_saved_s"] is None
    assert "feature range" in results[4].stdout and "1e+16" in results[4].stdout

    undefined = results[5].stdout  # 19 scores, alpha 0.04: floor(0.04 * 20) = 0, no threshold
    assert "tau is undefined" in undefined and "never fires" in undefined and "at least 24" in undefined
    assert "stopper overhead" in undefined and "sampling handler" in undefined, "its cost beside SCIP's own solve"
    assert mis["tau_defined"] and 0 <= mis["inference_s"] <= mis["stopper_overhead_s"] < mis["solve_time_s"]


def test_without_stopper_the_family_the_instance_looks_like_is_used(files, tmp_path):
    """No --stopper: the committed default of the family whose instances this one resembles, said on stderr; an
    instance like no family's is one line naming each family and why."""
    import shutil

    from tasks.core.default_models import write_default_models

    write_default_models(tmp_path / "data" / "mip_early_stop" / "default_models", "mip_early_stop",
                         {"mip_early_stop-mis": files["stopper.pt"]}, "default", "c" * 40, False, "run")
    shutil.copy(files["mis.mps"], tmp_path / "mis.mps")
    check_rows([
        Row(("mip-early-stop", "stop", str(tmp_path / "mis.mps"), "--json", "--no-compare"), 0,
            ("the committed default mip_early_stop-mis", "profile default, commit cccccccccc")),
        Row(("mip-early-stop", "stop", str(files["infeasible.lp"])), 2,
            ("infeasible.lp", "mis: ", "gisp: ", "no committed default", "--stopper")),
    ], cwd=tmp_path, env=stage_env(ROOT) | {"PAPERS_ROOT": str(tmp_path)})
