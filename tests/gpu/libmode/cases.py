"""Cases for the library-mode oracle: one FlashInfer public API each, with small valid inputs.

Each case: name -> (api qualname as compile-lint prints it, JIT group, code).
The code runs after `import torch, flashinfer` with `dev = "cuda"`; it must define
`args` (a tuple passed to the compiled function) and `f(*args)` (calls the API once).
Constants go into the closure. JIT group: cases of one group share one JIT module
(the harness builds it once, first); None = no JIT module expected.
"""

COMMON = r"""
import os, torch, flashinfer
dev = os.environ.get("LIBMODE_DEV", "cuda")
torch.manual_seed(0)
"""

CASES = {}


def case(name, api, group, code):
    CASES[name] = (api, group, code)


# --- no JIT module expected (pure Python / torch / Triton) -------------------------------
case("get_seq_lens", "flashinfer.page.get_seq_lens", None, r"""
from flashinfer.page import get_seq_lens
args = (torch.tensor([0, 3, 4, 6, 8], dtype=torch.int32, device=dev), torch.tensor([13, 8, 9, 6], dtype=torch.int32, device=dev))
def f(indptr, last): return get_seq_lens(indptr, last, 16)
""")
case("get_batch_indices_positions", "flashinfer.page.get_batch_indices_positions", None, r"""
from flashinfer.page import get_batch_indices_positions
args = (torch.tensor([0, 1, 3, 6, 10], dtype=torch.int32, device=dev), torch.tensor([5, 5, 5, 5], dtype=torch.int32, device=dev))
def f(indptr, seq_lens): return get_batch_indices_positions(indptr, seq_lens, 10)
""")
case("next_positive_power_of_2", "flashinfer.utils.next_positive_power_of_2", None, r"""
from flashinfer.utils import next_positive_power_of_2
args = (torch.randn(8, device=dev),)
def f(x): return x * next_positive_power_of_2(x.shape[0] + 3)
""")
case("is_gated_activation", "flashinfer.tllm_enums.is_gated_activation", None, r"""
from flashinfer.tllm_enums import is_gated_activation, ActivationType
args = (torch.randn(8, device=dev),)
def f(x): return x + int(is_gated_activation(ActivationType.Swiglu))
""")
case("get_fast_topk_clusters", "flashinfer.topk.get_fast_topk_clusters", None, r"""
from flashinfer.topk import get_fast_topk_clusters
args = (torch.randn(8, 4, device=dev),)
def f(x): return x * get_fast_topk_clusters(x.shape[0])
""")
case("roundup_kbyte", "flashinfer.topk.roundup_kbyte", None, r"""
from flashinfer.topk import roundup_kbyte
args = (torch.randn(8, device=dev),)
def f(x): return x * roundup_kbyte(x.shape[0] * 100)
""")
case("padded_seq_len", "flashinfer.attn_scores.attn_scores.padded_seq_len", None, r"""
from flashinfer import padded_seq_len
args = (torch.randn(8, device=dev),)
def f(x): return x * padded_seq_len(1000)
""")
case("min_block_table_width", "flashinfer.attn_scores.attn_scores.min_block_table_width", None, r"""
from flashinfer import min_block_table_width
args = (torch.randn(8, device=dev),)
def f(x): return x * min_block_table_width(1000, 64)
""")
case("get_seed_and_offset", "flashinfer.sampling.get_seed_and_offset", None, r"""
from flashinfer.sampling import get_seed_and_offset
args = (torch.randn(8, device=dev),)
def f(x):
    s, o = get_seed_and_offset(16, None, x.device)
    return x + o
""")
case("make_nvfp4_global_scale", "flashinfer.quantization.nvfp4_quantization_utils.make_nvfp4_global_scale", None, r"""
from flashinfer import make_nvfp4_global_scale
args = (torch.randn(128, 256, device=dev, dtype=torch.bfloat16),)
def f(x): return make_nvfp4_global_scale(x, False)
""")
case("resolve_nvfp4_4over6", "flashinfer.quantization.nvfp4_quantization_utils.resolve_nvfp4_4over6", None, r"""
from flashinfer import resolve_nvfp4_4over6
args = (torch.randn(8, device=dev),)
def f(x): return x + (0 if resolve_nvfp4_4over6() is None else 1)
""")
case("shuffle_matrix_a", "flashinfer.quantization.fp4_quantization.shuffle_matrix_a", None, r"""
from flashinfer import shuffle_matrix_a
args = (torch.randint(0, 255, (256, 64), dtype=torch.uint8, device=dev),)
def f(w): return shuffle_matrix_a(w, 128)
""")

# --- norm (one module) ---------------------------------------------------------------------
NORM = r"""
x = torch.randn(64, 1024, device=dev, dtype=torch.bfloat16)
r = torch.randn(64, 1024, device=dev, dtype=torch.bfloat16)
w = torch.randn(1024, device=dev, dtype=torch.bfloat16)
"""
case("rmsnorm", "flashinfer.norm.rmsnorm", "norm", NORM + r"""
args = (x,)
def f(x): return flashinfer.norm.rmsnorm(x, w)
""")
case("fused_add_rmsnorm", "flashinfer.norm.fused_add_rmsnorm", "norm", NORM + r"""
args = (x, r)
def f(x, r): flashinfer.norm.fused_add_rmsnorm(x, r, w); return x
""")
case("gemma_rmsnorm", "flashinfer.norm.gemma_rmsnorm", "norm", NORM + r"""
args = (x,)
def f(x): return flashinfer.norm.gemma_rmsnorm(x, w)
""")
case("gemma_fused_add_rmsnorm", "flashinfer.norm.gemma_fused_add_rmsnorm", "norm", NORM + r"""
args = (x, r)
def f(x, r): flashinfer.norm.gemma_fused_add_rmsnorm(x, r, w); return x
""")
case("layernorm", "flashinfer.norm.layernorm", "norm", NORM + r"""
g = torch.randn(1024, device=dev, dtype=torch.float32); b = torch.randn(1024, device=dev, dtype=torch.float32)
args = (x,)
def f(x): return flashinfer.norm.layernorm(x, g, b)
""")
case("rmsnorm_quant", "flashinfer.norm.rmsnorm_quant", "norm", NORM + r"""
out = torch.empty(64, 1024, device=dev, dtype=torch.float8_e4m3fn)
args = (x, out)
def f(x, out): flashinfer.norm.rmsnorm_quant(out, x, w, 1.0); return out
""")
case("fused_add_rmsnorm_quant", "flashinfer.norm.fused_add_rmsnorm_quant", "norm", NORM + r"""
out = torch.empty(64, 1024, device=dev, dtype=torch.float8_e4m3fn)
args = (x, r, out)
def f(x, r, out): flashinfer.norm.fused_add_rmsnorm_quant(out, x, r, w, 1.0); return out
""")

# --- activation (one module per activation) --------------------------------------------------
for act in ("silu_and_mul", "gelu_and_mul", "gelu_tanh_and_mul"):
    case(act, f"flashinfer.activation.{act}", "act_" + act, r"""
x = torch.randn(32, 2048, device=dev, dtype=torch.float16)
args = (x,)
def f(x): return flashinfer.activation.%s(x)
""" % act)

# --- rope (one module) -------------------------------------------------------------------------
ROPE = r"""
nnz = 24
q = torch.randn(nnz, 8, 128, device=dev, dtype=torch.float16)
k = torch.randn(nnz, 2, 128, device=dev, dtype=torch.float16)
indptr = torch.tensor([0, 10, 24], dtype=torch.int32, device=dev)
offsets = torch.tensor([3, 7], dtype=torch.int32, device=dev)
pos_ids = torch.arange(nnz, dtype=torch.int32, device=dev)
"""
for fn in ("apply_rope", "apply_llama31_rope"):
    case(fn, f"flashinfer.rope.{fn}", "rope", ROPE + r"""
args = (q, k, indptr, offsets)
def f(q, k, indptr, offsets): return flashinfer.rope.%s(q, k, indptr, offsets)
""" % fn)
    case(fn + "_inplace", f"flashinfer.rope.{fn}_inplace", "rope", ROPE + r"""
args = (q, k, indptr, offsets)
def f(q, k, indptr, offsets): flashinfer.rope.%s_inplace(q, k, indptr, offsets); return q
""" % fn)
    case(fn + "_pos_ids", f"flashinfer.rope.{fn}_pos_ids", "rope", ROPE + r"""
args = (q, k, pos_ids)
def f(q, k, pos_ids): return flashinfer.rope.%s_pos_ids(q, k, pos_ids)
""" % fn)
case("apply_rope_pos_ids_inplace", "flashinfer.rope.apply_rope_pos_ids_inplace", "rope", ROPE + r"""
args = (q, k, pos_ids)
def f(q, k, pos_ids): flashinfer.rope.apply_rope_pos_ids_inplace(q, k, pos_ids); return q
""")
case("apply_rope_with_cos_sin_cache", "flashinfer.rope.apply_rope_with_cos_sin_cache", "rope", r"""
nnz = 24
query = torch.randn(nnz, 8 * 128, device=dev, dtype=torch.bfloat16)
key = torch.randn(nnz, 2 * 128, device=dev, dtype=torch.bfloat16)
positions = torch.arange(nnz, dtype=torch.int64, device=dev)
cos_sin = torch.randn(4096, 128, device=dev, dtype=torch.float32)
args = (positions, query, key)
def f(positions, query, key): return flashinfer.rope.apply_rope_with_cos_sin_cache(positions, query, key, 128, cos_sin, True)
""")
case("apply_rope_with_cos_sin_cache_inplace", "flashinfer.rope.apply_rope_with_cos_sin_cache_inplace", "rope", r"""
nnz = 24
query = torch.randn(nnz, 8 * 128, device=dev, dtype=torch.bfloat16)
key = torch.randn(nnz, 2 * 128, device=dev, dtype=torch.bfloat16)
positions = torch.arange(nnz, dtype=torch.int64, device=dev)
cos_sin = torch.randn(4096, 128, device=dev, dtype=torch.float32)
args = (positions, query, key)
def f(positions, query, key): flashinfer.rope.apply_rope_with_cos_sin_cache_inplace(positions, query, key, 128, cos_sin, True); return query
""")
case("mla_rope_quantize_fp8", "flashinfer.rope.mla_rope_quantize_fp8", "rope", r"""
nnz = 16
q_rope = torch.randn(nnz, 16, 64, device=dev, dtype=torch.bfloat16)
k_rope = torch.randn(nnz, 64, device=dev, dtype=torch.bfloat16)
q_nope = torch.randn(nnz, 16, 512, device=dev, dtype=torch.bfloat16)
k_nope = torch.randn(nnz, 512, device=dev, dtype=torch.bfloat16)
cos_sin = torch.randn(4096, 64, device=dev, dtype=torch.float32)
pos_ids = torch.arange(nnz, dtype=torch.int32, device=dev)
args = (q_rope, k_rope, q_nope, k_nope, pos_ids)
def f(q_rope, k_rope, q_nope, k_nope, pos_ids): return flashinfer.rope.mla_rope_quantize_fp8(q_rope, k_rope, q_nope, k_nope, cos_sin, pos_ids, True, torch.float8_e4m3fn)
""")

# --- sampling (one module) ---------------------------------------------------------------------
SAMP = r"""
logits = torch.randn(4, 1024, device=dev, dtype=torch.float32)
probs = torch.softmax(logits, dim=-1)
"""
for fn, call in [
    ("softmax", "softmax(logits)"),
    ("sampling_from_logits", "sampling_from_logits(logits)"),
    ("top_k_top_p_sampling_from_logits", "top_k_top_p_sampling_from_logits(logits, 10, 0.9)"),
    ("top_k_mask_logits", "top_k_mask_logits(logits, 10)"),
]:
    case(fn, f"flashinfer.sampling.{fn}", "sampling", SAMP + r"""
args = (logits,)
def f(logits): return flashinfer.sampling.%s
""" % call)
for fn, call in [
    ("sampling_from_probs", "sampling_from_probs(probs)"),
    ("top_p_sampling_from_probs", "top_p_sampling_from_probs(probs, 0.9)"),
    ("top_k_sampling_from_probs", "top_k_sampling_from_probs(probs, 10)"),
    ("min_p_sampling_from_probs", "min_p_sampling_from_probs(probs, 0.1)"),
    ("top_k_top_p_sampling_from_probs", "top_k_top_p_sampling_from_probs(probs, 10, 0.9)"),
    ("top_p_renorm_probs", "top_p_renorm_probs(probs, 0.9)"),
    ("top_k_renorm_probs", "top_k_renorm_probs(probs, 10)"),
]:
    case(fn, f"flashinfer.sampling.{fn}", "sampling", SAMP + r"""
args = (probs,)
def f(probs): return flashinfer.sampling.%s
""" % call)
case("chain_speculative_sampling", "flashinfer.sampling.chain_speculative_sampling", "sampling", r"""
b, n, vocab = 2, 3, 1024
draft_probs = torch.softmax(torch.randn(b, n, vocab, device=dev), -1)
draft_ids = torch.randint(0, vocab, (b, n), dtype=torch.int32, device=dev)
target_probs = torch.softmax(torch.randn(b, n + 1, vocab, device=dev), -1)
args = (draft_probs, draft_ids, target_probs)
def f(d, i, t): return flashinfer.sampling.chain_speculative_sampling(d, i, t)
""")

# --- packbits (quantization module) --------------------------------------------------------------
case("packbits", "flashinfer.quantization.packbits.packbits", "packbits", r"""
args = (torch.rand(1000, device=dev) > 0.5,)
def f(x): return flashinfer.quantization.packbits(x, "little")
""")
case("segment_packbits", "flashinfer.quantization.packbits.segment_packbits", "packbits", r"""
args = (torch.rand(100, device=dev) > 0.5, torch.tensor([0, 30, 64, 100], dtype=torch.int32, device=dev))
def f(x, indptr): return flashinfer.quantization.segment_packbits(x, indptr, "little")
""")

# --- fp4 / fp8 quantization -------------------------------------------------------------------------
FP4 = r"""
x = torch.randn(128, 256, device=dev, dtype=torch.bfloat16)
gs = torch.tensor([448.0 * 6 / x.abs().max().item()], device=dev, dtype=torch.float32)
"""
case("fp4_quantize", "flashinfer.quantization.fp4_quantization.fp4_quantize", "fp4", FP4 + r"""
args = (x,)
def f(x): return flashinfer.fp4_quantize(x, gs)
""")
case("nvfp4_quantize", "flashinfer.quantization.fp4_quantization.nvfp4_quantize", "fp4", FP4 + r"""
args = (x,)
def f(x): return flashinfer.nvfp4_quantize(x, gs)
""")
case("mxfp4_quantize", "flashinfer.quantization.fp4_quantization.mxfp4_quantize", "fp4", FP4 + r"""
args = (x,)
def f(x): return flashinfer.mxfp4_quantize(x)
""")
case("mxfp4_dequantize", "flashinfer.quantization.fp4_quantization.mxfp4_dequantize", "fp4", FP4 + r"""
xq, sf = flashinfer.mxfp4_quantize(x)
args = (xq, sf)
def f(xq, sf): return flashinfer.mxfp4_dequantize(xq, sf)
""")
case("block_scale_interleave", "flashinfer.quantization.fp4_quantization.block_scale_interleave", "fp4", r"""
args = (torch.randint(0, 255, (128, 16), dtype=torch.uint8, device=dev),)
def f(sf): return flashinfer.block_scale_interleave(sf)
""")
case("silu_and_mul_nvfp4_quantize", "flashinfer.quantization.fp4_quantization.silu_and_mul_nvfp4_quantize", "fp4", r"""
x = torch.randn(128, 512, device=dev, dtype=torch.bfloat16)
gs = torch.tensor([100.0], device=dev, dtype=torch.float32)
args = (x,)
def f(x): return flashinfer.silu_and_mul_nvfp4_quantize(x, gs)
""")
case("shuffle_matrix_sf_a", "flashinfer.quantization.fp4_quantization.shuffle_matrix_sf_a", "fp4", r"""
args = (torch.randint(0, 255, (256, 16), dtype=torch.uint8, device=dev),)
def f(sf): return flashinfer.shuffle_matrix_sf_a(sf, 128)
""")
case("mxfp8_quantize", "flashinfer.quantization.fp8_quantization.mxfp8_quantize", "mxfp8", r"""
args = (torch.randn(128, 256, device=dev, dtype=torch.bfloat16),)
def f(x): return flashinfer.mxfp8_quantize(x)
""")

# --- cascade -------------------------------------------------------------------------------------------
CASC = r"""
seq, heads, dim = 16, 8, 128
va = torch.randn(seq, heads, dim, device=dev, dtype=torch.float16); sa = torch.randn(seq, heads, device=dev, dtype=torch.float32)
vb = torch.randn(seq, heads, dim, device=dev, dtype=torch.float16); sb = torch.randn(seq, heads, device=dev, dtype=torch.float32)
"""
case("merge_state", "flashinfer.cascade.merge_state", "cascade", CASC + r"""
args = (va, sa, vb, sb)
def f(va, sa, vb, sb): return flashinfer.merge_state(va, sa, vb, sb)
""")
case("merge_state_in_place", "flashinfer.cascade.merge_state_in_place", "cascade", CASC + r"""
args = (va, sa, vb, sb)
def f(va, sa, vb, sb): flashinfer.merge_state_in_place(va, sa, vb, sb); return va
""")
case("merge_states", "flashinfer.cascade.merge_states", "cascade", r"""
v = torch.randn(16, 3, 8, 128, device=dev, dtype=torch.float16); s = torch.randn(16, 3, 8, device=dev, dtype=torch.float32)
args = (v, s)
def f(v, s): return flashinfer.merge_states(v, s)
""")

# --- page ------------------------------------------------------------------------------------------------
PAGE = r"""
nnz, H, D, P = 100, 4, 128, 16
kv_len = torch.tensor([45, 8, 25, 22], dtype=torch.int32, device=dev)
append_indptr = torch.cat([torch.zeros(1, dtype=torch.int32, device=dev), torch.cumsum(kv_len, 0).int()])
pages = torch.tensor([3, 1, 2, 2], dtype=torch.int32, device=dev)
kv_indptr = torch.cat([torch.zeros(1, dtype=torch.int32, device=dev), torch.cumsum(pages, 0).int()])
kv_indices = torch.arange(8, dtype=torch.int32, device=dev)
last = torch.tensor([13, 8, 9, 6], dtype=torch.int32, device=dev)
bi, pos = flashinfer.get_batch_indices_positions(append_indptr, flashinfer.get_seq_lens(kv_indptr, last, P), nnz)
"""
case("append_paged_kv_cache", "flashinfer.page.append_paged_kv_cache", "page", PAGE + r"""
k = torch.randn(nnz, H, D, device=dev, dtype=torch.float16); v = torch.randn(nnz, H, D, device=dev, dtype=torch.float16)
kc = torch.zeros(16, P, H, D, device=dev, dtype=torch.float16); vc = torch.zeros_like(kc)
args = (k, v, bi, pos, kc, vc)
def f(k, v, bi, pos, kc, vc): flashinfer.append_paged_kv_cache(k, v, bi, pos, (kc, vc), kv_indices, kv_indptr, last); return kc
""")
case("append_paged_mla_kv_cache", "flashinfer.page.append_paged_mla_kv_cache", "page", PAGE + r"""
ckv = torch.randn(nnz, 512, device=dev, dtype=torch.bfloat16); kpe = torch.randn(nnz, 64, device=dev, dtype=torch.bfloat16)
ckc = torch.zeros(16, P, 512, device=dev, dtype=torch.bfloat16); kpc = torch.zeros(16, P, 64, device=dev, dtype=torch.bfloat16)
args = (ckv, kpe, bi, pos, ckc, kpc)
def f(ckv, kpe, bi, pos, ckc, kpc): flashinfer.append_paged_mla_kv_cache(ckv, kpe, bi, pos, ckc, kpc, kv_indices, kv_indptr, last); return ckc
""")

# --- topk ---------------------------------------------------------------------------------------------------
case("top_k", "flashinfer.topk.top_k", "topk", r"""
args = (torch.randn(4, 4096, device=dev, dtype=torch.float32),)
def f(x): return flashinfer.top_k(x, 16)
""")
case("top_k_page_table_transform", "flashinfer.topk.top_k_page_table_transform", "topk", r"""
x = torch.randn(4, 1024, device=dev, dtype=torch.float32)
pt = torch.arange(1024, dtype=torch.int32, device=dev).repeat(4, 1).contiguous()
lengths = torch.full((4,), 1024, dtype=torch.int32, device=dev)
args = (x, pt, lengths)
def f(x, pt, lengths): return flashinfer.top_k_page_table_transform(x, pt, lengths, 16)
""")
case("top_k_ragged_transform", "flashinfer.topk.top_k_ragged_transform", "topk", r"""
x = torch.randn(4, 1024, device=dev, dtype=torch.float32)
offsets = torch.arange(4, dtype=torch.int32, device=dev) * 1024
lengths = torch.full((4,), 1024, dtype=torch.int32, device=dev)
args = (x, offsets, lengths)
def f(x, offsets, lengths): return flashinfer.top_k_ragged_transform(x, offsets, lengths, 16)
""")
case("can_implement_filtered_topk", "flashinfer.topk.can_implement_filtered_topk", "topk", r"""
from flashinfer.topk import can_implement_filtered_topk
args = (torch.randn(8, device=dev),)
def f(x): return x + int(can_implement_filtered_topk())
""")

# --- gemm ----------------------------------------------------------------------------------------------------
case("bmm_fp8", "flashinfer.gemm.gemm_base.bmm_fp8", "gemm_fp8", r"""
A = torch.randn(2, 64, 128, device=dev).to(torch.float8_e4m3fn)
B = torch.randn(2, 256, 128, device=dev).to(torch.float8_e4m3fn).transpose(-2, -1)
sa = torch.tensor([1.0], device=dev); sb = torch.tensor([1.0], device=dev)
args = (A, B, sa, sb)
def f(A, B, sa, sb): return flashinfer.bmm_fp8(A, B, sa, sb, torch.bfloat16)
""")
case("mm_fp8", "flashinfer.gemm.gemm_base.mm_fp8", "gemm_fp8", r"""
a = torch.randn(64, 128, device=dev).to(torch.float8_e4m3fn)
b = torch.randn(256, 128, device=dev).to(torch.float8_e4m3fn).t()
alpha = torch.tensor([1.0], device=dev)
args = (a, b, alpha)
def f(a, b, alpha): return flashinfer.mm_fp8(a, b, alpha, torch.bfloat16, backend="cublas")
""")
case("SegmentGEMMWrapper.run", "flashinfer.gemm.gemm_base.SegmentGEMMWrapper.run", "segment_gemm", r"""
ws = torch.empty(128 * 1024 * 1024, dtype=torch.int8, device=dev)
seg = flashinfer.SegmentGEMMWrapper(ws)
seq_lens = torch.tensor([1, 2, 3, 4], dtype=torch.int64, device=dev)
x = torch.randn(10, 128, device=dev, dtype=torch.float16)
W = torch.randn(4, 256, 128, device=dev, dtype=torch.float16)
args = (x, W, seq_lens)
def f(x, W, seq_lens): return seg.run(x, W, 4, True, seg_lens=seq_lens)
""")

# --- attention, single request ---------------------------------------------------------------------------------
case("single_decode_with_kv_cache", "flashinfer.decode.single_decode_with_kv_cache", "decode", r"""
q = torch.randn(32, 128, device=dev, dtype=torch.float16)
k = torch.randn(256, 8, 128, device=dev, dtype=torch.float16); v = torch.randn(256, 8, 128, device=dev, dtype=torch.float16)
args = (q, k, v)
def f(q, k, v): return flashinfer.single_decode_with_kv_cache(q, k, v)
""")
case("single_prefill_with_kv_cache", "flashinfer.prefill.single_prefill_with_kv_cache", "prefill", r"""
q = torch.randn(64, 32, 128, device=dev, dtype=torch.float16)
k = torch.randn(256, 8, 128, device=dev, dtype=torch.float16); v = torch.randn(256, 8, 128, device=dev, dtype=torch.float16)
args = (q, k, v)
def f(q, k, v): return flashinfer.single_prefill_with_kv_cache(q, k, v, causal=True, backend="fa2")
""")
case("single_prefill_with_kv_cache_return_lse", "flashinfer.prefill.single_prefill_with_kv_cache_return_lse", "prefill", r"""
q = torch.randn(64, 32, 128, device=dev, dtype=torch.float16)
k = torch.randn(256, 8, 128, device=dev, dtype=torch.float16); v = torch.randn(256, 8, 128, device=dev, dtype=torch.float16)
args = (q, k, v)
def f(q, k, v): return flashinfer.single_prefill_with_kv_cache_return_lse(q, k, v, causal=True, backend="fa2")
""")

# --- concat ---------------------------------------------------------------------------------------------------------
case("concat_mla_k", "flashinfer.concat_ops.concat_mla_k", "concat_mla", r"""
n, h = 64, 16
k = torch.empty(n, h, 192, device=dev, dtype=torch.bfloat16)
k_nope = torch.randn(n, h, 128, device=dev, dtype=torch.bfloat16)
k_rope = torch.randn(n, 1, 64, device=dev, dtype=torch.bfloat16)
args = (k, k_nope, k_rope)
def f(k, k_nope, k_rope): flashinfer.concat_ops.concat_mla_k(k, k_nope, k_rope); return k
""")

# ==== round 2: input fixes, branch probes for the round-1 disagreements, more SAFE-verdict helpers ====
ROUND2 = []


def case2(name, api, group, code):
    case(name, api, group, code)
    ROUND2.append(name)


case2("mm_fp8", "flashinfer.gemm.gemm_base.mm_fp8", "gemm_fp8", r"""
a = torch.randn(64, 128, device=dev).to(torch.float8_e4m3fn)
b = torch.randn(256, 128, device=dev).to(torch.float8_e4m3fn)
alpha = torch.tensor([1.0], device=dev)
args = (a, b, alpha)
def f(a, b, alpha): return flashinfer.mm_fp8(a, b, alpha, torch.bfloat16, backend="cublas")
""")
case2("concat_mla_k", "flashinfer.concat_ops.concat_mla_k", "concat_mla", r"""
from flashinfer.concat_ops import concat_mla_k
n, h = 64, 16
k = torch.empty(n, h, 192, device=dev, dtype=torch.bfloat16)
k_nope = torch.randn(n, h, 128, device=dev, dtype=torch.bfloat16)
k_rope = torch.randn(n, 1, 64, device=dev, dtype=torch.bfloat16)
args = (k, k_nope, k_rope)
def f(k, k_nope, k_rope): concat_mla_k(k, k_nope, k_rope); return k
""")
case2("resolve_nvfp4_4over6[env=1]", "flashinfer.quantization.nvfp4_quantization_utils.resolve_nvfp4_4over6", None, r"""
os.environ["FLASHINFER_NVFP4_4OVER6"] = "1"
from flashinfer import resolve_nvfp4_4over6
args = (torch.randn(8, device=dev),)
def f(x): return x + (0 if resolve_nvfp4_4over6() is None else 1)
""")
case2("make_nvfp4_global_scale[per_token]", "flashinfer.quantization.nvfp4_quantization_utils.make_nvfp4_global_scale", None, r"""
from flashinfer import make_nvfp4_global_scale
args = (torch.randn(128, 256, device=dev, dtype=torch.bfloat16),)
def f(x): return make_nvfp4_global_scale(x, True)
""")
case2("is_gated_activation[int]", "flashinfer.tllm_enums.is_gated_activation", None, r"""
from flashinfer.tllm_enums import is_gated_activation
args = (torch.randn(8, device=dev),)
def f(x): return x + int(is_gated_activation(3))
""")
case2("normalize_activation_type", "flashinfer.tllm_enums.normalize_activation_type", None, r"""
from flashinfer.tllm_enums import normalize_activation_type, ActivationType
args = (torch.randn(8, device=dev),)
def f(x): return x + int(normalize_activation_type(ActivationType.Swiglu))
""")
for fn, expr in [
    ("get_compute_capability", "x + get_compute_capability(x.device)[0]"),
    ("device_support_pdl", "x + int(device_support_pdl(x.device))"),
    ("get_device_sm_count", "x + get_device_sm_count(x.device)"),
    ("get_device_properties", "x + get_device_properties(x.device).multi_processor_count"),
    ("get_shared_bytes_per_block_optin", "x + get_shared_bytes_per_block_optin(x.device)"),
    ("get_gpu_memory_bandwidth", "x + get_gpu_memory_bandwidth(x.device)"),
    ("get_device_name", "x + len(get_device_name(x.device))"),
    ("is_sm90a_supported", "x + int(is_sm90a_supported(x.device))"),
    ("determine_gemm_backend", "x + len(determine_gemm_backend(x.device))"),
    ("has_cuda_cudart", "x + int(has_cuda_cudart())"),
    ("get_alibi_slopes", "x + get_alibi_slopes(8, x.device)"),
    ("get_indptr", "get_indptr(x.to(torch.int32))"),
    ("last_positive_power_of_2", "x * last_positive_power_of_2(100)"),
    ("is_float8", "x + int(is_float8(x))"),
    ("ceil_div", "x * ceil_div(100, 7)"),
    ("round_up", "x * round_up(100, 16)"),
]:
    case2(fn, f"flashinfer.utils.{fn}", None, r"""
from flashinfer.utils import %s
args = (torch.ones(8, device=dev),)
def f(x): return %s
""" % (fn, expr))
case2("get_num_cached_for_topk", "flashinfer.topk.get_num_cached_for_topk", None, r"""
from flashinfer.topk import get_num_cached_for_topk
args = (torch.ones(8, device=dev),)
def f(x): return x + get_num_cached_for_topk(x.device, 16)
""")
case2("env_flag_enabled", "flashinfer.quantization.nvfp4_quantization_utils.env_flag_enabled", None, r"""
from flashinfer.quantization.nvfp4_quantization_utils import env_flag_enabled
args = (torch.ones(8, device=dev),)
def f(x): return x + int(env_flag_enabled("FLASHINFER_NVFP4_4OVER6"))
""")
case2("nvfp4_e4m3_max", "flashinfer.quantization.nvfp4_quantization_utils.nvfp4_e4m3_max", None, r"""
from flashinfer.quantization.nvfp4_quantization_utils import nvfp4_e4m3_max
args = (torch.ones(8, device=dev),)
def f(x): return x * nvfp4_e4m3_max()
""")

# ==== after-fix proof (fixproof.py): public APIs the fix changes that had no case yet ====
AFTERFIX = []


def case3(name, api, group, code):
    case(name, api, group, code)
    AFTERFIX.append(name)


case3("apply_llama31_rope_pos_ids_inplace", "flashinfer.rope.apply_llama31_rope_pos_ids_inplace", "rope", ROPE + r"""
args = (q, k, pos_ids)
def f(q, k, pos_ids): flashinfer.rope.apply_llama31_rope_pos_ids_inplace(q, k, pos_ids); return q
""")
case3("rope_quantize_fp8", "flashinfer.rope.rope_quantize_fp8", "rope", r"""
nnz = 16
q_rope = torch.randn(nnz, 16, 64, device=dev, dtype=torch.bfloat16)
k_rope = torch.randn(nnz, 64, device=dev, dtype=torch.bfloat16)
q_nope = torch.randn(nnz, 16, 512, device=dev, dtype=torch.bfloat16)
k_nope = torch.randn(nnz, 512, device=dev, dtype=torch.bfloat16)
cos_sin = torch.randn(4096, 64, device=dev, dtype=torch.float32)
pos_ids = torch.arange(nnz, dtype=torch.int32, device=dev)
args = (q_rope, k_rope, q_nope, k_nope, pos_ids)
def f(q_rope, k_rope, q_nope, k_nope, pos_ids): return flashinfer.rope.rope_quantize_fp8(q_rope, k_rope, q_nope, k_nope, cos_sin, pos_ids, True, torch.float8_e4m3fn)
""")
case3("top_k_top_p_sampling_from_probs[tensor]", "flashinfer.sampling.top_k_top_p_sampling_from_probs", "sampling", r"""
probs = torch.softmax(torch.randn(4, 1024, device=dev, dtype=torch.float32), dim=-1)
top_k = torch.full((4,), 10, dtype=torch.int32, device=dev)
top_p = torch.full((4,), 0.9, dtype=torch.float32, device=dev)
args = (probs, top_k, top_p)
def f(probs, top_k, top_p): return flashinfer.sampling.top_k_top_p_sampling_from_probs(probs, top_k, top_p)
""")

# ==== after-fix proof, round 4 (2026-12-02-r4): fixed APIs that run on SM90 and had no case ====
case3("layernorm_quant", "flashinfer.norm.layernorm_quant", "norm", r"""
x = torch.randn(64, 1024, device=dev, dtype=torch.bfloat16)
g = torch.randn(1024, device=dev, dtype=torch.float32); b = torch.randn(1024, device=dev, dtype=torch.float32)
scale = torch.tensor([0.5], device=dev, dtype=torch.float32)  # a device tensor: the float form is deprecated
out = torch.empty(64, 1024, device=dev, dtype=torch.float8_e4m3fn)
args = (x, out)
def f(x, out): flashinfer.norm.layernorm_quant(out, x, g, b, scale, 1e-6); return out
""")
case3("fused_add_rmsnorm_fp8_block_quant", "flashinfer.norm.fused_add_rmsnorm_fp8_block_quant", "norm", r"""
batch, hidden = 64, 1024  # hidden: a multiple of 256 (<= 8192)
x = torch.randn(batch, hidden, device=dev, dtype=torch.bfloat16)
r = torch.randn(batch, hidden, device=dev, dtype=torch.bfloat16)
w = torch.randn(hidden, device=dev, dtype=torch.bfloat16)
out = torch.empty(batch, hidden, device=dev, dtype=torch.float8_e4m3fn)
block_scale = torch.empty(hidden // 128, (batch + 3) // 4 * 4, device=dev, dtype=torch.float32)
normed = torch.empty(batch, hidden, device=dev, dtype=torch.bfloat16)
args = (x, r, out, block_scale, normed)
def f(x, r, out, block_scale, normed):
    flashinfer.norm.fused_add_rmsnorm_fp8_block_quant(out, block_scale, normed, x, r, w, 1e-6); return out
""")
case3("xqa", "flashinfer.xqa.xqa", "xqa", r"""
from flashinfer.xqa import xqa
B, H, KVH, D, P, pages = 2, 8, 1, 128, 16, 4  # decode, beam 1, bf16 KV (SM90: the generic XQA kernel)
q = torch.randn(B, 1, H, D, device=dev, dtype=torch.bfloat16)
kc = torch.randn(B * pages, P, KVH, D, device=dev, dtype=torch.bfloat16)
vc = torch.randn(B * pages, P, KVH, D, device=dev, dtype=torch.bfloat16)
page_table = torch.arange(B * pages, dtype=torch.int32, device=dev).view(B, pages)
seq_lens = torch.tensor([[50], [37]], dtype=torch.uint32, device=dev)
out = torch.zeros_like(q)
ws = torch.zeros(128 * 1024 * 1024, dtype=torch.uint8, device=dev)
sem = torch.zeros(8 * 1024 * 1024, dtype=torch.uint8, device=dev)
args = (q, kc, vc, out)
def f(q, kc, vc, out): xqa(q, kc, vc, page_table, seq_lens, out, ws, sem, KVH, P); return out
""")

# ==== round 5 (2026-12-03): the return_lse=True calls, an op of their own since r5 ====
case3("single_decode_with_kv_cache[return_lse]", "flashinfer.decode.single_decode_with_kv_cache", "decode", r"""
q = torch.randn(32, 128, device=dev, dtype=torch.float16)
k = torch.randn(256, 8, 128, device=dev, dtype=torch.float16); v = torch.randn(256, 8, 128, device=dev, dtype=torch.float16)
args = (q, k, v)
def f(q, k, v): return flashinfer.single_decode_with_kv_cache(q, k, v, return_lse=True)
""")
case3("single_prefill_with_kv_cache[return_lse]", "flashinfer.prefill.single_prefill_with_kv_cache", "prefill", r"""
q = torch.randn(64, 32, 128, device=dev, dtype=torch.float16)
k = torch.randn(256, 8, 128, device=dev, dtype=torch.float16); v = torch.randn(256, 8, 128, device=dev, dtype=torch.float16)
args = (q, k, v)
def f(q, k, v): return flashinfer.single_prefill_with_kv_cache(q, k, v, causal=True, backend="fa2", return_lse=True)
""")
