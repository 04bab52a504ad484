"""The critic trained to rank within graphs (issue 42): the pairwise loss, batches and validation by graph, the
choice of the generator's scorer, the intra-|w| scorer, and the networks file's format."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from flows.neural_qaoa2.pipeline import choose_scorer
from tasks.core.inputs import InputError
from tasks.quantum.critic import (
    Critic,
    decision_inputs,
    graph_batches,
    graph_groups,
    pairwise_ranking_loss,
    split_graphs,
    validation_ranking,
)
from tasks.quantum.features import to_tensors
from tasks.quantum.generator import (
    JointGenerator,
    decision_score,
    intra_share_score,
    load_networks,
    save_networks,
    train_generator,
)
from tasks.quantum.graph import WeightedGraph
from tasks.quantum.partition import intra_weight_share


def random_graph(n: int, p: float, seed: int) -> WeightedGraph:
    rng = np.random.default_rng(seed)
    iu, ju = np.triu_indices(n, 1)
    keep = rng.random(iu.size) < p
    return WeightedGraph(n, np.stack([iu[keep], ju[keep]], axis=1), rng.choice([-1.0, 2.0], size=int(keep.sum())))


def test_pairwise_loss_rewards_the_order_of_rho_and_ignores_ties():
    rho = torch.tensor([0.9, 0.8, 0.7])
    right, wrong = torch.tensor([3.0, 2.0, 1.0]), torch.tensor([1.0, 2.0, 3.0])
    assert pairwise_ranking_loss(right, rho) < np.log(2) < pairwise_ranking_loss(wrong, rho)
    shifted = right + 100.0  # a graph's level does not matter to the ranking term
    assert pairwise_ranking_loss(shifted, rho).item() == pytest.approx(pairwise_ranking_loss(right, rho).item())
    logits = torch.tensor([1.0, 5.0], requires_grad=True)
    tie = pairwise_ranking_loss(logits, torch.tensor([0.8, 0.8]))
    tie.backward()
    assert tie.item() == 0.0 and torch.equal(logits.grad, torch.zeros(2))
    # a pair twice as far apart in rho weighs twice as much
    loss = pairwise_ranking_loss(torch.tensor([0.0, 0.0, 0.0]), torch.tensor([0.5, 0.3, 0.3]))
    assert loss.item() == pytest.approx(np.log(2))


def test_batches_and_validation_hold_whole_graphs():
    a, b, c = object(), object(), object()
    samples = [(a,), (b,), (a,), (c,), (b,), (a,)]
    groups = graph_groups(samples)
    assert groups == [[0, 2, 5], [1, 4], [3]]
    rng = np.random.default_rng(0)
    batches = graph_batches(groups, 2, rng)
    assert sorted(i for batch in batches for i in batch) == list(range(6))
    assert all(len({id(samples[i][0]) for i in batch}) == 1 and len(batch) <= 2 for batch in batches)
    train, val = split_graphs(groups, 0.3, rng)
    assert len(val) == 1 and len(train) == 2 and sorted(map(tuple, train + val)) == sorted(map(tuple, groups))
    assert split_graphs(groups[:1], 0.3, rng) == (groups[:1], [])  # one graph: nothing to hold out


def test_choose_scorer_prefers_the_better_ranking_and_the_critic_on_ties():
    assert choose_scorer({"critic": 0.3, "intra_share": 0.8}) == "intra_share"
    assert choose_scorer({"critic": 0.8, "intra_share": 0.3}) == "critic"
    assert choose_scorer({"critic": 0.5, "intra_share": 0.5}) == "critic"
    assert choose_scorer({"critic": float("nan"), "intra_share": 0.1}) == "intra_share"
    assert choose_scorer({"critic": 0.1, "intra_share": float("nan")}) == "critic"


def partitions_of(graph: WeightedGraph, count: int, k: int, seed: int) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [[np.sort(part) for part in np.array_split(rng.permutation(graph.n), k)] for _ in range(count)]


def test_validation_ranking_measures_the_share_exactly():
    graph = random_graph(12, 0.5, seed=1)
    tensors = to_tensors(graph)
    samples = []
    for parts in partitions_of(graph, 6, 3, seed=2):
        share = intra_weight_share(graph, parts)
        intra, _ = decision_inputs(tensors, parts, [(np.zeros(1), np.zeros(1))] * 3)
        assert (intra.abs().sum() / tensors.edge_attr.abs().sum()).item() == pytest.approx(share, abs=1e-6)
        samples.append((tensors, parts, [(np.zeros(1), np.zeros(1))] * 3, share))  # rho = the share: it ranks perfectly
    torch.manual_seed(0)
    ranking = validation_ranking(Critic(width=8, layers=1), samples, [list(range(6))])
    assert ranking["intra_share"] == pytest.approx(1.0) and -1.0 <= ranking["critic"] <= 1.0


def test_intra_share_score_is_the_share_and_has_a_gradient():
    graph = random_graph(10, 0.5, seed=3)
    tensors = to_tensors(graph)
    parts = partitions_of(graph, 1, 2, seed=4)[0]
    onehot = torch.zeros(graph.n, 2)
    for a, part in enumerate(parts):
        onehot[part, a] = 1.0
    soft = torch.full((graph.n, 2), 0.5, requires_grad=True)
    s = onehot + soft - soft.detach()  # straight-through: the value of the hard one
    score = intra_share_score(tensors, s)
    assert score.item() == pytest.approx(intra_weight_share(graph, parts), abs=1e-6)
    score.backward()
    assert soft.grad.abs().sum() > 0
    with pytest.raises(ValueError, match="scorer"):
        decision_score(Critic(width=8, layers=1).eval(), "modularity", tensors, onehot, s, None, None)


@pytest.mark.heavy  # ~5 s: a few epochs of the generator on three graphs
def test_generator_trained_on_the_share_raises_the_share():
    torch.manual_seed(5)
    critic = Critic(width=8, layers=1).eval()
    graphs = [to_tensors(random_graph(n, 0.4, seed=n)) for n in (12, 14, 16)]
    _, curve = train_generator(critic, graphs, n_max=6, width=16, layers=1, epochs=8, batch=3, lr=1e-2, seed=6,
                               val_fraction=0.0, scorer="intra_share")
    assert max(c["train_score"] for c in curve[1:]) > curve[0]["train_score"]


def test_networks_name_their_scorer_and_old_files_are_refused(tmp_path):
    critic, generator = Critic(width=8, layers=1), JointGenerator(width=8, layers=1)
    with pytest.raises(ValueError, match="scorer"):
        save_networks(tmp_path / "none.pt", critic, generator, {})
    save_networks(path := tmp_path / "networks.pt", critic, generator, {"scorer": "intra_share"})
    assert load_networks(path)[2]["scorer"] == "intra_share"
    blob = torch.load(path)
    del blob["format"]
    torch.save(blob, old := tmp_path / "old.pt")
    with pytest.raises(InputError, match="old.pt: format 1.*retrain"):
        load_networks(old)
