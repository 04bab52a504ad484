"""The optimizers of the optimizer papers: each update rule is a pure function in its module, wrapped in one
thin torch.optim.Optimizer shell. Baselines that live in well-kept libraries are used from there
(torch.optim.AdamW, torch.optim.Muon for cross-checks, torch.optim.SGD, lion_pytorch.Lion)."""
from tasks.optim.limuon import LiMuon
from tasks.optim.muon import Muon, SoftMuon, muon_param_groups
from tasks.optim.polyak import IMASPSSafe, SPSMax, SPSSafe
from tasks.optim.prox_sgd import ProxSGD
from tasks.optim.sadam import SAdam
from tasks.optim.signum import HardSwitchSign, Signum, SoftSignum

__all__ = ["HardSwitchSign", "IMASPSSafe", "LiMuon", "Muon", "ProxSGD", "SAdam", "SPSMax", "SPSSafe", "Signum",
           "SoftMuon", "SoftSignum", "muon_param_groups"]
