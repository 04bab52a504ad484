"""Spec §10 tests 1-7: the process sets, their weights and MC-PRM values."""
from __future__ import annotations

import random

from flows.lambda_grpo.process_sets import mc_prm, process_counts, process_trie, token_weights, tree_stats



def random_groups(count: int, seed: int = 0):
    """Groups of 2-6 completions of 1-6 tokens over a 4-token alphabet (many shared prefixes)."""
    rnd = random.Random(seed)
    return [[[rnd.randrange(4) for _ in range(rnd.randint(1, 6))] for _ in range(rnd.randint(2, 6))]
            for _ in range(count)]


def test_hand_example():
    group = [[1, 2, 3], [1, 2, 4], [1, 5, 6], [1, 2, 3]]
    assert process_counts(group) == [[4, 3, 2], [4, 3, 1], [4, 1, 1], [4, 3, 2]]
    assert token_weights(group, "lambda_grpo")[1] == [1 / 4, 1 / 3, 1.0]
    assert token_weights(group, "grpo") == [[1.0] * 3] * 4


def test_weight_sum_is_the_number_of_distinct_prefixes():
    for group in random_groups(300):
        prefixes = {tuple(c[:t + 1]) for c in group for t in range(len(c))}
        assert abs(sum(map(sum, token_weights(group, "lambda_grpo"))) - len(prefixes)) < 1e-9


def test_permutation_invariance():
    rnd = random.Random(1)
    for group in random_groups(200, seed=2):
        order = list(range(len(group)))
        rnd.shuffle(order)
        counts, shuffled = process_counts(group), process_counts([group[i] for i in order])
        assert shuffled == [counts[i] for i in order]


def test_limits_and_prefix_semantics():
    assert process_counts([[1, 2], [2, 2], [3, 2]]) == [[1, 1], [1, 1], [1, 1]]  # differ at the first token
    assert process_counts([[5, 6]] * 4) == [[4, 4]] * 4  # identical: weight 1/G everywhere
    # differ at position 1, agree later: no sharing after the divergence (prefix, not position-wise equality)
    assert process_counts([[1, 2, 7], [1, 3, 7]]) == [[2, 1, 1], [2, 1, 1]]
    # a strict prefix (ended by EOS = 9) shares only the positions before its EOS
    assert process_counts([[1, 2, 9], [1, 2, 3, 9]]) == [[2, 2, 1], [2, 2, 1, 1]]


def test_mc_prm_values():
    group = [[1, 2, 3], [1, 2, 4], [1, 5, 6], [1, 2, 3]]
    rewards, advantages = [1.0, 0.0, 0.0, 1.0], [0.8, -0.8, -0.8, 0.8]
    trie = process_trie(group)
    values = mc_prm(trie, rewards, advantages)
    for members, (r, a) in zip(trie.members, values):
        assert r == sum(rewards[j] for j in members) / len(members)
        assert abs(a - sum(advantages[j] for j in members) / len(members)) < 1e-12
    root = trie.node[0][0]  # the first token is shared by all: its R is the group mean
    assert values[root][0] == sum(rewards) / 4


def test_tree_stats():
    stats = tree_stats([[1, 2, 3], [1, 2, 4], [1, 5, 6], [1, 2, 3]])
    # process sets: {0,1,2,3} (root + token 1), {0,1,3}, {0,3}, {1}, {2}
    assert stats.nodes == 5 and stats.tokens == 12 and stats.nontrivial and stats.histogram == (3, 2, 3, 4)
    assert not tree_stats([[1], [2], [3]]).nontrivial and not tree_stats([[1, 2]] * 3).nontrivial
