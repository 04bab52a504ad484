"""The networks of ddsvm: a backbone x -> z in R^D and a head z -> logits.

Backbones: the spec's small CNN for images (§6: conv 3x3 16, ReLU, conv 3x3 32, ReLU, maxpool 2, linear to D;
no ReLU on z, so z can point anywhere on the sphere), a small ResNet-18-style network for the full profile (§7 (a)),
and an MLP for tabular rows (the `papers ddsvm` command).
Heads: linear (CE and DDSVM) or cosine (logits = s cos(z, v_k), the normalised-softmax baseline).
"""
from __future__ import annotations

import threading
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

BACKBONES = ("conv", "resnet", "mlp")
RESNET_STAGES = 4  # ResNet-18: four stages of two basic blocks, channels doubling, stride 2 from the second
HEADS = ("linear", "cosine")


@dataclass(frozen=True)
class Architecture:
    """input_shape: (channels, height, width) for "conv" and "resnet", (features,) for "mlp"; width: the first conv's
    channels (the next have twice as many; a ResNet doubles them per stage) or the MLP's hidden units; cosine_scale:
    s of the cosine head."""

    backbone: str
    input_shape: tuple[int, ...]
    feature_dim: int
    n_classes: int
    head: str = "linear"
    width: int = 16
    cosine_scale: float = 10.0

    def to_dict(self) -> dict:
        return asdict(self) | {"input_shape": list(self.input_shape)}


class ConvBackbone(nn.Module):
    def __init__(self, channels: int, height: int, width: int, conv_width: int, feature_dim: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, conv_width, 3, padding=1)
        self.conv2 = nn.Conv2d(conv_width, 2 * conv_width, 3, padding=1)
        self.project = nn.Linear(2 * conv_width * (height // 2) * (width // 2), feature_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [B, c, h, w] -> [B, D]
        x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
        return self.project(x.flatten(1))


class BasicBlock(nn.Module):
    """Two 3x3 conv-BN layers with an identity (or 1x1 conv-BN, where the shape changes) shortcut."""

    def __init__(self, inputs: int, outputs: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(inputs, outputs, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(outputs)
        self.conv2 = nn.Conv2d(outputs, outputs, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(outputs)
        self.shortcut = (nn.Identity() if stride == 1 and inputs == outputs else
                         nn.Sequential(nn.Conv2d(inputs, outputs, 1, stride, bias=False), nn.BatchNorm2d(outputs)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + self.shortcut(x))


class ResNetBackbone(nn.Module):
    """ResNet-18-style for small images: a 3x3 stem (no max pool), four stages of two basic blocks with `width`,
    2, 4, 8 x `width` channels, global average pool, linear to D."""

    def __init__(self, channels: int, width: int, feature_dim: int):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(channels, width, 3, 1, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU())
        blocks, inputs = [], width
        for stage in range(RESNET_STAGES):
            outputs = width * 2 ** stage
            blocks += [BasicBlock(inputs, outputs, 1 if stage == 0 else 2), BasicBlock(outputs, outputs, 1)]
            inputs = outputs
        self.blocks = nn.Sequential(*blocks)
        self.project = nn.Linear(inputs, feature_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [B, c, h, w] -> [B, D]
        return self.project(self.blocks(self.stem(x)).mean((2, 3)))


class MLPBackbone(nn.Module):
    def __init__(self, n_inputs: int, hidden: int, feature_dim: int):
        super().__init__()
        self.hidden = nn.Linear(n_inputs, hidden)
        self.project = nn.Linear(hidden, feature_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [B, n_inputs] -> [B, D]
        return self.project(F.relu(self.hidden(x)))


class CosineHead(nn.Module):
    """logits_k = s cos(z, v_k): features and class weights both normalised, no bias."""

    def __init__(self, feature_dim: int, n_classes: int, scale: float):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_classes, feature_dim))
        nn.init.kaiming_uniform_(self.weight, a=5 ** 0.5)  # nn.Linear's default
        self.scale = scale

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.scale * F.normalize(z, dim=1) @ F.normalize(self.weight, dim=1).T


def backbone(a: Architecture) -> nn.Module:
    if a.backbone == "conv":
        return ConvBackbone(*a.input_shape, a.width, a.feature_dim)
    if a.backbone == "resnet":
        return ResNetBackbone(a.input_shape[0], a.width, a.feature_dim)
    return MLPBackbone(a.input_shape[0], a.width, a.feature_dim)


class Network(nn.Module):
    """forward(x) -> (z [B, D], logits [B, C])."""

    def __init__(self, architecture: Architecture):
        super().__init__()
        a = architecture
        if a.backbone not in BACKBONES or a.head not in HEADS:
            raise ValueError(f"architecture: backbone must be one of {BACKBONES} and head one of {HEADS}, got "
                             f"{a.backbone!r}, {a.head!r}")
        self.architecture = a
        self.backbone = backbone(a)
        self.head = (nn.Linear(a.feature_dim, a.n_classes) if a.head == "linear"
                     else CosineHead(a.feature_dim, a.n_classes, a.cosine_scale))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        z = self.backbone(x)
        return z, self.head(z)


# torch's default generator is one per process: threads of the thread task runner take turns seeding it, or one
# thread's draws land between another's seed and its weights.
_DEFAULT_GENERATOR = threading.Lock()


def build_network(architecture: Architecture, seed: int) -> Network:
    """The network with weights drawn from `seed` alone (the global torch generator is left as it was). The
    backbone is built first, so every head gets the same backbone weights from the same seed."""
    with _DEFAULT_GENERATOR, torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return Network(architecture)
