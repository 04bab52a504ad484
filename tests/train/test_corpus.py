"""stdlib corpus (spec §6.3): reproducible, 98 symbols, '?' for the rest, val = tail."""
from __future__ import annotations

import hashlib

import pytest
import torch

from tasks.train.corpus import (
    STDLIB_MODULES,
    VOCAB,
    build_stdlib_corpus,
    decode,
    encode,
    load_corpus,
    manifest_path,
    save_corpus,
    stdlib_text,
)


def test_vocab_has_98_distinct_symbols_with_question_mark_for_the_rest():
    assert len(VOCAB) == 98 and len(set(VOCAB)) == 98
    assert VOCAB[:2] == "\t\n" and " " in VOCAB and "~" in VOCAB
    assert encode("é\r\x7f").tolist() == [VOCAB.index("?")] * 3
    assert decode(encode("def f(x):\n\treturn x ~ 1")) == "def f(x):\n\treturn x ~ 1"


def test_corpus_reproducible_in_vocab_and_val_is_the_last_tenth():
    a, b = build_stdlib_corpus(20_000), build_stdlib_corpus(20_000)
    assert a.sha256 == b.sha256 and torch.equal(a.train, b.train) and torch.equal(a.val, b.val)
    text = stdlib_text()[:20_000]
    assert a.sha256 == hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert len(a.val) == 2_000 and len(a.train) == 18_000
    assert torch.equal(torch.cat([a.train, a.val]), encode(text))
    ids = torch.cat([a.train, a.val])
    assert ids.dtype == torch.int64 and ids.min() >= 0 and ids.max() < 97  # the reserved 98th id never occurs
    assert a.modules == STDLIB_MODULES and a.manifest()["vocab_size"] == 98


def test_too_long_corpus_names_n_chars():
    with pytest.raises(ValueError, match="n_chars"):
        build_stdlib_corpus(10**9)
    with pytest.raises(ValueError, match="val_fraction"):
        build_stdlib_corpus(1000, val_fraction=1.0)


def test_save_and_load_round_trip(tmp_path):
    corpus = build_stdlib_corpus(5_000)
    path = tmp_path / "stdlib_charlm.npz"
    save_corpus(corpus, path)
    assert path.exists() and manifest_path(path).name == "stdlib_charlm.manifest.json"
    loaded = load_corpus(path)
    assert torch.equal(loaded.train, corpus.train) and torch.equal(loaded.val, corpus.val)
    assert loaded.manifest() == corpus.manifest()
