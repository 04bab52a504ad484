"""Devices from params: `auto` means CUDA when present, else CPU."""
from __future__ import annotations


def resolve_device(name: str = "auto") -> str:
    try:
        import torch
    except ImportError:  # numpy-only papers still get a device tag
        return "cpu"
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device: CUDA requested ({name!r}) but no GPU is available")
    return name


def single_torch_thread() -> None:
    """Small models stepped one sample or one small graph at a time: on 2 cores a second torch
    thread only adds synchronisation (10-20x slower under load, measured)."""
    import torch

    torch.set_num_threads(1)
