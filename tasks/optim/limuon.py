"""LiMuon (Huang, Luo & Chen, ICML 2026): Muon with a STORM estimator, optionally kept in low rank.

Per matrix W (the paper's §3.2, practical order):
    g     = grad f(W_{t+1}; xi)        g_old = grad f(W_t; xi)       (same batch, same RNG)
    M     = g + (1 - beta) (Mhat_t - g_old)                           (M_0 = g on the first step)
    W_{t+2} = W_{t+1} (1 - lr wd) - lr sqrt(max(1, m/n)) orth(M)
    Option #1 keeps M; Option #2 keeps only rank-r factors of M from a randomized SVD.
The orthogonalisation always sees the full transient M; the low-rank copy only feeds the next
recursion (using it for the update would be a different algorithm). `clip` bounds ||M||_F before
it is used and stored: Muon++ = Option #1 + clip (our reading; the clipping rule was not found).
Non-matrix parameters (use_muon=False groups) take one AdamW step per step with the gradient at the
current weights.
"""
from __future__ import annotations

import math

import torch

from tasks.core.seeding import derive_seed
from tasks.optim.adamw_rule import adamw_update
from tasks.optim.dropin import DropInOptimizer
from tasks.optim.muon import AUX_DEFAULTS, ORTHOGONALIZERS, as_matrix, muon_scale, orthogonalize
from tasks.optim.rsvd import LowRank, randomized_svd

OPTIONS = (1, 2)
FACTOR_KEYS = ("U", "S", "V")


def storm_estimate(grad: torch.Tensor, grad_old: torch.Tensor, previous: torch.Tensor, beta: float) -> torch.Tensor:
    """M_{t+1} = g + (1 - beta)(M_t - g_old): beta weighs the fresh gradient (the opposite of Muon's mu)."""
    return grad + (1 - beta) * (previous - grad_old)


def clip_frobenius(M: torch.Tensor, max_norm: float) -> torch.Tensor:
    norm = float(torch.linalg.norm(M))
    return M * (max_norm / norm) if norm > max_norm else M


def _rng_state() -> tuple:
    return torch.get_rng_state(), torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None


def _set_rng_state(state: tuple) -> None:
    cpu, cuda = state
    torch.set_rng_state(cpu)
    if cuda is not None:
        torch.cuda.set_rng_state_all(cuda)


class LiMuon(DropInOptimizer):
    """LiMuon for use_muon=True groups (>= 2-D tensors), AdamW (aux_* keys, muon.AUX_DEFAULTS) for the rest.

    step(closure) is required: the closure is called at the current weights, then (from the second
    step on) again with the previous weights swapped into the matrices, on the same batch, with the
    torch RNG replayed so dropout draws the same mask. A standard torch closure (zero_grad, forward,
    backward, return the loss) works, and so does one that does not zero: LiMuon zeroes the gradients
    before each call and, after the step, .grad holds the gradient at the current weights again (the
    .grad of parameters outside this optimizer ends as the second call left it).
    Options per group: lr, beta (fresh-gradient weight), weight_decay (decoupled), option 1 | 2, rank,
    oversampling, orthogonalizer "svd" | "ns5", ns_steps, clip (None or a Frobenius bound). The RSVD
    sketch of matrix i at step k is drawn from a generator seeded by (seed, k, i), k being the matrix's
    step count in `state`: deterministic, and exact after a state_dict round trip (same seed).
    keep_estimates=True keeps each step's full M in `estimates` (a diagnostic, not optimizer state).
    """

    def __init__(self, params, lr: float = 0.02, beta: float = 0.1, weight_decay: float = 0.0, option: int = 2,
                 rank: int = 8, oversampling: int = 5, orthogonalizer: str = "svd", ns_steps: int = 5,
                 clip: float | None = None, seed: int = 0, keep_estimates: bool = False):
        defaults = dict(lr=lr, beta=beta, weight_decay=weight_decay, option=option, rank=rank,
                        oversampling=oversampling, orthogonalizer=orthogonalizer, ns_steps=ns_steps, clip=clip,
                        use_muon=True)
        self.seed, self.keep_estimates = seed, keep_estimates
        super().__init__(params, defaults)
        self.stats: dict = {}
        self.estimates: dict[torch.Tensor, torch.Tensor] = {}

    def add_param_group(self, param_group: dict) -> None:
        if not param_group.get("use_muon", True):
            for key, value in AUX_DEFAULTS.items():  # before torch fills in the LiMuon defaults
                param_group.setdefault(key, value)
        super().add_param_group(param_group)
        group = self.param_groups[-1]
        if group["use_muon"]:
            _check_group(group)

    # ------------------------------------------------------------------ step

    @torch.no_grad()
    def step(self, closure=None):
        if closure is None:
            raise ValueError("closure: LiMuon evaluates two gradients per step (at W_{t+1} and W_t, same batch); "
                             "call step(closure)")
        rng_before = _rng_state()
        self.zero_grad(set_to_none=True)
        with torch.enable_grad():
            loss = closure()
        params = [p for group in self.param_groups for p in group["params"] if p.grad is not None]
        grads = {p: p.grad.detach().clone() for p in params}
        matrices = [p for group in self.param_groups if group["use_muon"] for p in group["params"] if p in grads]
        current, old_grads = self._gradients_at_previous_weights(closure, matrices, rng_before)
        for p in params:  # .grad reads as the gradient at the current weights again
            p.grad = grads[p]

        self.estimates = {}
        sq_norm, sq_compression = 0.0, 0.0
        index = 0
        for group in self.param_groups:
            for p in (q for q in group["params"] if q in grads):
                state = self.state[p]
                if not group["use_muon"]:
                    adamw_update(p, grads[p], state, lr=group["lr"], betas=group["betas"], eps=group["eps"],
                                 weight_decay=group["weight_decay"])
                    continue
                M = self._estimate(group, state, as_matrix(grads[p]), old_grads.get(p))
                state["previous"] = current[p] if p in current else p.detach().clone()
                p.mul_(1 - group["lr"] * group["weight_decay"])
                update = orthogonalize(M, group["orthogonalizer"], group["ns_steps"])
                p.add_(update.view_as(p).to(p.dtype), alpha=-group["lr"] * muon_scale(p.shape))
                sq_compression += self._store(group, state, M, index)
                sq_norm += float(M.square().sum())
                state["step"] = state.get("step", 0) + 1
                if self.keep_estimates:
                    self.estimates[p] = M
                index += 1
        self.stats = {"step_grad_evals": 2 if old_grads else 1, "estimator_norm": math.sqrt(sq_norm)}
        if any(g["use_muon"] and g["option"] == 2 for g in self.param_groups):
            self.stats["compression_error"] = math.sqrt(sq_compression / sq_norm) if sq_norm > 0 else 0.0
        return loss

    def _gradients_at_previous_weights(self, closure, matrices, rng_before):
        """({p: W_{t+1} copy}, {p: g_old}) for matrices that have a previous iterate; empty on the first step."""
        swapped = [p for p in matrices if "previous" in self.state[p]]
        if not swapped:
            return {}, {}
        rng_after = _rng_state()
        current = {p: p.detach().clone() for p in swapped}
        for p in swapped:
            p.copy_(self.state[p]["previous"])
        _set_rng_state(rng_before)  # same dropout mask as the first evaluation
        self.zero_grad(set_to_none=True)
        with torch.enable_grad():
            closure()
        old = {p: as_matrix(p.grad).clone() if p.grad is not None else torch.zeros_like(as_matrix(p)) for p in swapped}
        for p in swapped:
            p.copy_(current[p])
        _set_rng_state(rng_after)  # the rest of training draws as if the closure had run once
        return current, old

    def _estimate(self, group: dict, state: dict, grad: torch.Tensor, grad_old: torch.Tensor | None) -> torch.Tensor:
        if grad_old is None:  # M_0 = the first mini-batch gradient
            M = grad
        else:
            M = storm_estimate(grad, grad_old, self._stored_estimate(state), group["beta"])
        return clip_frobenius(M, group["clip"]) if group["clip"] is not None else M

    @staticmethod
    def _stored_estimate(state: dict) -> torch.Tensor:
        if "estimator" in state:
            return state["estimator"]
        return LowRank(*(state[k] for k in FACTOR_KEYS)).matrix()

    def _store(self, group: dict, state: dict, M: torch.Tensor, index: int) -> float:
        """Keep M (Option #1) or its RSVD factors (Option #2); returns ||M - Mhat||_F^2 (0 for Option #1)."""
        if group["option"] == 1:
            state["estimator"] = M
            return 0.0
        rank = min(group["rank"], min(M.shape))
        generator = torch.Generator().manual_seed(derive_seed(self.seed, "rsvd", state.get("step", 0), index))
        factors = randomized_svd(M, rank, group["oversampling"], generator=generator)
        state.update(zip(FACTOR_KEYS, factors))
        return float((M - factors.matrix()).square().sum())

    # ------------------------------------------------------------------ accounting

    def state_elements(self) -> dict[str, int]:
        """Persistent numbers held: the STORM estimator (full or factors), the previous-weights copy, aux AdamW."""
        counts = {"estimator": 0, "previous_weights": 0, "aux": 0}
        for group in self.param_groups:
            for p in group["params"]:
                for key, value in self.state.get(p, {}).items():
                    if not torch.is_tensor(value):
                        continue
                    kind = "aux" if not group["use_muon"] else "previous_weights" if key == "previous" else "estimator"
                    counts[kind] += value.numel()
        return counts


def _check_group(group: dict) -> None:
    rules = [("lr", group["lr"] >= 0, ">= 0"), ("beta", 0 < group["beta"] <= 1, "in (0, 1]"),
             ("weight_decay", group["weight_decay"] >= 0, ">= 0"), ("option", group["option"] in OPTIONS, f"one of {OPTIONS}"),
             ("rank", isinstance(group["rank"], int) and group["rank"] >= 1, "an integer >= 1"),
             ("oversampling", group["oversampling"] >= 0, ">= 0"),
             ("orthogonalizer", group["orthogonalizer"] in ORTHOGONALIZERS, f"one of {ORTHOGONALIZERS}"),
             ("ns_steps", group["ns_steps"] >= 1, ">= 1"),
             ("clip", group["clip"] is None or group["clip"] > 0, "None or > 0")]
    for name, ok, rule in rules:
        if not ok:
            raise ValueError(f"{name}: must be {rule}, got {group[name]!r}")
    for p in group["params"]:
        if p.ndim < 2:
            raise ValueError(f"LiMuon group: parameters must have >= 2 dims (use_muon=False for the rest), "
                             f"got shape {tuple(p.shape)}")
