"""`papers sw-drso classify`: the class of a user's point cloud or mesh by a trained SW-DRSO set classifier, and
how the prediction moves when the cloud is corrupted (outliers in the cube, random and local deletions).

Options are checked first, then the cloud (tasks/sets/cloud_files.py: format, size, finiteness), then the model
(a .safetensors file or a registered model NAME, NAME/VERSION, NAME@ALIAS). The cloud is centred and scaled to
max norm 1 as the training clouds were; a cloud above MAX_SET points is subsampled (seeded): the encoders are
functions of the point measure, so a uniform subsample keeps its meaning.
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import typer

from tasks.core.console import console
from tasks.core.inputs import InputError, check_number, check_range

from .paper import PAPER

app = typer.Typer(help=PAPER.command.summary,
                  no_args_is_help=True)
MAX_SET = 4096
TRAIN_HINT = "train one with `papers run sw_drso`, or pass a .safetensors file"


def load_model(reference: str):
    from .model_files import load_classifier

    if Path(reference).is_file():
        return load_classifier(Path(reference))
    if Path(reference).suffix == ".safetensors":
        raise InputError(f"--model {reference}: no such file; {TRAIN_HINT}")
    from tasks.core.tracking import resolve_model  # imports mlflow: only for a registered model

    with tempfile.TemporaryDirectory() as folder:
        try:
            path = resolve_model(reference, Path(folder))
        except InputError as error:
            raise InputError(f"--model: {error}; {TRAIN_HINT}") from None
        return load_classifier(path)


def prediction(model, classes: list[str], X: np.ndarray) -> dict:
    from .evaluation import predict_proba

    probability = predict_proba(model, X[None])[0]
    best = int(probability.argmax())
    return {"class": classes[best], "probability": float(probability[best]),
            "probabilities": {name: float(p) for name, p in zip(classes, probability)}}


@app.command()
def classify(
    cloud: Path = typer.Argument(..., help="Point cloud or mesh: .ply, .xyz/.txt (x y z per line), .npy ([n, 3]), "
                                      ".stl or .obj (surface sampled)."),
    model: str = typer.Option("sw_drso-classifier", "--model", help="A .safetensors classifier, or a registered "
                              "model NAME, NAME/VERSION or NAME@ALIAS."),
    corrupt: float = typer.Option(0.2, "--corrupt", help="Fraction r of the corruption suite: outliers-r, drop-r, "
                                  "local_drop-r (0 <= r < 1; 0 skips it)."),
    sample: int = typer.Option(1024, "--sample", help="Points sampled on a mesh's surface."),
    seed: int = typer.Option(0, "--seed", help="Seed of the mesh sampling, subsampling and corruptions (>= 0)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Print the class of CLOUD, its probability, and the prediction under each corruption of the suite."""
    check_number("--corrupt", corrupt, at_least=0, below=1)
    check_range("--seed", seed, low=0)
    from tasks.sets.cloud_files import read_cloud
    from tasks.sets.corruptions import Corruption, apply
    from tasks.sets.primitive_clouds import normalise

    points = read_cloud(cloud, sample=sample, seed=seed)
    rng = np.random.default_rng(seed)
    if len(points) > MAX_SET:
        points = points[rng.choice(len(points), MAX_SET, replace=False)]
    X = normalise(points).astype(np.float32)
    classifier, classes, meta = load_model(model)
    if classifier.config.dim != X.shape[1]:
        raise InputError(f"--model {model}: takes {classifier.config.dim}-D elements, the cloud has {X.shape[1]}")
    low, high = (np.asarray(b, dtype=float) for b in meta.get("box", [[-1.0] * 3, [1.0] * 3]))
    summary = {"cloud": str(cloud), "points": len(X), "model": model, "method": meta.get("method")}
    summary |= prediction(classifier, classes, X)
    suite = [Corruption(kind=kind, r=corrupt) for kind in ("outliers", "drop", "local_drop")] if corrupt > 0 else []
    summary["corruptions"] = {}
    for index, corruption in enumerate(suite):
        corrupted = apply(X[None], corruption, np.random.default_rng([seed, index]), low, high)[0]
        if len(corrupted) == 0:
            continue  # a tiny cloud can lose every point to a deletion
        moved = prediction(classifier, classes, corrupted)
        summary["corruptions"][corruption.name] = {"class": moved["class"], "probability": moved["probability"],
                                                   "points": len(corrupted)}
    if as_json:
        print(json.dumps(summary))
        return
    out = console()
    out.print(f"{summary['class']} (p = {summary['probability']:.3f}) from {summary['points']} points")
    for name, moved in summary["corruptions"].items():
        flag = "" if moved["class"] == summary["class"] else "  (changed)"
        out.print(f"  {name}: {moved['class']} (p = {moved['probability']:.3f}){flag}")
