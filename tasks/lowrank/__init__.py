"""Low-rank factor pairs W = W0 + s * A @ B (LoRA's update) and their balancing.

- balance.py: the balancing projection of a factor pair onto {A^T A = B B^T} with the same product (`svd`
  variant through polar factors, each singular pair signed to agree with the current pair; `svd_lapack`, the same
  with LAPACK's signs; `aligned` variant closest to the current pair), its reference through the SVD of the
  product, and the balancing gap. Pure torch functions, batched over leading dimensions.
- synthetic.py: the synthetic matrix problem 1/2 ||W0 + A B - T||^2: factor descent with or without balancing
  (sign descent or GD, batched over learning rates), the exact Hessian and its condition number.
- peft_lora.py: the same projection applied in place to the LoRA adapters of a peft model, and a transformers
  TrainerCallback that does it after every optimizer step.
"""
