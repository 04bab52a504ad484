"""A token vocabulary: a list of symbols with four special tokens (BOS, SEP, EOS, PAD) at the end."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

SPECIALS = ("<bos>", "<sep>", "<eos>", "<pad>")


@dataclass(frozen=True)
class TokenVocab:
    """`symbols` are the ordinary tokens (ids 0..len-1); BOS, SEP, EOS, PAD follow them."""

    symbols: tuple[str, ...]

    def __post_init__(self):
        if len(set(self.symbols)) != len(self.symbols) or set(self.symbols) & set(SPECIALS):
            raise ValueError("symbols: must be distinct and not reuse a special token")

    @cached_property
    def tokens(self) -> tuple[str, ...]:
        return self.symbols + SPECIALS

    @cached_property
    def index(self) -> dict[str, int]:
        return {token: i for i, token in enumerate(self.tokens)}

    @property
    def size(self) -> int:
        return len(self.tokens)

    @property
    def bos(self) -> int:
        return self.index["<bos>"]

    @property
    def sep(self) -> int:
        return self.index["<sep>"]

    @property
    def eos(self) -> int:
        return self.index["<eos>"]

    @property
    def pad(self) -> int:
        return self.index["<pad>"]

    def encode(self, tokens) -> list[int]:
        """Token strings (or the characters of a string) -> ids; an unknown token raises KeyError naming it."""
        try:
            return [self.index[t] for t in tokens]
        except KeyError as error:
            raise KeyError(f"token {error.args[0]!r} is not in the vocabulary") from None

    def decode(self, ids) -> list[str]:
        return [self.tokens[i] for i in ids]


def char_vocab(characters: str) -> TokenVocab:
    """A character-level vocabulary (one symbol per character), e.g. tasks.train.corpus.VOCAB's characters."""
    return TokenVocab(tuple(characters))
