"""One registry of the shared baselines: name -> factory, with the factory's own defaults as the default
hyperparameters.

Every paper builds its baselines here, so "Muon", "AdamW", "SGD" or "Lion" is the same class with the same
defaults everywhere; what a paper changes it passes explicitly (from its params), never as a private default of
its own factory. Baselines come from their well-kept libraries (torch.optim, lion_pytorch), Signum and Muon
(with their soft variants, which live in the same modules) from tasks.optim. A paper's own method that no other
paper runs (LiMuon, S-Adam, Prox-SGD, the Polyak steps) is built from its module by that paper, so that editing
it reruns that paper alone: every module imported here is a dependency of every paper that uses the registry.

Every factory takes the same split: `matrices` (hidden 2-D weights) and `others` (embeddings, heads, biases,
norms, or every parameter of a model without that structure). Matrix rules (Muon, SoftMuon, LiMuon) give the
matrices their rule and the others an auxiliary AdamW (`aux_lr`); every other optimizer gets both lists.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

import torch
from lion_pytorch import Lion

from tasks.optim.muon import AUX_DEFAULTS, Muon, SoftMuon, muon_param_groups
from tasks.optim.signum import HardSwitchSign, Signum, SoftSignum


REQUIRED = "required"  # the default of a hyperparameter the caller must give (total_steps)


@dataclass(frozen=True)
class Entry:
    cls: type[torch.optim.Optimizer]
    matrix_rule: bool = False   # matrices get the rule, the rest the aux AdamW
    fixed: tuple[str, ...] = ()  # base-class arguments the class sets itself (Signum's mode)

    def defaults(self) -> dict:
        """The constructor's keyword defaults (following **options to the base class), plus aux_lr for matrix
        rules; a hyperparameter without default is REQUIRED."""
        found = {}
        for cls in self.cls.__mro__:
            if cls is torch.optim.Optimizer or "__init__" not in vars(cls):
                continue
            signature = inspect.signature(cls.__init__)
            for name, parameter in signature.parameters.items():
                if name in ("self", "params", *self.fixed) or parameter.kind is parameter.VAR_KEYWORD:
                    continue
                found.setdefault(name, REQUIRED if parameter.default is parameter.empty else parameter.default)
            if not any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values()):
                break
        if self.matrix_rule:
            found["aux_lr"] = AUX_DEFAULTS["lr"]
        return found


REGISTRY: dict[str, Entry] = {
    # baselines from their libraries
    "sgd": Entry(torch.optim.SGD),
    "adam": Entry(torch.optim.Adam),
    "adamw": Entry(torch.optim.AdamW),
    "lion": Entry(Lion),
    # sign and orthogonalised-momentum methods
    "signum": Entry(Signum, fixed=("mode",)),
    "softsignum": Entry(SoftSignum, fixed=("mode",)),
    "hardswitch": Entry(HardSwitchSign, fixed=("mode",)),
    "muon": Entry(Muon, matrix_rule=True),
    "softmuon": Entry(SoftMuon, matrix_rule=True),
}


def default_hyperparameters(name: str) -> dict:
    return _entry(name).defaults()


def _entry(name: str) -> Entry:
    if name not in REGISTRY:
        raise ValueError(f"optimizer: must be one of {sorted(REGISTRY)}, got {name!r}")
    return REGISTRY[name]


def build_optimizer(name: str, matrices: list, others: list, **hyperparameters) -> torch.optim.Optimizer:
    """The registered optimizer `name` over matrices + others, with its defaults updated by `hyperparameters`
    (a key the optimizer does not take is refused by name)."""
    entry = _entry(name)
    known = entry.defaults()
    unknown = sorted(set(hyperparameters) - set(known))
    if unknown:
        raise ValueError(f"optimizer {name}: unknown hyperparameter {unknown[0]!r} (takes: {', '.join(sorted(known))})")
    if not entry.matrix_rule:
        return entry.cls([*matrices, *others], **hyperparameters)
    options = dict(hyperparameters)
    lr = options.pop("lr", known["lr"])
    aux_lr = options.pop("aux_lr", known["aux_lr"])
    return entry.cls(muon_param_groups(matrices, others, lr=lr, aux_lr=aux_lr), **options)


OptimizerFactory = Callable[[list, list], torch.optim.Optimizer]


def optimizer_factory(name: str, **hyperparameters) -> OptimizerFactory:
    """(matrices, others) -> the optimizer: what a training runner takes, so it never knows which one it runs."""
    _entry(name)
    return lambda matrices, others: build_optimizer(name, matrices, others, **hyperparameters)


__all__ = ["REGISTRY", "build_optimizer", "default_hyperparameters", "optimizer_factory"]
