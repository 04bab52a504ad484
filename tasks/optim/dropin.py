"""The base class of every optimizer in tasks.optim: torch.optim.Optimizer plus what a drop-in needs beyond it.

- copy.deepcopy and pickle keep the public instance attributes (hyperparameters that are optimizer-wide, such as
  SoftSignum's transition or SPS_safe's M, the last step's `stats`): torch's __getstate__ keeps only defaults,
  state and param_groups, so without this a copy's next step() raised AttributeError.
- load_state_dict takes its own copy of the entries of `state` that belong to no parameter (step counters,
  temperature schedules, RNG states): torch keys them by name and would share the loaded dicts with the
  state_dict, so two optimizers loaded from one checkpoint would count each other's steps. Per-parameter
  tensors follow torch's rule (shared with the state_dict when dtype and device already match).

Everything a run needs to resume lives in `state` (so state_dict carries it) or in the param groups.
"""
from __future__ import annotations

import copy

import torch


class DropInOptimizer(torch.optim.Optimizer):
    """torch.optim.Optimizer whose public attributes survive copy.deepcopy and pickle."""

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        state.update({name: value for name, value in self.__dict__.items() if not name.startswith("_")})
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        super().load_state_dict(state_dict)
        for key in [k for k in self.state if not isinstance(k, torch.Tensor)]:
            self.state[key] = copy.deepcopy(self.state[key])
