"""Modality-Protected Learning, spec §3.2 / §10: PCGrad removes conflicts and leaves agreeing
gradients alone, its summed step lowers both of two conflicting losses to first order, the EMA
normaliser, and the training-step helper equals PCGrad done by hand."""
from __future__ import annotations

import pytest
import torch

from tasks.cfd.surrogate import mpl


def generator(seed=0):
    return torch.Generator().manual_seed(seed)


def test_conflicting_pair_is_projected_to_nonnegative_inner_products():
    g1, g2 = torch.tensor([1.0, 0.0, 0.5]), torch.tensor([-1.0, 1.0, 0.0])
    assert g1 @ g2 < 0
    projected, conflicts, checked = mpl.project_conflicting(torch.stack([g1, g2]), generator())
    assert (conflicts, checked) == (2, 2)
    assert projected[0] @ g2 >= -1e-7 and projected[1] @ g1 >= -1e-7 and projected[0] @ projected[1] >= -1e-7


def test_agreeing_gradients_pass_unchanged():
    grads = [[torch.tensor([1.0, 2.0]), torch.tensor([[0.5]])], [torch.tensor([0.5, 0.1]), torch.tensor([[2.0]])]]
    summed = mpl.pcgrad(grads, generator())
    torch.testing.assert_close(summed[0], torch.tensor([1.5, 2.1]))
    torch.testing.assert_close(summed[1], torch.tensor([[2.5]]))


@pytest.mark.parametrize("seed", range(5))
def test_pcgrad_step_lowers_both_conflicting_losses_to_first_order(seed):
    """Two quadratics with conflicting gradients at w: the plain summed step raises one of them; the
    PCGrad direction has a non-negative inner product with both gradients."""
    torch.manual_seed(seed)
    w = torch.randn(6)
    a, b = w + torch.randn(6), w - torch.randn(6)  # minima on roughly opposite sides
    losses = [lambda v: (v - a).pow(2).sum(), lambda v: 3 * (v - b).pow(2).sum()]
    grads = [torch.autograd.functional.jacobian(f, w) for f in losses]
    direction = mpl.pcgrad([[g] for g in grads], generator(seed))[0]
    assert all(direction @ g >= -1e-6 for g in grads)
    step = w - 1e-4 * direction
    assert all(f(step) <= f(w) + 1e-9 for f in losses)


def test_pcgrad_rejects_mismatched_parameters():
    with pytest.raises(ValueError, match="grads"):
        mpl.pcgrad([[torch.zeros(2)], [torch.zeros(3)]], generator())


def test_loss_normaliser_divides_by_the_ema_of_each_modality():
    normalise = mpl.LossNormalizer(beta=0.5)
    first = normalise({"cd": torch.tensor(4.0), "surface": torch.tensor(100.0)})
    assert float(first["cd"]) == float(first["surface"]) == 1.0
    second = normalise({"cd": torch.tensor(2.0), "surface": torch.tensor(100.0)})
    assert float(second["cd"]) == pytest.approx(2.0 / 3.0)  # ema = 0.5 * 4 + 0.5 * 2
    with pytest.raises(ValueError, match="beta"):
        mpl.LossNormalizer(beta=1.0)


def test_backward_gives_shared_parameters_the_pcgrad_sum_and_others_the_plain_gradient():
    torch.manual_seed(0)
    trunk, head_a, head_b = torch.nn.Linear(3, 4), torch.nn.Linear(4, 1), torch.nn.Linear(4, 1)
    x = torch.randn(10, 3)

    def losses():
        h = trunk(x)
        return {"a": head_a(h).pow(2).mean(), "b": (head_b(h) - 1).pow(2).mean()}, h.pow(2).mean() * 0.1

    modality, extra = losses()
    shared = list(trunk.parameters())
    per = [torch.autograd.grad(loss, shared, retain_graph=True) for loss in modality.values()]
    expected_shared = [p + e for p, e in zip(mpl.pcgrad([list(g) for g in per], generator(3)),
                                             torch.autograd.grad(extra, shared, retain_graph=True))]
    expected_heads = torch.autograd.grad(sum(modality.values()), [*head_a.parameters(), *head_b.parameters()],
                                         retain_graph=True)
    stats = mpl.backward(modality, extra, shared, None, generator(3))
    for p, e in zip(shared, expected_shared):
        torch.testing.assert_close(p.grad, e)
    for p, e in zip([*head_a.parameters(), *head_b.parameters()], expected_heads):
        torch.testing.assert_close(p.grad, e)
    assert 0 <= stats["conflict_rate"] <= 1
