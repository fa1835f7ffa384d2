"""Fakes (meta functions) for FlashInfer public APIs that compile-lint's api-op fix makes torch ops but whose output
it cannot derive from the source (the sampling kernels' outputs are allocated inside `get_sampling_module()`'s
closures). Configured in [tool.compile-lint.fix.fakes]; each mirrors the `register_fake_op` of the inner op it
reaches in flashinfer/sampling.py (prefill: its allocation in prefill.py). Arguments: the public API's, in order,
without the Python objects that default to None (`generator`, `kv_cache_sf`)."""
import torch


def softmax(logits, temperature, enable_pdl):
    return torch.empty_like(logits, dtype=torch.float32)  # the kernel runs on logits.float()


def top_p_renorm_probs(probs, top_p, is_deterministic):
    return torch.empty_like(probs, dtype=torch.float32)  # probs.float()


def top_k_renorm_probs(probs, top_k, is_deterministic):
    return torch.empty_like(probs)


def top_k_mask_logits(logits, top_k):
    return torch.empty_like(logits)


def _samples(probs, indices):
    batch_size = indices.size(0) if indices is not None else probs.size(0)
    out_dtype = indices.dtype if indices is not None else torch.int32
    return torch.empty(batch_size, dtype=out_dtype, device=probs.device)


def sampling_from_probs(probs, indices, *_):
    return _samples(probs, indices)


def top_p_sampling_from_probs(probs, top_p, indices, *_):
    return _samples(probs, indices)


def top_k_sampling_from_probs(probs, top_k, indices, *_):
    return _samples(probs, indices)


def min_p_sampling_from_probs(probs, min_p, indices, *_):
    return _samples(probs, indices)


def top_k_top_p_sampling_from_probs(probs, top_k, top_p, indices, *_):
    return _samples(probs, indices)


def top_k_top_p_sampling_from_logits(logits, top_k, top_p, indices, *_):
    return _samples(logits, indices)


def single_prefill_with_kv_cache(q, k, v, *rest):
    # prefill.py: o_dtype defaults to q.dtype; out = empty(q.shape[:-1] + (v.shape[-1],)) (kv_cache_sf None)
    o_dtype = next((a for a in rest if isinstance(a, torch.dtype)), None) or q.dtype
    return torch.empty(q.shape[:-1] + (v.shape[-1],), dtype=o_dtype, device=q.device)


# r5: the return_lse=True variants get an op of their own (a list of configured fakes, one per `when`)
def single_decode_with_kv_cache_lse(q, k, v, *_):
    # decode.py: out = empty_like(q); lse = empty((num_qo_heads,), float32) with num_qo_heads = q.shape[0]
    return torch.empty_like(q), torch.empty((q.shape[0],), dtype=torch.float32, device=q.device)


def single_prefill_with_kv_cache_lse(q, k, v, *rest):
    # prefill.py: lse = empty((q.size(0), q.size(1)), float32); the output as single_prefill_with_kv_cache
    return (single_prefill_with_kv_cache(q, k, v, *rest),
            torch.empty((q.size(0), q.size(1)), dtype=torch.float32, device=q.device))
