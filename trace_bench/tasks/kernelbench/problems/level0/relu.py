"""ReLU over a batch of activations (trace-bench's own KernelBench-format problem)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Applies ReLU elementwise."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


BATCH, DIM = 256, 16384


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
