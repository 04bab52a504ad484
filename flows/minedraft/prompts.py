"""Benchmark prompts (spec §6.1): the first P non-overlapping windows of `length` characters of the validation text
that start at a line beginning."""
from __future__ import annotations

import torch

from tasks.train.corpus import VOCAB

NEWLINE = VOCAB.index("\n")


def line_windows(ids: torch.Tensor, count: int, length: int) -> list[list[int]]:
    windows, start = [], 0
    starts = (ids == NEWLINE).nonzero().flatten().tolist()
    for s in starts:
        s += 1  # the line begins after the newline
        if s >= start and s + length <= len(ids):
            windows.append(ids[s:s + length].tolist())
            start = s + length
            if len(windows) == count:
                return windows
    raise ValueError(f"prompts: the validation text holds only {len(windows)} windows of {length} characters "
                     f"starting at a line, {count} asked")
