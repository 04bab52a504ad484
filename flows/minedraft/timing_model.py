"""The timing model of spec §3.3 (our derivation): SD and PSD step times from per-stage costs, and the predicted
PSD/SD throughput ratio S."""
from __future__ import annotations


def sd_step(k: int, c_d: float, c_v: float, overhead: float) -> float:
    """T_SD = k c_d(B) + c_v(B, k) + o: drafting and verification strictly in turn."""
    return k * c_d + c_v + overhead


def psd_half_step(k: int, c_d_half: float, c_v_half: float, overhead: float) -> float:
    """T_PSD = max(k c_d(B/2), c_v(B/2, k)) + o': one half drafted while the other is verified."""
    return max(k * c_d_half, c_v_half) + overhead


def predicted_speedup(k: int, c_d: float, c_v: float, o: float, c_d_half: float, c_v_half: float, o_half: float,
                      tokens_ratio: float = 1.0) -> float:
    """S = T_SD / (2 T_PSD), times E_PSD / E_SD (measured tokens per verification; 1 when the acceptance is equal)."""
    return tokens_ratio * sd_step(k, c_d, c_v, o) / (2 * psd_half_step(k, c_d_half, c_v_half, o_half))
