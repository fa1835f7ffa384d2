"""Issue [C] on the real code where each pattern was met: the calls Python makes without a call expression
(lint/implicit.py) and the resolver mechanisms they needed, on transformers 5.24.0 and diffusers 0.42.1 from
PyPI (tests/realcode/requirements.lock).  Each test names a function Dynamo traced (the real-code suite's
truth, tests/realcode/truth/) that the walk from the model's ``forward`` did not reach before the mechanism."""
import pytest

from realcode.catalog import BY_NAME
from realcode.env import EnvUnavailable, cache_root, env_root

pytestmark = pytest.mark.realcode


@pytest.fixture(scope="module")
def walked():
    """{model: the (module, qualname)s the walk from its forward entered} for llama, sd3, t5, mixtral, flux,
    unet2d_condition and bloom, one scan; and "llama findings": the (path, line)s of llama's findings."""
    try:
        env = env_root()
    except EnvUnavailable as e:
        pytest.skip(f"the pinned transformers/diffusers environment is not available: {e}")
    from realcode.static import analyse

    names = ("llama", "sd3", "t5", "mixtral", "flux", "unet2d_condition", "bloom")
    static = analyse([BY_NAME[n] for n in names], env, cache_dir=cache_root() / "realcode" / "lint-cache")
    out = {name: {f"{m}:{q}" for m, q in static[name]["reached"]} for name in names}
    out["llama findings"] = {(f["path"], f["line"]) for f in static["llama"]["findings"]}
    out["llama rows"] = static["llama"]["findings"]
    return out


def test_a_property_with_a_setter_runs_its_getter(walked):
    """configuration_utils.py:594-599: `@property def _attn_implementation` then `@_attn_implementation.setter
    def _attn_implementation`; the second def must not hide the getter that `config._attn_implementation` runs."""
    assert "transformers.configuration_utils:PreTrainedConfig._attn_implementation" in walked["llama"]


def test_an_attribute_read_runs_the_classs_getattribute(walked):
    """PreTrainedConfig inherits HeterogeneousConfigMixin.__getattribute__ (integrations/heterogeneity/
    configuration_utils.py) and defines its own (configuration_utils.py): every `config.x` runs them."""
    assert "transformers.configuration_utils:PreTrainedConfig.__getattribute__" in walked["llama"]
    assert "transformers.integrations.heterogeneity.configuration_utils:HeterogeneousConfigMixin.__getattribute__" \
        in walked["llama"]


def test_a_submodule_read_runs_the_modules_getattr(walked):
    """diffusers' ModelMixin.__getattr__ (models/modeling_utils.py): `self.pos_embed(hidden_states)` in
    SD3Transformer2DModel.forward reads a submodule, which nn.Module keeps in `_modules`, not `__dict__`."""
    assert "diffusers.models.modeling_utils:ModelMixin.__getattr__" in walked["sd3"]


def test_a_subscript_of_an_instance_runs_getitem_and_returns_its_value(walked):
    """masking_utils.py:967 `mask_interface = ALL_MASK_ATTENTION_FUNCTIONS[config._attn_implementation]`,
    a GeneralInterface (utils/generic.py) whose __getitem__ reads its `_global_mapping`; line 1005 calls
    what it returned (sdpa_mask, the function Dynamo traced)."""
    assert "transformers.utils.generic:GeneralInterface.__getitem__" in walked["llama"]
    assert "transformers.masking_utils:sdpa_mask" in walked["llama"]


def test_a_container_annotation_types_its_elements(walked):
    """cache_utils.py: Cache.__init__(layers: list[CacheLayerMixin | LinearAttentionCacheLayerMixin |
    DummyLayer] | None) stores `self.layers`; Cache.update's `self.layers[layer_idx].update(...)` (line 1620)
    dispatches to the layer classes (DynamicLayer.update, which Dynamo traced)."""
    assert "transformers.cache_utils:DynamicLayer.update" in walked["llama"]


def test_constructing_a_dataclass_runs_post_init_and_setattr(walked):
    """modeling_llama.py: `return BaseModelOutputWithPast(...)`, a @dataclass whose generated __init__ hides
    ModelOutput.__init__ and calls ModelOutput.__post_init__ (utils/generic.py), which fills the dict through
    `self[field.name] = v` (ModelOutput.__setitem__)."""
    for fn in ("ModelOutput.__post_init__", "ModelOutput.__setattr__", "ModelOutput.__setitem__"):
        assert f"transformers.utils.generic:{fn}" in walked["llama"], fn


def test_iterating_an_object_without_iter_runs_getitem(walked):
    """cache_utils.py: get_layer_types_and_kwargs's `for layer_config in layer_configs`, a
    _PerLayerConfigView (integrations/heterogeneity/configuration_utils.py) with __getitem__ and __len__ but
    no __iter__: Python iterates it through __getitem__."""
    assert "transformers.integrations.heterogeneity.configuration_utils:_PerLayerConfigView.__getitem__" \
        in walked["llama"]


def test_len_of_an_instance_runs_len(walked):
    """cache_utils.py: `len(self)` in Cache methods runs Cache.__len__."""
    assert "transformers.cache_utils:Cache.__len__" in walked["llama"]


def test_a_flag_that_starts_true_stays_true_through_or_assignments(walked):
    """utils/import_utils.py: is_tracing() is `_is_tracing = is_torchdynamo_compiling() or ...` then
    `_is_tracing |= is_fake_tensor(tensor)`: True under Dynamo, so ModelOutput._replace_old_cache_name's
    `if not is_tracing(): logger.warning_once(...)` (utils/generic.py:647) is dead, not a warning."""
    assert "transformers.utils.generic:ModelOutput._replace_old_cache_name" in walked["llama"]
    assert ("transformers/utils/generic.py", 647) not in walked["llama findings"]


def test_what_a_torch_function_returns_is_a_tensor_and_so_is_arithmetic_on_it(walked):
    """modeling_rope_utils.py:89 `seq_len = torch.max(position_ids) + 1`, then line 101 `if seq_len >
    max_seq_len_cached:` in dynamic_rope_update's `dynamic_frequency_update`: the real-code suite's
    rope_dynamic variant (llama, qwen2) stops there (GB0170, data-dependent branching).  `torch.max` is the
    torch function of a tensor method, so its result is a tensor, and `+ 1` keeps it one; the branch is
    reached only where the config's rope type is dynamic, which the walk cannot decide: a warning with it."""
    rows = [f for f in walked["llama rows"] if f["rule"] == "CL119"
            and f["path"] == "transformers/modeling_rope_utils.py" and f["line"] in (101, 113)]
    assert {f["line"] for f in rows} == {101, 113}, rows
    assert all(f["severity"] == "warning" and f["conditions"] == ["'dynamic' in rope_type"] for f in rows), rows


def test_what_a_method_appends_to_an_attributes_container_is_in_it(walked):
    """modeling_t5.py:443-450, T5Block.__init__: `self.layer = nn.ModuleList()`, then
    `self.layer.append(T5LayerSelfAttention(...))` and `self.layer.append(T5LayerFF(config))`; forward calls
    `self.layer[0](...)`.  The appended modules are the list's elements, so the walk reaches the attention
    (and, through it, sdpa_attention_forward, where the output_attentions variant stops: line 111)."""
    assert "transformers.models.t5.modeling_t5:T5LayerSelfAttention.forward" in walked["t5"]
    assert "transformers.models.t5.modeling_t5:T5Attention.forward" in walked["t5"]
    assert "transformers.integrations.sdpa_attention:sdpa_attention_forward" in walked["t5"]


def test_a_metaclass_setattr_wraps_the_generated_dataclass_init(walked):
    """utils/generic.py:440-466: ModelOutput's metaclass _BCCacheNameMeta defines `__setattr__`, which
    @dataclass runs when it installs the generated `__init__`; for that name it stores its own local
    `__init__` (which calls `_rename_kwargs_for_bc(kwargs)`, then the generated one).  Constructing
    BaseModelOutputWithPast in LlamaModel.forward runs that wrapper."""
    assert "transformers.utils.generic:_BCCacheNameMeta.__setattr__.<locals>.__init__" in walked["llama"]
    assert "transformers.utils.generic:_rename_kwargs_for_bc" in walked["llama"]


def test_self_in_a_decorators_method_wrapper_is_the_model(walked):
    """utils/output_capturing.py:327, the wrapper @capture_outputs puts around LlamaModel.forward: `def
    wrapper(self, *args, **kwargs)` reads `self.config` (line 329 on); walked with the wrapped method's class,
    `self` is the model and `self.config` its PreTrainedConfig, whose `output_attentions` property
    (configuration_utils.py:576) Dynamo traced."""
    assert "transformers.configuration_utils:PreTrainedConfig.output_attentions" in walked["llama"]


def test_a_closure_over_varargs_calls_what_was_passed(walked):
    """masking_utils.py:46-57, `and_masks(*mask_functions)` returns `and_mask`, which calls each of
    `mask_functions`; sdpa_mask (line 526) builds `mask_function = and_masks(mask_function,
    padding_mask_function(padding_mask))` and calls it (line 537).  The walk of `and_mask` knows the tuple it
    closed over, so it reaches padding_mask_function's `inner_mask`, which Dynamo traced."""
    assert "transformers.masking_utils:padding_mask_function.<locals>.inner_mask" in walked["llama"]
    assert "transformers.masking_utils:causal_mask_function" in walked["llama"]


def test_a_dict_subclass_holds_the_dict_its_module_builds_it_from(walked):
    """activations.py:224-228 and 350: `ACT2FN = ClassInstantier(ACT2CLS)`, an OrderedDict subclass whose
    `__getitem__` does `content = super().__getitem__(key)` and returns `cls(**kwargs)`; LlamaMLP's
    `self.act_fn = ACT2FN[config.hidden_act]` is one of ACT2CLS's classes, and `self.act_fn(...)` runs its
    forward (SiLUActivation's, which Dynamo traced)."""
    assert "transformers.activations:SiLUActivation.forward" in walked["llama"]


def test_a_class_decorator_from_a_lazy_package_replaces_forward(walked):
    """modeling_mixtral.py:56 `@use_experts_implementation class MixtralExperts`, imported `from
    ...integrations import use_experts_implementation`: transformers.integrations binds it only under `if
    TYPE_CHECKING:` and serves it through a _LazyModule otherwise.  The decorator (integrations/moe.py:616-641)
    stores `experts_class.forward = forward`, a wrapper that dispatches through ExpertsInterface.get_interface
    (which Dynamo traced, with the wrapper)."""
    assert "transformers.integrations.moe:use_experts_implementation.<locals>.wrapper.<locals>.forward" \
        in walked["mixtral"]
    assert "transformers.integrations.moe:ExpertsInterface.get_interface" in walked["mixtral"]


def test_a_hook_a_models_method_registers_runs_in_its_forward(walked):
    """modeling_utils.py:2147-2185, PreTrainedModel.enable_input_require_grads (gradient checkpointing calls
    it before training): `input_embeddings.register_forward_hook(make_inputs_require_grads)`; the hook runs
    inside LlamaModel.forward's `self.embed_tokens(...)`, where Dynamo traced it (the training variant)."""
    assert "transformers.modeling_utils:PreTrainedModel.enable_input_require_grads.<locals>.make_inputs_require_grads" \
        in walked["llama"]


def test_a_hook_the_traced_code_registers_runs_at_the_hooked_modules_calls(walked):
    """utils/output_capturing.py: the wrapper @capture_outputs puts around LlamaModel.forward installs
    `install_output_capuring_hook.<locals>.output_capturing_hook` on the decoder layers
    (`module.register_forward_hook(output_capturing_hook)`) while the forward runs; each layer's call then
    runs it (Dynamo traced it, and CompileableContextVar.get inside it, in the output_attentions variant)."""
    assert "transformers.utils.output_capturing:install_output_capuring_hook.<locals>.output_capturing_hook" \
        in walked["llama"]
    assert "transformers.utils.output_capturing:CompileableContextVar.get" in walked["llama"]


def test_a_setter_method_stores_what_the_class_passes_it(walked):
    """diffusers models/attention_processor.py: Attention.__init__ picks `processor = AttnProcessor2_0() if
    hasattr(F, "scaled_dot_product_attention") and self.scale_qk else AttnProcessor()` and calls
    `self.set_processor(processor)`, whose `self.processor = processor` (line 553) is annotated with the base
    "AttnProcessor"; Attention.forward's `self.processor(self, ...)` (line 607) runs what was passed --
    AttnProcessor2_0.__call__, which Dynamo traced in SD3's joint attention blocks."""
    assert "diffusers.models.attention_processor:AttnProcessor2_0.__call__" in walked["sd3"]


def test_self_passed_to_a_plain_function_is_that_instance(walked):
    """integrations/moe.py: the experts wrapper's `experts_forward(self, *args, **kwargs)` calls
    grouped_mm_experts_forward (a module-level function whose first parameter is `self`), which calls
    `self._apply_gate(...)` (line 501): the `_default_apply_gate` the class decorator stored on MixtralExperts."""
    assert "transformers.integrations.moe:_default_apply_gate" in walked["mixtral"]


def test_a_parameter_reassigned_in_the_body_holds_what_it_assigns(walked):
    """diffusers models/transformers/transformer_flux.py:335-337, FluxAttention.__init__(..., processor=None):
    `if processor is None: processor = self._default_processor_cls()` (FluxAttnProcessor), then
    `self.set_processor(processor)`; FluxAttention.forward's `self.processor(self, ...)` (line 355) runs
    FluxAttnProcessor.__call__, and through it dispatch_attention_fn (line 121), which Dynamo traced."""
    assert "diffusers.models.transformers.transformer_flux:FluxAttnProcessor.__call__" in walked["flux"]
    assert "diffusers.models.attention_dispatch:dispatch_attention_fn" in walked["flux"]


def test_what_a_function_appends_to_a_local_list_is_in_it(walked):
    """diffusers models/unets/unet_2d_blocks.py:1173-1223, CrossAttnDownBlock2D.__init__: `attentions = []`,
    `attentions.append(Transformer2DModel(...))` in a loop, `self.attentions = nn.ModuleList(attentions)`;
    forward's `for i, (resnet, attn) in enumerate(zip(self.resnets, self.attentions))` calls `attn(...)`
    (line 1270): Transformer2DModel.forward, and through it BasicTransformerBlock.forward, which Dynamo
    traced."""
    assert "diffusers.models.transformers.transformer_2d:Transformer2DModel.forward" in walked["unet2d_condition"]
    assert "diffusers.models.attention:BasicTransformerBlock.forward" in walked["unet2d_condition"]


def test_an_init_parameter_holds_what_the_constructions_pass_it(walked):
    """diffusers models/transformers/transformer_sd3.py:49-56, SD3SingleTransformerBlock.__init__:
    `self.attn = Attention(..., processor=JointAttnProcessor2_0())`; Attention.__init__'s `processor:
    "AttnProcessor" | None` goes to `self.set_processor(processor)` (models/attention_processor.py:309), and
    Attention.forward's `self.processor(self, ...)` (line 607) runs JointAttnProcessor2_0.__call__, which
    Dynamo traced -- not an AttnProcessor, the parameter's declared type."""
    assert "diffusers.models.attention_processor:JointAttnProcessor2_0.__call__" in walked["sd3"]


def test_an_autograd_functions_apply_runs_its_forward_and_backward(walked):
    """models/bloom/modeling_bloom.py:141-164: `class GeLUFunction(torch.autograd.Function)` with static
    `forward(ctx, input)` (calls bloom_gelu_forward) and `backward(ctx, grad_output)` (calls bloom_gelu_back);
    BloomGelu.forward returns `GeLUFunction.apply(x)` (line 164).  torch's `apply` runs the class's forward,
    and Dynamo traced both methods (it speculates the backward while tracing the call)."""
    for fn in ("GeLUFunction.forward", "bloom_gelu_forward", "GeLUFunction.backward", "bloom_gelu_back"):
        assert f"transformers.models.bloom.modeling_bloom:{fn}" in walked["bloom"], fn
