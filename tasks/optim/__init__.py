"""The optimizers of the optimizer papers: each update rule is a pure function in its module, wrapped in one
thin torch.optim.Optimizer shell; `tasks.optim.registry` builds the shared baselines by name (torch.optim.AdamW,
SGD, Adam, lion_pytorch.Lion, Signum, Muon and their soft variants).

Every shell is a drop-in torch.optim.Optimizer (tasks.optim.dropin): torch's standard closures, param groups,
copy.deepcopy and pickle, and state_dict round trips that resume bit-identically (step counters, temperature
schedules and RNG states live in `state`). tests/optim/test_dropin.py checks each property for each optimizer.

`from tasks.optim import SoftSignum` works for users; it imports only the module that defines the name (PEP 562),
so importing one optimizer never runs the others. Code in this repository imports from the module itself
(`from tasks.optim.signum import SoftSignum`), which is what the stage-deps tool follows.
"""
from importlib import import_module

_MODULE_OF = {"HardSwitchSign": "signum", "Signum": "signum", "SoftSignum": "signum", "IMASPSSafe": "polyak",
              "SPSMax": "polyak", "SPSSafe": "polyak", "LiMuon": "limuon", "Muon": "muon", "SoftMuon": "muon",
              "muon_param_groups": "muon", "ProxSGD": "prox_sgd", "SAdam": "sadam"}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str):
    if name not in _MODULE_OF:
        raise AttributeError(f"module 'tasks.optim' has no attribute {name!r}")
    return getattr(import_module(f"tasks.optim.{_MODULE_OF[name]}"), name)
