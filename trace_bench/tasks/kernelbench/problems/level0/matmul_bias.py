"""A linear layer: matrix multiplication plus bias (trace-bench's own KernelBench-format problem)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Computes x @ W^T + b with fixed, seeded parameters."""

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


BATCH, IN_FEATURES, OUT_FEATURES = 128, 1024, 1024


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
