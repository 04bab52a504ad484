"""The baseline registry: one class and one set of defaults per name, explicit overrides refused by name."""
import pytest
import torch

from tasks.optim.muon import Muon
from tasks.optim.registry import REGISTRY, REQUIRED, build_optimizer, default_hyperparameters, optimizer_factory
from tasks.optim.signum import Signum


def parameters():
    generator = torch.Generator().manual_seed(0)
    W = torch.nn.Parameter(torch.randn(6, 4, generator=generator))
    b = torch.nn.Parameter(torch.randn(4, generator=generator))
    return W, b


def test_defaults_are_the_classes_own():
    assert default_hyperparameters("adamw")["weight_decay"] == 1e-2  # torch's, not a paper's
    assert default_hyperparameters("adamw")["betas"] == (0.9, 0.999)
    assert default_hyperparameters("lion")["lr"] == 1e-4
    assert default_hyperparameters("muon")["orthogonalizer"] == "ns5"
    assert default_hyperparameters("softmuon")["total_steps"] == REQUIRED
    assert "mode" not in default_hyperparameters("signum")


@pytest.mark.parametrize("name", ["sgd", "adam", "adamw", "lion", "signum", "muon"])
def test_every_baseline_builds_with_its_defaults_and_steps(name):
    W, b = parameters()
    optimizer = build_optimizer(name, [W], [b])
    before = W.detach().clone()
    (W.sum() ** 2 + b.sum()).backward()
    optimizer.step()
    assert not torch.equal(before, W.detach())


def test_matrix_rules_give_the_rest_to_the_aux_adamw():
    W, b = parameters()
    optimizer = build_optimizer("muon", [W], [b], lr=0.01, aux_lr=1e-3)
    assert isinstance(optimizer, Muon)
    assert [(g["use_muon"], g["lr"], len(g["params"])) for g in optimizer.param_groups] == [(True, 0.01, 1), (False, 1e-3, 1)]
    assert isinstance(build_optimizer("signum", [W], [b]), Signum)
    assert len(build_optimizer("adamw", [W], [b]).param_groups[0]["params"]) == 2


def test_registry_build_equals_the_class_built_by_hand():
    runs = []
    for make in (lambda W, b: build_optimizer("adamw", [W], [b], lr=0.1),
                 lambda W, b: torch.optim.AdamW([W, b], lr=0.1)):
        W, b = parameters()
        optimizer = make(W, b)
        for _ in range(3):
            optimizer.zero_grad()
            ((W ** 2).sum() + (b ** 3).sum()).backward()
            optimizer.step()
        runs.append(torch.cat([W.detach().ravel(), b.detach().ravel()]))
    assert torch.equal(*runs)


def test_unknown_names_and_hyperparameters_are_refused_by_name():
    W, b = parameters()
    with pytest.raises(ValueError, match="unknown hyperparameter 'momentum'"):
        build_optimizer("adamw", [W], [b], momentum=0.9)
    with pytest.raises(ValueError, match=r"optimizer: must be one of .*got 'adamx'"):
        optimizer_factory("adamx")
    assert "sgd" in REGISTRY
