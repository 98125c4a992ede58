"""Row-wise softmax (trace-bench's own KernelBench-format problem)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Softmax over the last dimension."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


BATCH, DIM = 128, 4096


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
