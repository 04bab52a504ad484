"""Spec §10 tests on the neural policy: OCH, GCD, STE, ranges, features, critic and
generator training, test-time adaptation and the policy interface (tiny sizes, CPU)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from tasks.quantum import generator as generator_module
from tasks.quantum.critic import Critic, decision_inputs, train_critic
from tasks.quantum.features import node_features, to_tensors
from tasks.quantum.generator import (
    JointGenerator,
    OrthogonalComplementHead,
    angles_from_vectors,
    greedy_capacity_discretisation,
    load_networks,
    neural_policy,
    save_networks,
    straight_through,
    train_generator,
)
from tasks.quantum.graph import WeightedGraph


@pytest.fixture(autouse=True)
def one_thread():
    """Tiny graphs: intra-op threads only add synchronisation, which on a busy 2-core machine made
    these tests 10x slower. Pinned per test and restored, so nothing leaks to other tests."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def random_graph(n: int, density: float, seed: int, signed: bool = True) -> WeightedGraph:
    rng = np.random.default_rng(seed)
    iu, ju = np.triu_indices(n, 1)
    keep = rng.random(iu.size) < density
    edges = np.stack([iu[keep], ju[keep]], axis=1)
    weights = rng.choice([-3.0, -1.0, 1.0, 2.0] if signed else [1.0], size=len(edges))
    return WeightedGraph(n, edges, weights)


def random_parts(n: int, k: int, rng: np.random.Generator) -> list[np.ndarray]:
    return [np.sort(part) for part in np.array_split(rng.permutation(n), k)]


def assert_valid_decision(parts, params, n: int, k: int, n_max: int, p: int = 1) -> None:
    assert len(parts) == k and len(params) == k
    nodes = np.concatenate(parts)
    assert np.array_equal(np.sort(nodes), np.arange(n))  # disjoint cover
    assert all(1 <= len(part) <= n_max for part in parts)  # exactly k non-empty parts within capacity
    for gamma, beta in params:
        assert gamma.shape == (p,) and beta.shape == (p,)
        angles = np.concatenate([gamma, beta])
        assert np.all(angles >= 0) and np.all(angles < 2 * np.pi)


# ---------------------------------------------------------------- OCH, GCD, STE, ranges

def test_och_queries_are_orthonormal_and_orthogonal_to_global_direction():
    torch.manual_seed(0)
    head = OrthogonalComplementHead(32).double()
    h_hat = F.normalize(torch.randn(20, 32, dtype=torch.float64), dim=1)
    for k in (1, 4, 31):
        q, g = head.queries(h_hat, k)
        assert q.shape == (k, 32)
        assert torch.allclose(q @ q.T, torch.eye(k, dtype=torch.float64), atol=1e-10)
        assert torch.linalg.norm(q @ g) < 1e-6
    with pytest.raises(ValueError, match="k must be"):
        head.queries(h_hat, 32)
    assert not any(True for _ in head.parameters())  # A is a buffer, not trained


@pytest.mark.parametrize("seed", range(5))
def test_gcd_assigns_every_node_within_capacity(seed):
    gen = torch.Generator().manual_seed(seed)
    n, n_max = 23, 6
    k = math.ceil(n / n_max)
    s_soft = torch.softmax(3 * torch.randn(n, k, generator=gen) + torch.tensor([4.0, 0, 0, 0]), dim=1)  # crowded cluster 0
    s_hard = greedy_capacity_discretisation(s_soft, n_max)
    assert s_hard.shape == (n, k)
    assert torch.all(s_hard.sum(dim=1) == 1) and torch.all((s_hard == 0) | (s_hard == 1))
    assert torch.all(s_hard.sum(dim=0) <= n_max)
    assert torch.all(s_hard.sum(dim=0) >= 1)  # k = ceil(n / n_max) leaves no part empty


def test_gcd_returns_argmax_when_feasible():
    gen = torch.Generator().manual_seed(1)
    s_soft = torch.softmax(torch.randn(12, 3, generator=gen), dim=1)
    counts = torch.bincount(s_soft.argmax(dim=1), minlength=3)
    s_hard = greedy_capacity_discretisation(s_soft, int(counts.max()))
    assert torch.equal(s_hard, F.one_hot(s_soft.argmax(dim=1), 3).float())
    with pytest.raises(ValueError, match="k \\* n_max"):
        greedy_capacity_discretisation(s_soft, 3)


def test_straight_through_forward_is_hard_and_gradient_is_soft():
    gen = torch.Generator().manual_seed(2)
    logits = torch.randn(10, 3, generator=gen)
    weights = torch.randn(10, 3, generator=gen)

    s_soft = torch.softmax(logits, dim=1).requires_grad_()
    s_hard = greedy_capacity_discretisation(s_soft, 4)
    s = straight_through(s_hard, s_soft)
    assert torch.equal(s, s_hard)

    (weights * s).sum().backward()  # linear loss: identical to the soft path
    soft = s_soft.detach().clone().requires_grad_()
    (weights * soft).sum().backward()
    assert torch.allclose(s_soft.grad, soft.grad)

    s_soft.grad = None  # nonlinear loss: dL/dS_soft = dL/dS evaluated at the forward value S_hard
    s = straight_through(s_hard, s_soft)
    (weights * s ** 2).sum().backward()
    assert torch.allclose(s_soft.grad, 2 * weights * s_hard)


def test_angles_lie_in_zero_two_pi():
    v = torch.tensor([[1.0, 0.0], [1.0, -0.0], [1.0, -1e-9], [-1.0, -1e-7], [0.0, -1.0], [-1.0, 0.0], [3.0, 4.0]])
    theta = angles_from_vectors(v)
    assert torch.all(theta >= 0) and torch.all(theta < 2 * math.pi)
    assert torch.isclose(theta[-1], torch.atan2(torch.tensor(4.0), torch.tensor(3.0)))

    torch.manual_seed(3)
    tensors = to_tensors(random_graph(17, 0.4, seed=3))
    for p in (1, 2):
        s_hard, s, intra, theta = JointGenerator(width=16, layers=2, p=p)(tensors, k=3, n_max=6)
        assert theta.shape == (3, 2 * p)
        assert torch.all(theta >= 0) and torch.all(theta < 2 * math.pi)
        assert torch.equal(s, s_hard) and intra.shape == tensors.edge_attr.shape


def test_critic_output_in_open_interval():
    torch.manual_seed(4)
    rng = np.random.default_rng(4)
    critic = Critic(width=16, layers=3, p=1).eval()
    for seed in range(3):
        tensors = to_tensors(random_graph(15, 0.3, seed=seed))
        parts = random_parts(15, 3, rng)
        params = [(rng.uniform(0, 2 * np.pi, 1), rng.uniform(0, 2 * np.pi, 1)) for _ in parts]
        rho_hat = critic(tensors, *decision_inputs(tensors, parts, params))
        assert rho_hat.shape == () and 0.5 < rho_hat.item() < 1.0


# ---------------------------------------------------------------- features

def test_node_features_are_z_scored():
    graph = random_graph(20, 0.3, seed=5)
    f = node_features(graph)
    assert f.shape == (20, 5) and f.dtype == np.float32
    assert np.allclose(f.mean(axis=0), 0, atol=1e-5)
    assert np.allclose(f.std(axis=0), 1, atol=1e-4)
    degree = np.bincount(graph.edges.ravel(), minlength=20).astype(float)
    assert np.allclose(f[:, 0], (degree - degree.mean()) / (degree.std() + 1e-6), atol=1e-5)
    signed = np.bincount(graph.edges.ravel(), np.repeat(graph.weights, 2), minlength=20)
    assert np.allclose(f[:, 1], (signed - signed.mean()) / (signed.std() + 1e-6), atol=1e-5)

    cycle = WeightedGraph(6, np.array([[i, i + 1] for i in range(5)] + [[0, 5]]), np.ones(6))
    assert np.allclose(node_features(cycle), 0)  # a constant feature z-scores to 0

    tensors = to_tensors(graph)
    m = len(graph.edges)
    assert tensors.edge_index.shape == (2, 2 * m) and tensors.edge_attr.shape == (2 * m,)
    assert torch.equal(tensors.edge_index[:, m:], tensors.edge_index[:, :m].flip(0))
    assert np.isclose(tensors.edge_attr.abs().max().item(), 1.0)


# ---------------------------------------------------------------- training and inference

def synthetic_samples(count: int, seed: int, per_graph: int = 5) -> list[tuple]:
    """rho grows with the fraction of |w| kept inside parts: a signal the critic can learn; `per_graph` partitions of
    each graph share its GraphTensors (as the pipeline's samples do)."""
    rng = np.random.default_rng(seed)
    samples = []
    for i in range(count):
        if i % per_graph == 0:
            graph = random_graph(int(rng.integers(8, 13)), 0.4, seed=100 * seed + i)
            tensors = to_tensors(graph)
        parts = random_parts(graph.n, int(rng.integers(2, 4)), rng)
        params = [(rng.uniform(0, 2 * np.pi, 1), rng.uniform(0, 2 * np.pi, 1)) for _ in parts]
        intra, _ = decision_inputs(tensors, parts, params)
        kept = intra.abs().sum().item() / max(tensors.edge_attr.abs().sum().item(), 1e-9)
        samples.append((tensors, parts, params, 0.55 + 0.4 * kept))
    return samples


def test_critic_training_reduces_its_loss_and_is_deterministic():
    samples = synthetic_samples(20, seed=6)
    kwargs = {"width": 16, "layers": 2, "epochs": 12, "batch": 8, "lr": 3e-3, "seed": 7, "val_fraction": 0.2}
    critic, curve, val = train_critic(samples, **kwargs)
    assert [c["epoch"] for c in curve] == list(range(1, 13))
    assert curve[-1]["train_loss"] < curve[0]["train_loss"]
    assert all(-1 <= c["val_within_spearman"] <= 1 for c in curve)
    assert not critic.training
    assert len(val) == 1 and len(val[0]) == 5  # one whole graph of the four held out

    critic_again, curve_again, _ = train_critic(samples, **kwargs)
    assert curve == curve_again
    for a, b in zip(critic.state_dict().values(), critic_again.state_dict().values()):
        assert torch.equal(a, b)


def test_generator_training_increases_critic_score():
    torch.manual_seed(8)
    critic = Critic(width=16, layers=2, p=1).eval()
    graphs = [to_tensors(random_graph(n, 0.4, seed=n)) for n in (12, 14, 16, 18)]
    generator, curve = train_generator(critic, graphs, n_max=6, width=16, layers=2, epochs=6, batch=2,
                                       lr=4e-3, seed=9, val_fraction=0.0)
    assert curve[0]["epoch"] == 0 and len(curve) == 7
    assert max(c["train_score"] for c in curve[1:]) > curve[0]["train_score"]

    def score(gen):
        with torch.no_grad():
            return np.mean([generator_module.decision_score(critic, "critic", t, *generator_module._decide(gen, t, 6)).item() for t in graphs])

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(9)
        untrained = JointGenerator(16, 2, 1)
    assert score(generator) > score(untrained)


def test_test_time_adapt_returns_a_valid_decision():
    torch.manual_seed(10)
    critic, generator = Critic(width=16, layers=2).eval(), JointGenerator(width=16, layers=2)
    graph = random_graph(23, 0.3, seed=10)
    n_max, k = 6, 4
    parts, params = generator_module.test_time_adapt(generator, critic, to_tensors(graph), k, n_max, steps=3)
    assert_valid_decision(parts, params, graph.n, k, n_max)
    again = generator_module.test_time_adapt(generator, critic, to_tensors(graph), k, n_max, steps=3)
    assert all(np.array_equal(a, b) for a, b in zip(parts, again[0]))  # deterministic, generator untouched


def test_neural_policy_levels(tmp_path):
    torch.manual_seed(11)
    critic, generator = Critic(width=16, layers=2).eval(), JointGenerator(width=16, layers=2)
    policy = neural_policy(generator, critic, steps=2)
    rng = np.random.default_rng(0)

    small = random_graph(5, 0.6, seed=11)  # the final level: n <= n_max gives one part
    parts, params = policy(small, 6, rng, 2)
    assert_valid_decision(parts, params, 5, 1, 6)
    assert np.array_equal(parts[0], np.arange(5))

    big = random_graph(20, 0.3, seed=12)
    parts, params = policy(big, 6, rng, 0)
    assert_valid_decision(parts, params, 20, 4, 6)

    path = tmp_path / "networks.pt"
    save_networks(path, critic, generator, {"n_max": 6, "scorer": "critic"})
    critic2, generator2, config = load_networks(path)
    assert config == {"n_max": 6, "scorer": "critic"}
    parts2, params2 = neural_policy(generator2, critic2, steps=2)(big, 6, rng, 0)
    assert all(np.array_equal(a, b) for a, b in zip(parts, parts2))
    assert all(np.allclose(a[0], b[0]) for a, b in zip(params, params2))
