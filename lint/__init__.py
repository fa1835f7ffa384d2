"""compile-lint: find the code torch.compile will trip over, before anyone runs a model."""

__version__ = "0.1.0"
