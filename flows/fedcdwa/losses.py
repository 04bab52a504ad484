"""FedCDWA's losses (spec §3.3, §3.1b): Prototype-Variance Dual Alignment and the distillation term."""
from __future__ import annotations

import torch
import torch.nn.functional as F

STD_EPS = 1e-5  # inside the sqrt: a collapsed class has zero variance, and d sqrt / dx at 0 is infinite (NaN runs)


def pvda(z: torch.Tensor, y: torch.Tensor, mu: torch.Tensor, sigma: torch.Tensor, known: torch.Tensor,
         lam_m: float, lam_v: float) -> torch.Tensor:
    """mean over the batch's classes c with global statistics of
    lam_m |mean_c(z) - mu_c|^2 + lam_v |sqrt(var_c(z) + eps) - sigma_c|^2 [n_c >= 2].
    The mean term pulls the batch class mean, not each sample (a per-sample pull would also shrink the variance);
    with lam_m = lam_v = 1 it is the squared W2 distance of the two diagonal Gaussians."""
    terms = []
    for c in torch.unique(y).tolist():
        if not bool(known[c]):
            continue
        zc = z[y == c]
        term = lam_m * ((zc.mean(0) - mu[c]) ** 2).sum()
        if len(zc) >= 2 and lam_v > 0:
            std = torch.sqrt(zc.var(0, unbiased=False) + STD_EPS)
            term = term + lam_v * ((std - sigma[c]) ** 2).sum()
        terms.append(term)
    return torch.stack(terms).mean() if terms else z.new_zeros(())


def distillation(student_logits: torch.Tensor, teacher_logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """T^2 KL(softmax(teacher / T) || softmax(student / T)), batch mean (Hinton et al. 2015)."""
    t = temperature
    return t * t * F.kl_div(F.log_softmax(student_logits / t, dim=1), F.log_softmax(teacher_logits / t, dim=1),
                            reduction="batchmean", log_target=True)
