"""`papers sw-drso classify`: the class of a user's point cloud or mesh by a trained SW-DRSO set classifier, and
how the prediction moves when the cloud is corrupted (outliers in the cube, random and local deletions).

Options are checked first, then the model (a .safetensors file or a registered model NAME, NAME/VERSION,
NAME@ALIAS), then the cloud (tasks/sets/cloud_files.py: format, size, finiteness). The classifier sees clouds of
the size its training sets had (the n its file stores) unless --sample says otherwise: a mesh is sampled with
that many points, a larger cloud is subsampled to it (seeded; the encoders are functions of the point measure, so
a uniform subsample keeps its meaning), a smaller one is fed whole. The cloud is centred and scaled to max norm 1
as the training clouds were.
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


def points_to_feed(model: str, sample: int | None, train_n: int | None) -> int:
    """--sample when given (a line on stderr when it differs from the training n), else the training n; a model
    file written before the training n was stored needs --sample."""
    if sample is None and train_n is None:
        raise InputError(f"--model {model}: the file predates the stored training set size; pass --sample N with the "
                         "number of points of its training sets (64 at the default profile)")
    if sample is not None and train_n is not None and sample != train_n:
        console(stderr=True).print(f"--sample {sample}: the classifier was trained on sets of {train_n} points; "
                                   f"it sees {sample} here")
    return train_n if sample is None else sample


@app.command()
def classify(
    cloud: Path = typer.Argument(..., help="Point cloud or mesh: .ply, .xyz/.txt (x y z per line), .npy ([n, 3]), "
                                      ".stl or .obj (surface sampled)."),
    model: str = typer.Option("sw_drso-classifier", "--model", help="A .safetensors classifier, or a registered "
                              "model NAME, NAME/VERSION or NAME@ALIAS."),
    corrupt: float = typer.Option(0.2, "--corrupt", help="Fraction r of the corruption suite: outliers-r, drop-r, "
                                  "local_drop-r (0 <= r < 1; 0 skips it)."),
    sample: int = typer.Option(None, "--sample", help="Points the classifier sees: sampled on a mesh's surface, or "
                               "a seeded subsample of a larger cloud (default: the size of the model's training sets)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the mesh sampling, subsampling and corruptions (>= 0)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Print the class of CLOUD, its probability, and the prediction under each corruption of the suite."""
    check_number("--corrupt", corrupt, at_least=0, below=1)
    check_range("--seed", seed, low=0)
    from tasks.sets.cloud_files import MAX_SAMPLE, read_cloud
    from tasks.sets.corruptions import Corruption, apply
    from tasks.sets.primitive_clouds import normalise

    from .model_files import outlier_region, training_n

    if sample is not None:
        check_range("--sample", sample, low=1, high=MAX_SAMPLE)
    classifier, classes, meta = load_model(model)
    size = points_to_feed(model, sample, training_n(meta))
    points = read_cloud(cloud, sample=size, seed=seed)
    rng = np.random.default_rng(seed)
    if len(points) > size:
        points = points[rng.choice(len(points), size, replace=False)]
    X = normalise(points).astype(np.float32)
    if classifier.config.dim != X.shape[1]:
        raise InputError(f"--model {model}: takes {classifier.config.dim}-D elements, the cloud has {X.shape[1]}")
    region = outlier_region(meta)
    summary = {"cloud": str(cloud), "points": len(X), "train_n": training_n(meta), "model": model,
               "method": meta.get("method")}
    summary |= prediction(classifier, classes, X)
    suite = [Corruption(kind=kind, r=corrupt) for kind in ("outliers", "drop", "local_drop")] if corrupt > 0 else []
    summary["corruptions"] = {}
    for index, corruption in enumerate(suite):
        corrupted = apply(X[None], corruption, np.random.default_rng([seed, index]), region)[0]
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
