"""The real-code suite's models: tiny random configs of real transformers / diffusers classes, as data.

Each ``ModelCase`` names a model class (its ``forward`` is the compiled entry, as ``torch.compile(model)``
compiles it), the config it is built from, the input builder (``harness.INPUTS``) and the *variants*: other
inputs or settings that take host-side branches (deprecated argument forms, training mode, LoRA scales, rope
scaling, cache off...).  Sizes follow the libraries' own test-suites (hidden 32, 2 layers, 4 heads, vocab 99),
so a model builds and runs on CPU in well under a second.

This module is plain data: the static side reads it without importing torch or the libraries.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Variant:
    name: str
    why: str  # the branch it takes
    kwargs: dict = field(default_factory=dict)  # extra forward keyword arguments (JSON values)
    config: dict = field(default_factory=dict)  # config overrides
    train: bool = False  # model.train() instead of model.eval()
    gradient_checkpointing: bool = False
    inputs: str = ""  # another input builder (harness.INPUTS) instead of the case's


DEFAULT = Variant("default", "the inputs the library's own tests use")


@dataclass(frozen=True)
class ModelCase:
    name: str
    family: str  # decoder | moe | encoder | encoder-decoder | vision | unet | dit | vae | audio
    model: str  # "package.module:Class"
    config: str | None  # "package.module:ConfigClass"; None: the keyword arguments go to the model itself
    kwargs: dict
    inputs: str  # harness.INPUTS key
    variants: tuple = ()
    fast: bool = False  # part of the CI sample (tests/test_realcode.py)

    @property
    def library(self) -> str:
        return self.model.split(".", 1)[0]

    @property
    def module(self) -> str:
        return self.model.split(":")[0]

    @property
    def cls(self) -> str:
        return self.model.split(":")[1]

    @property
    def entry(self) -> str:
        return f"{self.module}:{self.cls}.forward"

    def all_variants(self) -> tuple:
        return (DEFAULT,) + tuple(self.variants)


def _tm(model_dir: str, cls: str) -> str:
    return f"transformers.models.{model_dir}.modeling_{model_dir}:{cls}"


def _tc(model_dir: str, cls: str) -> str:
    return f"transformers.models.{model_dir}.configuration_{model_dir}:{cls}"


TINY = dict(vocab_size=99, hidden_size=32, intermediate_size=37, num_hidden_layers=2, num_attention_heads=4,
            max_position_embeddings=64)
TINY_GQA = dict(TINY, num_key_value_heads=2)

# Variants that take a decoder's host-side branches.
NO_CACHE = Variant("no_cache", "use_cache=False: no cache object is built", kwargs={"use_cache": False})
OUT_ATTN = Variant("output_attentions", "output_attentions=True with the SDPA implementation",
                   kwargs={"output_attentions": True})
OUT_HIDDEN = Variant("output_hidden_states", "output_hidden_states=True", kwargs={"output_hidden_states": True})
TRAIN_GC = Variant("train_gc_cache", "training with gradient checkpointing and use_cache=True (warns)",
                   kwargs={"use_cache": True}, train=True, gradient_checkpointing=True)
TRAIN = Variant("train", "training mode (dropout on)", train=True)
ROPE_DYNAMIC = Variant("rope_dynamic", "dynamic NTK rope scaling (updates inv_freq on the host)",
                       config={"rope_parameters": {"rope_type": "dynamic", "factor": 2.0, "rope_theta": 10000.0}})
RETURN_TUPLE = Variant("return_tuple", "return_dict=False", kwargs={"return_dict": False})

# The branches shared by every model of a family (the SDPA `output_attentions` warning, dynamic rope) are measured
# on a few models of it, not on all: each row costs a fresh process and a compile or two.
DECODER_VARIANTS = (NO_CACHE, TRAIN_GC)
ENCODER_VARIANTS = (TRAIN,)

CASES: tuple = (
    # ---------------------------------------------------------------- decoders
    ModelCase("llama", "decoder", _tm("llama", "LlamaModel"), _tc("llama", "LlamaConfig"), TINY_GQA, "tokens",
              DECODER_VARIANTS + (OUT_ATTN, ROPE_DYNAMIC), fast=True),
    ModelCase("mistral", "decoder", _tm("mistral", "MistralModel"), _tc("mistral", "MistralConfig"), TINY_GQA,
              "tokens", DECODER_VARIANTS),
    ModelCase("qwen2", "decoder", _tm("qwen2", "Qwen2Model"), _tc("qwen2", "Qwen2Config"), TINY_GQA, "tokens",
              DECODER_VARIANTS + (ROPE_DYNAMIC,)),
    ModelCase("qwen3", "decoder", _tm("qwen3", "Qwen3Model"), _tc("qwen3", "Qwen3Config"), dict(TINY_GQA, head_dim=8),
              "tokens", DECODER_VARIANTS),
    ModelCase("gemma", "decoder", _tm("gemma", "GemmaModel"), _tc("gemma", "GemmaConfig"), dict(TINY_GQA, head_dim=8),
              "tokens", DECODER_VARIANTS),
    ModelCase("gemma2", "decoder", _tm("gemma2", "Gemma2Model"), _tc("gemma2", "Gemma2Config"),
              dict(TINY_GQA, head_dim=8, sliding_window=16), "tokens", DECODER_VARIANTS),
    ModelCase("phi", "decoder", _tm("phi", "PhiModel"), _tc("phi", "PhiConfig"), TINY, "tokens", DECODER_VARIANTS),
    ModelCase("phi3", "decoder", _tm("phi3", "Phi3Model"), _tc("phi3", "Phi3Config"), dict(TINY_GQA, pad_token_id=0),
              "tokens", DECODER_VARIANTS),
    ModelCase("gpt2", "decoder", _tm("gpt2", "GPT2Model"), _tc("gpt2", "GPT2Config"),
              dict(vocab_size=99, n_embd=32, n_layer=2, n_head=4, n_positions=64), "tokens",
              DECODER_VARIANTS + (OUT_ATTN, TRAIN), fast=True),
    ModelCase("gpt_neox", "decoder", _tm("gpt_neox", "GPTNeoXModel"), _tc("gpt_neox", "GPTNeoXConfig"), TINY,
              "tokens", DECODER_VARIANTS),
    ModelCase("gptj", "decoder", _tm("gptj", "GPTJModel"), _tc("gptj", "GPTJConfig"),
              dict(vocab_size=99, n_embd=32, n_layer=2, n_head=4, n_positions=64, rotary_dim=4), "tokens",
              DECODER_VARIANTS),
    ModelCase("falcon", "decoder", _tm("falcon", "FalconModel"), _tc("falcon", "FalconConfig"),
              dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4), "tokens",
              DECODER_VARIANTS),
    ModelCase("opt", "decoder", _tm("opt", "OPTModel"), _tc("opt", "OPTConfig"),
              dict(vocab_size=99, hidden_size=32, ffn_dim=37, num_hidden_layers=2, num_attention_heads=4,
                   word_embed_proj_dim=32, max_position_embeddings=64), "tokens", DECODER_VARIANTS),
    ModelCase("bloom", "decoder", _tm("bloom", "BloomModel"), _tc("bloom", "BloomConfig"),
              dict(vocab_size=99, hidden_size=32, n_layer=2, n_head=4), "tokens", DECODER_VARIANTS),
    ModelCase("starcoder2", "decoder", _tm("starcoder2", "Starcoder2Model"), _tc("starcoder2", "Starcoder2Config"),
              TINY_GQA, "tokens", DECODER_VARIANTS),
    ModelCase("olmo2", "decoder", _tm("olmo2", "Olmo2Model"), _tc("olmo2", "Olmo2Config"), TINY_GQA, "tokens",
              DECODER_VARIANTS),
    ModelCase("stablelm", "decoder", _tm("stablelm", "StableLmModel"), _tc("stablelm", "StableLmConfig"), TINY_GQA,
              "tokens", DECODER_VARIANTS),
    ModelCase("cohere", "decoder", _tm("cohere", "CohereModel"), _tc("cohere", "CohereConfig"), TINY_GQA, "tokens",
              DECODER_VARIANTS),
    ModelCase("granite", "decoder", _tm("granite", "GraniteModel"), _tc("granite", "GraniteConfig"), TINY_GQA,
              "tokens", DECODER_VARIANTS),
    # ---------------------------------------------------------------- mixture of experts
    ModelCase("mixtral", "moe", _tm("mixtral", "MixtralModel"), _tc("mixtral", "MixtralConfig"),
              dict(TINY_GQA, intermediate_size=32, num_local_experts=4, num_experts_per_tok=2), "tokens",
              DECODER_VARIANTS),
    ModelCase("qwen2_moe", "moe", _tm("qwen2_moe", "Qwen2MoeModel"), _tc("qwen2_moe", "Qwen2MoeConfig"),
              dict(TINY_GQA, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=12,
                   shared_expert_intermediate_size=36), "tokens", DECODER_VARIANTS),
    ModelCase("qwen3_moe", "moe", _tm("qwen3_moe", "Qwen3MoeModel"), _tc("qwen3_moe", "Qwen3MoeConfig"),
              dict(TINY_GQA, head_dim=8, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=12),
              "tokens", DECODER_VARIANTS),
    ModelCase("olmoe", "moe", _tm("olmoe", "OlmoeModel"), _tc("olmoe", "OlmoeConfig"),
              dict(TINY_GQA, intermediate_size=32, num_experts=4, num_experts_per_tok=2), "tokens",
              DECODER_VARIANTS),
    ModelCase("deepseek_v3", "moe", _tm("deepseek_v3", "DeepseekV3Model"), _tc("deepseek_v3", "DeepseekV3Config"),
              dict(TINY_GQA, moe_intermediate_size=12, n_routed_experts=4, n_shared_experts=1, num_experts_per_tok=2,
                   n_group=1, topk_group=1, first_k_dense_replace=1, kv_lora_rank=16, q_lora_rank=16,
                   qk_rope_head_dim=4, v_head_dim=8, qk_nope_head_dim=4), "tokens", DECODER_VARIANTS, fast=True),
    # ---------------------------------------------------------------- encoders
    ModelCase("bert", "encoder", _tm("bert", "BertModel"), _tc("bert", "BertConfig"), TINY, "tokens",
              ENCODER_VARIANTS + (OUT_ATTN, OUT_HIDDEN), fast=True),
    ModelCase("roberta", "encoder", _tm("roberta", "RobertaModel"), _tc("roberta", "RobertaConfig"),
              dict(TINY, pad_token_id=1), "tokens", ENCODER_VARIANTS),
    ModelCase("distilbert", "encoder", _tm("distilbert", "DistilBertModel"), _tc("distilbert", "DistilBertConfig"),
              dict(vocab_size=99, dim=32, n_layers=2, n_heads=4, hidden_dim=37, max_position_embeddings=64),
              "tokens", ENCODER_VARIANTS),
    ModelCase("albert", "encoder", _tm("albert", "AlbertModel"), _tc("albert", "AlbertConfig"),
              dict(TINY, embedding_size=16), "tokens", ENCODER_VARIANTS),
    ModelCase("electra", "encoder", _tm("electra", "ElectraModel"), _tc("electra", "ElectraConfig"),
              dict(TINY, embedding_size=16), "tokens", ENCODER_VARIANTS),
    ModelCase("deberta_v2", "encoder", _tm("deberta_v2", "DebertaV2Model"), _tc("deberta_v2", "DebertaV2Config"),
              TINY, "tokens", ENCODER_VARIANTS),
    ModelCase("modernbert", "encoder", _tm("modernbert", "ModernBertModel"), _tc("modernbert", "ModernBertConfig"),
              dict(TINY, global_attn_every_n_layers=2, local_attention=16, pad_token_id=0), "tokens",
              ENCODER_VARIANTS),
    # ---------------------------------------------------------------- encoder-decoders
    ModelCase("t5", "encoder-decoder", _tm("t5", "T5Model"), _tc("t5", "T5Config"),
              dict(vocab_size=99, d_model=32, d_ff=37, d_kv=8, num_layers=2, num_heads=4, decoder_start_token_id=0),
              "encdec", (NO_CACHE, OUT_ATTN, TRAIN), fast=True),
    ModelCase("bart", "encoder-decoder", _tm("bart", "BartModel"), _tc("bart", "BartConfig"),
              dict(vocab_size=99, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                   decoder_attention_heads=4, encoder_ffn_dim=37, decoder_ffn_dim=37, max_position_embeddings=64),
              "encdec", (NO_CACHE, TRAIN)),
    ModelCase("marian", "encoder-decoder", _tm("marian", "MarianModel"), _tc("marian", "MarianConfig"),
              dict(vocab_size=99, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                   decoder_attention_heads=4, encoder_ffn_dim=37, decoder_ffn_dim=37, max_position_embeddings=64,
                   decoder_start_token_id=0, pad_token_id=0), "encdec", (NO_CACHE,)),
    ModelCase("whisper", "audio", _tm("whisper", "WhisperModel"), _tc("whisper", "WhisperConfig"),
              dict(vocab_size=99, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                   decoder_attention_heads=4, encoder_ffn_dim=37, decoder_ffn_dim=37, num_mel_bins=16,
                   max_source_positions=30, max_target_positions=40, decoder_start_token_id=1, pad_token_id=0),
              "whisper", (NO_CACHE,)),
    # ---------------------------------------------------------------- vision
    ModelCase("vit", "vision", _tm("vit", "ViTModel"), _tc("vit", "ViTConfig"),
              dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37, image_size=30,
                   patch_size=2), "pixels", (OUT_ATTN, Variant("interpolate_pos", "interpolate_pos_encoding=True",
                                                              kwargs={"interpolate_pos_encoding": True})), fast=True),
    ModelCase("clip_vision", "vision", _tm("clip", "CLIPVisionModel"), _tc("clip", "CLIPVisionConfig"),
              dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37, image_size=30,
                   patch_size=2, projection_dim=32), "pixels", ()),
    ModelCase("clip_text", "encoder", _tm("clip", "CLIPTextModel"), _tc("clip", "CLIPTextConfig"),
              dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
                   max_position_embeddings=64, projection_dim=32), "tokens", ()),
    ModelCase("siglip_vision", "vision", _tm("siglip", "SiglipVisionModel"), _tc("siglip", "SiglipVisionConfig"),
              dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37, image_size=30,
                   patch_size=2), "pixels", ()),
    ModelCase("dinov2", "vision", _tm("dinov2", "Dinov2Model"), _tc("dinov2", "Dinov2Config"),
              dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37, image_size=30,
                   patch_size=2), "pixels", ()),
    ModelCase("swin", "vision", _tm("swin", "SwinModel"), _tc("swin", "SwinConfig"),
              dict(image_size=32, patch_size=2, embed_dim=16, depths=[1, 2], num_heads=[2, 2], window_size=2),
              "pixels", ()),
    ModelCase("convnext", "vision", _tm("convnext", "ConvNextModel"), _tc("convnext", "ConvNextConfig"),
              dict(num_channels=3, hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1], image_size=32), "pixels",
              ()),
    ModelCase("resnet", "vision", _tm("resnet", "ResNetModel"), _tc("resnet", "ResNetConfig"),
              dict(num_channels=3, embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], image_size=32), "pixels",
              ()),
    # ---------------------------------------------------------------- diffusers
    ModelCase("unet2d_condition", "unet", "diffusers.models.unets.unet_2d_condition:UNet2DConditionModel", None,
              dict(block_out_channels=[4, 8], norm_num_groups=4, down_block_types=["CrossAttnDownBlock2D",
                   "DownBlock2D"], up_block_types=["UpBlock2D", "CrossAttnUpBlock2D"], cross_attention_dim=8,
                   attention_head_dim=2, out_channels=4, in_channels=4, layers_per_block=1, sample_size=16),
              "unet2d_condition",
              (Variant("lora_scale", "cross_attention_kwargs={'scale': 0.5}: the deprecated LoRA scale argument",
                       kwargs={"cross_attention_kwargs": {"scale": 0.5}}),
               Variant("return_tuple", "return_dict=False", kwargs={"return_dict": False})), fast=True),
    ModelCase("unet2d", "unet", "diffusers.models.unets.unet_2d:UNet2DModel", None,
              dict(block_out_channels=[4, 8], norm_num_groups=2, down_block_types=["DownBlock2D", "AttnDownBlock2D"],
                   up_block_types=["AttnUpBlock2D", "UpBlock2D"], attention_head_dim=3, out_channels=3, in_channels=3,
                   layers_per_block=1, sample_size=16), "unet2d", ()),
    ModelCase("autoencoder_kl", "vae", "diffusers.models.autoencoders.autoencoder_kl:AutoencoderKL", None,
              dict(block_out_channels=[4, 8], in_channels=3, out_channels=3, down_block_types=["DownEncoderBlock2D",
                   "DownEncoderBlock2D"], up_block_types=["UpDecoderBlock2D", "UpDecoderBlock2D"], latent_channels=4,
                   norm_num_groups=2), "vae", ()),
    ModelCase("autoencoder_tiny", "vae", "diffusers.models.autoencoders.autoencoder_tiny:AutoencoderTiny", None,
              dict(in_channels=3, out_channels=3, encoder_block_out_channels=[8, 8], decoder_block_out_channels=[8, 8],
                   num_encoder_blocks=[1, 1], num_decoder_blocks=[1, 1], latent_channels=4), "vae", ()),
    ModelCase("flux", "dit", "diffusers.models.transformers.transformer_flux:FluxTransformer2DModel", None,
              dict(patch_size=1, in_channels=4, num_layers=1, num_single_layers=1, attention_head_dim=16,
                   num_attention_heads=2, joint_attention_dim=32, pooled_projection_dim=32, axes_dims_rope=[4, 4, 8]),
              "flux", (Variant("txt_ids_3d", "the deprecated 3-D txt_ids / img_ids (warns and squeezes)",
                               inputs="flux_3d_ids"),
                       Variant("lora_scale", "joint_attention_kwargs={'scale': 0.5}",
                               kwargs={"joint_attention_kwargs": {"scale": 0.5}})), fast=True),
    ModelCase("sd3", "dit", "diffusers.models.transformers.transformer_sd3:SD3Transformer2DModel", None,
              dict(sample_size=32, patch_size=1, in_channels=4, num_layers=2, attention_head_dim=8,
                   num_attention_heads=4, caption_projection_dim=32, joint_attention_dim=32, pooled_projection_dim=64,
                   out_channels=4), "sd3",
              (Variant("lora_scale", "joint_attention_kwargs={'scale': 0.5}",
                       kwargs={"joint_attention_kwargs": {"scale": 0.5}}),)),
    ModelCase("pixart", "dit", "diffusers.models.transformers.pixart_transformer_2d:PixArtTransformer2DModel", None,
              dict(sample_size=8, num_layers=1, patch_size=2, attention_head_dim=2, num_attention_heads=2,
                   in_channels=4, cross_attention_dim=8, out_channels=8, attention_bias=True,
                   activation_fn="gelu-approximate", num_embeds_ada_norm=8, norm_type="ada_norm_single",
                   norm_elementwise_affine=False, norm_eps=1e-6, use_additional_conditions=False,
                   caption_channels=None), "pixart", ()),
    ModelCase("dit", "dit", "diffusers.models.transformers.dit_transformer_2d:DiTTransformer2DModel", None,
              dict(in_channels=4, out_channels=8, activation_fn="gelu-approximate", num_attention_heads=2,
                   attention_head_dim=4, attention_bias=True, num_layers=1, norm_type="ada_norm_zero", num_embeds_ada_norm=8,
                   patch_size=2, sample_size=8), "dit", ()),
    ModelCase("cogvideox", "dit", "diffusers.models.transformers.cogvideox_transformer_3d:CogVideoXTransformer3DModel",
              None, dict(num_attention_heads=2, attention_head_dim=8, in_channels=4, out_channels=4, time_embed_dim=2,
                         text_embed_dim=8, num_layers=1, sample_width=8, sample_height=8, sample_frames=8,
                         patch_size=2, temporal_compression_ratio=4, max_text_seq_length=8), "cogvideox", ()),
    ModelCase("sana", "dit", "diffusers.models.transformers.sana_transformer:SanaTransformer2DModel", None,
              dict(patch_size=1, in_channels=4, out_channels=4, num_layers=1, attention_head_dim=4,
                   num_attention_heads=2, num_cross_attention_heads=2, cross_attention_head_dim=4,
                   cross_attention_dim=8, caption_channels=8, sample_size=32), "sana", ()),
    ModelCase("wan", "dit", "diffusers.models.transformers.transformer_wan:WanTransformer3DModel", None,
              dict(patch_size=[1, 2, 2], num_attention_heads=2, attention_head_dim=12, in_channels=4, out_channels=4,
                   text_dim=16, freq_dim=256, ffn_dim=32, num_layers=2, cross_attn_norm=True, qk_norm="rms_norm_across_heads",
                   rope_max_seq_len=32), "wan", ()),
)

BY_NAME = {c.name: c for c in CASES}


def names_from(csv: str) -> tuple:
    """(the model names a comma-separated option asks for, all of them when empty; the unknown ones)."""
    names = [n for n in csv.split(",") if n] or [c.name for c in CASES]
    return names, [n for n in names if n not in BY_NAME]
