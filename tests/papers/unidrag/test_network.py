"""The UniDrag network (flows/unidrag/network.py), spec §10 Surrogate: ePSA slice weights are
distributions and noisy in training only, every kind's outputs are invariant to permutations of
surface and of volume points, GER gates are top-k renormalised, E = 1 is a plain FFN, and UniDrag
reports its gate usage and balance loss."""
from __future__ import annotations

import pytest
import torch

from flows.unidrag.network import EideticPhysicsAttention, GatedExpertRouting, top_k_gates
from flows.unidrag.surrogates import KINDS, build_model
from tasks.cfd.surrogate.training import TrainConfig
from tests.cfd.test_surrogate_models import (check_permutation_invariance_and_profile,
                                             check_slice_weights_are_distributions, features_of, shape_tensors)

TINY = {"d": 16, "blocks": 2, "heads": 2, "slices": 4, "experts": 3, "top_k": 2, "profile_bins": 8}


@pytest.mark.parametrize("training", [True, False])
def test_epsa_slice_weights_sum_to_one_for_every_token(training):
    check_slice_weights_are_distributions(EideticPhysicsAttention, training)


def test_epsa_is_noisy_in_training_only():
    torch.manual_seed(0)
    layer, x = EideticPhysicsAttention(16, 2, 5), torch.randn(1, 30, 16)
    assert not torch.equal(layer.train()(x), layer(x))
    torch.testing.assert_close(layer.eval()(x), layer(x), rtol=0, atol=0)


@pytest.mark.parametrize("kind", KINDS)
def test_outputs_are_invariant_to_point_permutations_and_profile_sums_contributions(kind):
    torch.manual_seed(0)
    check_permutation_invariance_and_profile(build_model(TrainConfig(kind=kind, **TINY)))


def test_gates_are_top_k_renormalised_and_one_expert_is_a_plain_ffn():
    gates = top_k_gates(torch.randn(5, 7, 4), k=2)
    torch.testing.assert_close(gates.sum(-1), torch.ones(5, 7))
    assert ((gates > 0).sum(-1) == 2).all()
    torch.manual_seed(0)
    routing, h = GatedExpertRouting(16, experts=1, top_k=1), torch.randn(2, 9, 16)
    for r, _ in routing(h, ("surface", "volume", "cd", "profile")).values():
        torch.testing.assert_close(r, routing.experts[0](h))
    with pytest.raises(ValueError, match="top_k"):
        GatedExpertRouting(16, experts=2, top_k=3)


def test_unidrag_reports_gate_usage_and_a_balance_loss():
    torch.manual_seed(0)
    model = build_model(TrainConfig(kind="unidrag", **TINY))
    out = model(*features_of(*shape_tensors()))
    assert out["gate_usage"].shape == (4, 3)
    torch.testing.assert_close(out["gate_usage"].sum(-1), torch.ones(4))
    assert 0 < float(out["aux_loss"].detach()) <= 4 * 3  # each gate's Switch loss is at most E
