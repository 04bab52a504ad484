"""The process sets of a group of completions (spec lambda_grpo §2, §3.3): the trie over the group's completions.

lambda(i, t) = {j : o_{j,1..t} = o_{i,1..t}}, the group members whose completion prefix up to and including
position t equals o_i's (duplicates are distinct members; prompt tokens are not part of a completion).
lambda-GRPO weighs token (i, t) by 1 / |lambda(i, t)|; GRPO by 1. One pass over the tokens builds the trie
(a node per distinct prefix, O(G L)), so the counts cost nothing next to sampling.

The implicit MC-PRM of a process set: R(lambda) = mean reward of its members, A(lambda) = mean of their
advantages (spec §2); the tree statistics summarise how much of a group is shared.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class ProcessTrie:
    """node[i][t]: the trie node of o_{i,1..t+1}; members[n]: the group members through node n (ascending)."""

    node: list[list[int]]
    members: list[list[int]]

    @property
    def group_size(self) -> int:
        return len(self.node)

    def counts(self) -> list[list[int]]:
        """|lambda(i, t)| for every token of every completion."""
        return [[len(self.members[n]) for n in row] for row in self.node]


def process_trie(completions: list[list[int]]) -> ProcessTrie:
    children: dict[tuple[int, int], int] = {}  # (parent node, token) -> node; the root (empty prefix) is -1
    members: list[list[int]] = []
    node = []
    for i, completion in enumerate(completions):
        parent, path = -1, []
        for token in completion:
            parent = children.setdefault((parent, token), len(children))
            if parent == len(members):
                members.append([])
            members[parent].append(i)
            path.append(parent)
        node.append(path)
    return ProcessTrie(node, members)


def process_counts(completions: list[list[int]]) -> list[list[int]]:
    return process_trie(completions).counts()


def token_weights(completions: list[list[int]], method: str) -> list[list[float]]:
    """Per-token loss weights: 1 / |lambda(i, t)| for "lambda_grpo", 1 for "grpo"."""
    if method == "grpo":
        return [[1.0] * len(c) for c in completions]
    if method != "lambda_grpo":
        raise ValueError(f"method: must be 'grpo' or 'lambda_grpo', got {method!r}")
    return [[1.0 / c for c in row] for row in process_counts(completions)]


def weight_matrix(groups: list[list[list[int]]], method: str, width: int) -> torch.Tensor:
    """[groups * G, width] weights of a batch of groups (row-major as the completions), 0 past each end."""
    rows = [w for group in groups for w in token_weights(group, method)]
    out = torch.zeros((len(rows), width), dtype=torch.float64)
    for i, w in enumerate(rows):
        out[i, :len(w)] = torch.tensor(w, dtype=torch.float64)
    return out


def mc_prm(trie: ProcessTrie, rewards: list[float], advantages: list[float]) -> list[tuple[float, float]]:
    """(R(lambda), A(lambda)) of every trie node: the mean reward and mean advantage of its members."""
    return [(sum(rewards[j] for j in m) / len(m), sum(advantages[j] for j in m) / len(m)) for m in trie.members]


@dataclass(frozen=True)
class TreeStats:
    """Of one group: nodes of B(G) (distinct process sets, the root included), completion tokens, the sum of
    |lambda| over them, those with |lambda| > 1, and whether some process set after the prompt has
    1 < |lambda| < G (a non-trivial implicit PRM); histogram[k - 1]: completion tokens with |lambda| = k."""

    nodes: int
    tokens: int
    sum_lambda: int
    shared_tokens: int
    nontrivial: bool
    histogram: tuple[int, ...]


def tree_stats(completions: list[list[int]]) -> TreeStats:
    trie = process_trie(completions)
    G = trie.group_size
    sets = {tuple(m) for m in trie.members} | {tuple(range(G))}
    counts = [c for row in trie.counts() for c in row]
    return TreeStats(nodes=len(sets), tokens=len(counts), sum_lambda=sum(counts),
                     shared_tokens=sum(c > 1 for c in counts), nontrivial=any(1 < c < G for c in counts),
                     histogram=tuple(counts.count(k) for k in range(1, G + 1)))


@dataclass(frozen=True)
class ProcessStep:
    """A node of B(G): its process set and the completion positions [start, end) its members share."""

    members: tuple[int, ...]
    start: int
    end: int


def process_steps(completions: list[list[int]]) -> list[ProcessStep]:
    """The nodes of B(G) below the prompt (unary chains of the trie merged), in order of first appearance."""
    trie = process_trie(completions)
    spans: dict[tuple[int, ...], list[int]] = {}
    for path in trie.node:
        for t, n in enumerate(path):
            span = spans.setdefault(tuple(trie.members[n]), [t, t + 1])
            span[1] = max(span[1], t + 1)
    return [ProcessStep(members, start, end) for members, (start, end) in spans.items()]
