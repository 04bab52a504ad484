"""`papers ddsvm fit / predict`: DDSVM on a user's own CSV of numeric features (tabular rows, or flattened
images with --image HxW) with one label column, as scikit-learn users keep such data.

fit holds out a stratified validation share of the rows (--val-fraction), standardises the features (the training
rows' mean and std), trains the network on the rest by the alternating loop (CE + lam * push against an OvR LinearSVC
refitted every epoch), reports the accuracy on the held-out rows, and saves one safetensors file beside DATA (or at
--out): the network, the read-out SVM, the scaling and the class names (no pickle). predict reads it and a CSV with the same feature
columns. Every input is checked before any work (InputError: one line, exit 2 from `papers`); torch is imported
after the checks, so `--help` starts at once.
"""
from __future__ import annotations

import json
import re
import time
from pathlib import Path

import numpy as np
import typer

from tasks.core.console import console
from tasks.core.inputs import InputError, check_choice, check_count, check_number, check_output, check_range
from tasks.core.io import staged_output
from tasks.train.labelled_csv import read_labelled_csv

from .paper import PAPER

app = typer.Typer(help=PAPER.command.summary,
                  no_args_is_help=True)
MAX_EPOCHS = 10_000
MAX_FEATURE_DIM = 4096
MAX_CLASSES = 1000
MAX_WORK = 2 * 10**9  # epochs x rows x features: the training cost refused before it starts
MAX_VAL_FRACTION = 0.5  # more held out than trained on is no longer a validation split
READOUTS = ("svm", "head")
SUFFIX = ".ddsvm.safetensors"


def class_order(labels: list[str]) -> list[str]:
    """Distinct class names, in numeric order when every one is a number ('2' before '10'), else sorted as text."""
    names = sorted(set(labels))
    try:
        return sorted(names, key=float)
    except ValueError:
        return names


def image_shape(spec: str | None, n_features: int) -> tuple[int, ...] | None:
    """(1, H, W) from 'HxW' matching the number of feature columns; None for tabular rows."""
    if spec is None:
        return None
    match = re.fullmatch(r"(\d+)x(\d+)", spec.strip())
    if not match or min(int(match[1]), int(match[2])) < 2:
        raise InputError(f"--image: expected HxW with H, W >= 2 (e.g. 8x8), got {spec!r}")
    height, width = int(match[1]), int(match[2])
    if height * width != n_features:
        raise InputError(f"--image {spec}: {height} x {width} = {height * width} pixels, but the CSV has "
                         f"{n_features} feature columns")
    return 1, height, width


def holdout_split(labels: np.ndarray, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train, validation) row indices: round(fraction x n) rows of each class held out, drawn by `seed`, and at
    least one row of each class kept for training (a class of one row is never held out). Both sorted."""
    rng = np.random.default_rng(seed)
    held = []
    for cls in np.unique(labels):
        members = np.flatnonzero(labels == cls)
        count = min(int(fraction * len(members) + 0.5), len(members) - 1)
        held.append(rng.choice(members, size=count, replace=False))
    validation = np.sort(np.concatenate(held)).astype(np.int64)
    return np.setdiff1d(np.arange(len(labels)), validation), validation


def default_output(data: Path) -> Path:
    """The model's file beside DATA (train.csv -> train.ddsvm.safetensors), never in the working folder."""
    return data.with_name(data.name.removesuffix(".csv") + SUFFIX)


def check_fit_options(epochs: int, lam: float, eta: float, svm_c: float, feature_dim: int, width: int, batch: int,
                      seed: int, val_fraction: float) -> None:
    check_range("--epochs", epochs, low=1, high=MAX_EPOCHS)
    check_range("--feature-dim", feature_dim, low=2, high=MAX_FEATURE_DIM)
    check_range("--width", width, low=1, high=MAX_FEATURE_DIM)
    check_range("--batch", batch, low=1, high=10**6)
    check_number("--lam", lam, at_least=0)
    check_number("--eta", eta, above=0)
    check_number("--svm-c", svm_c, above=0)
    check_range("--seed", seed, low=0)
    check_number("--val-fraction", val_fraction, at_least=0, at_most=MAX_VAL_FRACTION)


@app.command()
def fit(
    data: Path = typer.Argument(..., help="CSV with a header row: numeric feature columns and the label column."),
    label: str = typer.Option(..., "--label", help="Name of the label column (class names: any text)."),
    out: Path = typer.Option(None, "--out", help=f"Model file to write (default: beside DATA, its name + {SUFFIX})."),
    image: str = typer.Option(None, "--image", help="HxW: the features are a flattened HxW image (row by row); "
                              "the spec's small CNN replaces the MLP backbone."),
    epochs: int = typer.Option(150, help=f"Training epochs (1..{MAX_EPOCHS:,})."),
    lam: float = typer.Option(1.0, "--lam", help="Weight of the push loss (0: plain cross-entropy)."),
    eta: float = typer.Option(0.1, "--eta", help="Push step on the unit sphere (> 0)."),
    svm_c: float = typer.Option(1.0, "--svm-c", help="C of the one-vs-rest LinearSVC (> 0)."),
    feature_dim: int = typer.Option(64, "--feature-dim", help="Dimension D of the learned features."),
    width: int = typer.Option(None, help="Hidden units of the MLP backbone (default 128), or the first conv's "
                              "channels with --image (default 16, the spec's)."),
    batch: int = typer.Option(128, help="Minibatch size."),
    seed: int = typer.Option(0, help="Seed of the initial weights, the batch order and the validation draw (>= 0)."),
    val_fraction: float = typer.Option(0.2, "--val-fraction", help="Share of each class's rows held out to report "
                                       f"the accuracy on, never trained on (0..{MAX_VAL_FRACTION}; 0: none)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Train DDSVM on DATA minus a held-out validation split and save the model; print the held-out and training
    accuracies and the SVM margins."""
    width = width if width is not None else 16 if image else 128
    check_fit_options(epochs, lam, eta, svm_c, feature_dim, width, batch, seed, val_fraction)
    out = out if out is not None else default_output(data)
    check_output(out, "--out", inputs={"DATA": data})
    table = read_labelled_csv(data, label)
    shape = image_shape(image, table.features.shape[1])
    classes = class_order(table.labels)
    check_count("classes", len(classes), MAX_CLASSES)
    if len(classes) < 2:
        raise InputError(f"DATA {data}: label column {label!r} holds one class only ({classes[0]!r}); an SVM needs two")
    check_count("--epochs x rows x features", epochs * table.features.size, MAX_WORK)
    import torch

    from tasks.core.device import single_torch_thread
    from tasks.core.seeding import derive_seed

    from .model import Architecture
    from .model_io import save_model
    from .training import TrainConfig, normalized_features, predict, train_network

    single_torch_thread()
    index = {name: i for i, name in enumerate(classes)}
    every_y = np.array([index[name] for name in table.labels])
    rows, held = holdout_split(every_y, val_fraction, derive_seed(seed, "validation"))
    mean, std = table.features[rows].mean(0), table.features[rows].std(0)
    std[std == 0] = 1.0  # a constant column stays constant (zero) instead of dividing by zero
    every_x = torch.from_numpy(((table.features - mean) / std).astype(np.float32))
    if shape is not None:
        every_x = every_x.reshape(-1, *shape)
    x, y = every_x[rows], torch.from_numpy(every_y[rows])
    architecture = Architecture("conv" if shape else "mlp", shape or (x.shape[1],), feature_dim, len(classes),
                                width=width)
    config = TrainConfig(loss="ddsvm" if lam > 0 else "ce", epochs=epochs, lam=lam, eta=eta, svm_C=svm_c,
                         batch=batch, augment_shift=0)
    start = time.perf_counter()
    result = train_network(x, y, architecture, config, seed)
    from tasks.train.linear_svm import own_class_margins

    margins = own_class_margins(normalized_features(result.network, x), y.numpy(), result.svm)
    trained = predict(result.network, result.svm, x)
    summary = {"model": str(out), "rows": len(every_y), "train_rows": len(rows), "val_rows": len(held),
               "features": table.features.shape[1], "classes": len(classes), "backbone": architecture.backbone,
               "epochs": epochs, **{f"train_accuracy_{r}": float((trained[r] == y.numpy()).mean()) for r in READOUTS},
               "margin_min": float(margins.min()), "margin_mean": float(margins.mean()),
               "svm_converged": result.svm.converged, "time_s": time.perf_counter() - start}
    summary |= held_out_accuracy(predict(result.network, result.svm, every_x[held]) if len(held) else None,
                                 every_y[held])
    from safetensors import SafetensorError  # what save_file raises for a failed write (ENOSPC...)

    with staged_output(out, "--out", failures=(OSError, SafetensorError)) as temporary:
        save_model(temporary, result.network, result.svm, {"mean": mean, "std": std},
                   {"classes": classes, "label": label, "feature_names": table.feature_names,
                    "config": config.to_dict(), "train_summary": summary})
    if as_json:
        print(json.dumps(summary))
        return
    console().print(f"DDSVM on {len(rows)} rows, {len(classes)} classes, {epochs} epochs ({summary['time_s']:.1f} s): "
                    f"{held_out_text(summary)}; train accuracy {summary['train_accuracy_svm']:.3f} (SVM), "
                    f"{summary['train_accuracy_head']:.3f} (head); margin min {summary['margin_min']:.3f}, mean "
                    f"{summary['margin_mean']:.3f} -> {out}")


def held_out_accuracy(predicted: dict[str, np.ndarray] | None, truth: np.ndarray) -> dict:
    """val_accuracy_svm and val_accuracy_head on the held-out rows; None for both without held-out rows."""
    return {f"val_accuracy_{readout}": None if predicted is None else float((predicted[readout] == truth).mean())
            for readout in READOUTS}


def held_out_text(summary: dict) -> str:
    if summary["val_accuracy_svm"] is None:
        return "no rows held out (--val-fraction 0, or too few rows per class)"
    return (f"held-out accuracy {summary['val_accuracy_svm']:.3f} (SVM), {summary['val_accuracy_head']:.3f} (head) on "
            f"{summary['val_rows']} rows")


@app.command()
def predict(
    model: Path = typer.Argument(..., help=f"A model written by `papers ddsvm fit` ({SUFFIX})."),
    data: Path = typer.Argument(..., help="CSV with the model's feature columns (the label column is optional: "
                                "with it, the accuracy is reported)."),
    readout: str = typer.Option("svm", help="svm (the SVM on the normalised features) or head (the softmax head)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (predictions, and accuracy with labels)."),
) -> None:
    """Predict the class of every row of DATA; print one class per line."""
    check_choice("--readout", readout, READOUTS)
    from .model_io import load_model
    from .training import predict as predict_classes

    saved = load_model(model)
    info = saved.info
    names, label = info["feature_names"], info["label"]
    table = read_labelled_csv(data, label, label_required=False)
    if table.feature_names != names:
        missing = [n for n in names if n not in table.feature_names]
        extra = [n for n in table.feature_names if n not in names]
        problem = (f"missing feature column {missing[0]!r}" if missing else f"column {extra[0]!r} is not a feature of "
                   f"the model" if extra else "the feature columns are in another order than the model's")
        raise InputError(f"DATA {data}: {problem} (the model's {len(names)} features: {', '.join(names[:8])}"
                         f"{', ...' if len(names) > 8 else ''})")
    import torch

    x = torch.from_numpy(((table.features - saved.arrays["mean"]) / saved.arrays["std"]).astype(np.float32))
    x = x.reshape(-1, *saved.network.architecture.input_shape)
    classes = info["classes"]
    predicted = [classes[i] for i in predict_classes(saved.network, saved.svm, x)[readout]]
    summary: dict = {"readout": readout, "rows": len(predicted), "predictions": predicted}
    if table.labels is not None:
        summary["accuracy"] = float(np.mean([p == t for p, t in zip(predicted, table.labels)]))
    if as_json:
        print(json.dumps(summary))
        return
    print("\n".join(predicted))
    if "accuracy" in summary:
        console(stderr=True).print(f"accuracy {summary['accuracy']:.4f} on {len(predicted)} rows ({readout} read-out)")
