"""A second miniature kernel library (NOT FlashInfer) for the api-op fixer: a sampling-like API whose return shape
a flag chooses, and an API whose helper returns its own arguments."""
from .sample import Layout, append, arrange, count, padded, pick, ranks
