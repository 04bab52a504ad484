"""The generate stage's data set (data/unidrag) as surrogate samples.

A sample joins shapes/<i>.npz (generator parameters, dense contour) with labels/<i>.npz (LBM labels);
splits.json lists the shape indices of train, val and test.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import numpy as np

from tasks.cfd.surrogate.samples import Sample


def read_sample(shape_file: Path, label_file: Path) -> Sample:
    with np.load(shape_file) as shape, np.load(label_file) as label:
        return Sample(index=int(shape_file.stem), body_type=str(shape["body_type"]), params=shape["params"],
                      contour=shape["contour"], surface_points=label["surface_points"],
                      surface_normals=label["surface_normals"], surface_cp=label["surface_cp"],
                      volume_points=label["volume_points"],
                      volume_target=np.concatenate([label["volume_u"], label["volume_cp"][:, None]], axis=1),
                      cd=float(label["cd"]), profile=label["profile"], a_ref=float(label["a_ref"]))


class DatasetFiles(NamedTuple):
    """The generate stage's outputs the samples are read from."""
    shapes: Path
    labels: Path
    splits: Path

    @classmethod
    def under(cls, folder: Path) -> DatasetFiles:
        return cls(folder / "shapes", folder / "labels", folder / "splits.json")


def load_samples(files: DatasetFiles) -> tuple[list[Sample], dict[str, list[int]]]:
    """(samples sorted by shape index, splits {train, val, test: [shape index]}) from the generate
    stage's outputs. Use tasks.cfd.surrogate.samples.select to turn a split's indices into samples."""
    label_files = sorted(Path(files.labels).glob("*.npz"))
    if not label_files:
        raise FileNotFoundError(f"no label files under {files.labels}")
    samples = [read_sample(Path(files.shapes) / f.name, f) for f in label_files]
    splits = json.loads(Path(files.splits).read_text())
    return samples, splits

