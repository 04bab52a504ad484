"""The stdlib-source character corpus (tasks.train.corpus, the optimizer papers' char-LM text) for the tiny LMs.

Same text, same ids: the corpus's 98-symbol character set is `CHAR_VOCAB`'s ordinary symbols, in order, so
an id of tasks.train.corpus is the same id here (the special tokens follow them).
"""
from __future__ import annotations

import torch

from tasks.train.corpus import VOCAB as CORPUS_CHARS, CharCorpus, build_stdlib_corpus

from .vocab import char_vocab

CHAR_VOCAB = char_vocab(CORPUS_CHARS)


def stdlib_corpus(n_chars: int, val_fraction: float = 0.1) -> CharCorpus:
    """train/val ids of the first n_chars stdlib characters, valid ids of CHAR_VOCAB."""
    return build_stdlib_corpus(n_chars, val_fraction)


def windows(ids: torch.Tensor, context: int, batch: int, generator: torch.Generator) -> torch.Tensor:
    """`batch` windows of `context` ids at random starts ([batch, context]), for causal-LM pre-training."""
    if len(ids) < context:
        raise ValueError(f"context: needs at least {context} ids, got {len(ids)}")
    starts = torch.randint(0, len(ids) - context + 1, (batch,), generator=generator)
    return ids[starts[:, None] + torch.arange(context)]
