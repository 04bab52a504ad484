"""The surrogate kinds unidrag trains and compares (spec §3.2, §4): UniDrag, its minus-MPL and
minus-GER ablations, Transolver and PointNet; their networks built from a TrainConfig, and loaded
back from the files the train stage saves."""
from __future__ import annotations

from pathlib import Path

from torch import nn

from tasks.cfd.surrogate.features import FEATURES
from tasks.cfd.surrogate.pointnet import PointNet
from tasks.cfd.surrogate.training import TrainConfig, TrainedSurrogate
from tasks.cfd.surrogate.transolver import Transolver

from .network import UniDragNet

KINDS = ("unidrag", "unidrag_no_mpl", "unidrag_no_ger", "transolver", "pointnet")
MPL_KINDS = ("unidrag", "unidrag_no_ger")  # the kinds trained with Modality-Protected Learning
SAVED_BY = "a UniDrag surrogate that `papers run unidrag` trains"  # what a model file should be, for its errors


def build_model(config: TrainConfig) -> nn.Module:
    """The freshly initialised network of the config's kind and sizes."""
    c = config
    if c.kind not in KINDS:
        raise ValueError(f"kind: must be one of {KINDS}, got {c.kind!r}")
    if c.kind == "pointnet":
        return PointNet(FEATURES, c.d, c.profile_bins)
    if c.kind == "transolver":
        return Transolver(FEATURES, c.d, c.blocks, c.heads, c.slices, c.profile_bins)
    return UniDragNet(FEATURES, c.d, c.blocks, c.heads, c.slices, c.experts, c.top_k, c.profile_bins,
                      ger=c.kind != "unidrag_no_ger", epsa=c.epsa)


def load_surrogate(path: Path) -> TrainedSurrogate:
    """A saved surrogate of any kind on the CPU, in eval mode (InputError naming the file if it is not one)."""
    return TrainedSurrogate.load(path, build_model, SAVED_BY)
