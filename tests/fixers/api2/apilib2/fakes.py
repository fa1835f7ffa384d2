"""The maintainer's fakes (configured in [tool.compile-lint.fix.fakes])."""
import torch


def pick_fake(x, factor, return_valid, extra):
    return torch.empty_like(x)


def pick_valid_fake(x, factor, return_valid, extra):  # the pair `pick(..., return_valid=True)` returns
    return torch.empty_like(x), torch.empty_like(x, dtype=torch.bool)
