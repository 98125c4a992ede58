"""Elementwise addition of two large vectors (trace-bench's own KernelBench-format problem)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Adds two tensors elementwise."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a + b


SIZE = 1 << 22


def get_inputs():
    return [torch.randn(SIZE), torch.randn(SIZE)]


def get_init_inputs():
    return []
