"""A trained DDSVM model in one safetensors file (no pickle): the network's weights, the read-out SVM, any
extra arrays (the CLI's feature scaling), and in the metadata the architecture and a JSON `info` record."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from tasks.core.inputs import InputError, check_readable
from tasks.train.linear_svm import LinearSVM

from .model import Architecture, Network

FORMAT = "ddsvm-model/1"
MAX_MODEL_BYTES = 2 * 2**30


@dataclass
class SavedModel:
    network: Network
    svm: LinearSVM
    arrays: dict[str, np.ndarray]
    info: dict


def save_model(path: Path, network: Network, svm: LinearSVM, arrays: dict[str, np.ndarray] | None = None,
               info: dict | None = None) -> Path:
    from safetensors.torch import save_file

    tensors = {f"network.{key}": value.detach().cpu().contiguous() for key, value in network.state_dict().items()}
    tensors |= {"svm.weights": torch.from_numpy(np.ascontiguousarray(svm.weights)),
                "svm.biases": torch.from_numpy(np.ascontiguousarray(svm.biases))}
    tensors |= {f"array.{key}": torch.from_numpy(np.ascontiguousarray(value)) for key, value in (arrays or {}).items()}
    metadata = {"format": FORMAT, "architecture": json.dumps(network.architecture.to_dict()),
                "svm_converged": json.dumps(svm.converged), "info": json.dumps(info or {})}
    save_file(tensors, str(path), metadata=metadata)
    return Path(path)


def load_model(path: Path, what: str = "MODEL") -> SavedModel:
    """The model saved by save_model; a file that is not one is an InputError naming it."""
    from safetensors import SafetensorError, safe_open

    check_readable(path, what, MAX_MODEL_BYTES)
    try:
        with safe_open(str(path), framework="pt") as handle:
            metadata = handle.metadata() or {}
            if metadata.get("format") != FORMAT:
                raise InputError(f"{what} {path}: not a ddsvm model (format {metadata.get('format')!r}, "
                                 f"expected {FORMAT!r}); train one with `papers ddsvm fit`")
            tensors = {key: handle.get_tensor(key) for key in handle.keys()}
    except (SafetensorError, OSError) as error:
        raise InputError(f"{what} {path}: not a safetensors file ({error})") from None
    try:
        spec = json.loads(metadata["architecture"])
        architecture = Architecture(**spec | {"input_shape": tuple(spec["input_shape"])})
        network = Network(architecture)
        network.load_state_dict({key.removeprefix("network."): value for key, value in tensors.items()
                                 if key.startswith("network.")})
        svm = LinearSVM(tensors["svm.weights"].numpy(), tensors["svm.biases"].numpy(),
                        json.loads(metadata["svm_converged"]))
        info = json.loads(metadata["info"])
    except (KeyError, TypeError, ValueError, RuntimeError) as error:
        raise InputError(f"{what} {path}: a damaged ddsvm model ({type(error).__name__}: {error})") from None
    network.eval()
    arrays = {key.removeprefix("array."): value.numpy() for key, value in tensors.items() if key.startswith("array.")}
    return SavedModel(network, svm, arrays, info)
