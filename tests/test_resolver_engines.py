"""Issue [C] on the inference engines' own code (PyPI sources; nothing is imported).

vLLM 0.33.0: registries keyed by dotted-path strings.  vLLM resolves classes from
strings everywhere (``vllm/utils/import_utils.py: resolve_obj_by_qualname`` = ``rsplit``,
``importlib.import_module``, ``getattr``), and its ``current_platform`` is made on first access by the package's
PEP 562 ``__getattr__`` (``vllm/platforms/__init__.py``) from the dotted path of the detected platform
(``resolve_current_platform_cls_qualname``: one of the built-in plugins, decided at run time).  The LoRA
punica wrapper is chosen through both: ``vllm/lora/punica_wrapper/punica_selector.py: get_punica_wrapper``
calls ``current_platform.get_punica_wrapper()`` -- a constant dotted path per platform -- and resolves it.

Which platform runs is the deployment's: each wrapper is one of the call's alternatives (a condition), and
``--assume current_platform=NvmlCudaPlatform`` (vllm/platforms/cuda.py's class for an NVML machine) picks the
GPU's.

sglang 0.5.9: functions defined in both branches of a module-level ``if`` (``sglang/srt/layers/quantization/
fp8_kernel.py``: ``scaled_fp8_quant`` under ``if _is_hip:`` at line 1575, a native-PyTorch fallback, and under
``else:`` at line 1625, the CUDA kernels' wrapper).  Both are kept, each one of the call's alternatives named by
its branch; ``--target-arch`` decides ``_is_hip`` and leaves the CUDA one."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from compile_lint.engine import ScanOptions, scan
from compile_lint.program.facts import parse_assumption

pytestmark = pytest.mark.realworld

USER_CODE = '''
import torch
from vllm.lora.punica_wrapper.punica_selector import get_punica_wrapper


class LoRAStep(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.punica = get_punica_wrapper(256, 4, device="cuda")

    def forward(self, y, x, lora_a, lora_b):
        return self.punica.add_lora_linear(y, x, lora_a, lora_b, 1.0, (8,))


step = torch.compile(LoRAStep(), fullgraph=True)
'''
WRAPPERS = {"PunicaWrapperGPU.add_lora_linear", "PunicaWrapperCPU.add_lora_linear",
            "PunicaWrapperXPU.add_lora_linear"}


@pytest.fixture(scope="module")
def vllm_scan(tmp_path_factory):
    from realworld.pypi_fixtures import FixtureUnavailable, fetch

    try:
        site = fetch("vllm", "0.33.0")
    except FixtureUnavailable as e:
        pytest.skip(f"vllm 0.33.0 unavailable: {e}")
    work = tmp_path_factory.mktemp("vllm-user")
    (work / "user_lora.py").write_text(textwrap.dedent(USER_CODE))
    cache = tmp_path_factory.mktemp("summaries")

    def run(*facts: str):
        return scan(ScanOptions(paths=[work / "user_lora.py"], search_path=[site], use_environment=False,
                                cache_dir=cache, assume=[parse_assumption(f) for f in facts]))
    return run


def _entered(result) -> set:
    """The second frame of each finding's path: the wrapper method the compiled forward entered."""
    return {f.trace[1].qualname for f in result.findings if len(f.trace) > 1}


def test_the_platforms_dotted_paths_name_the_wrappers_each_a_condition(vllm_scan):
    result = vllm_scan()
    assert "PunicaWrapperGPU.add_lora_linear" in _entered(result) <= WRAPPERS
    gpu = [f for f in result.findings if f.trace[1:2] and f.trace[1].qualname == "PunicaWrapperGPU.add_lora_linear"
           and f.severity != "note"]
    assert gpu
    for f in gpu:  # which platform vLLM detects is the deployment's: never certain
        assert f.severity == "warning"
        assert "`self.punica.add_lora_linear` is PunicaWrapperGPU.add_lora_linear (one of 3)" in \
            [c.text for c in f.conditions], f.conditions


def test_assuming_the_platform_picks_its_wrapper(vllm_scan):
    result = vllm_scan("current_platform=NvmlCudaPlatform")
    assert _entered(result) == {"PunicaWrapperGPU.add_lora_linear"}
    assert not any("one of 3" in c.text for f in result.findings for c in f.conditions)
    assert any("chose NvmlCudaPlatform" in line for line in result.stats["facts"]), result.stats["facts"]


FP8_USER_CODE = """
import torch
from sglang.srt.layers.quantization.fp8_kernel import scaled_fp8_quant


@torch.compile(fullgraph=True)
def quantize(x):
    return scaled_fp8_quant(x)
"""


@pytest.fixture(scope="module")
def fp8_scan(tmp_path_factory):
    from realworld.pypi_fixtures import FixtureUnavailable, site_root

    try:
        site = site_root("seed")
    except FixtureUnavailable as e:
        pytest.skip(f"sglang 0.5.9 unavailable: {e}")
    work = tmp_path_factory.mktemp("fp8-user")
    (work / "user_fp8.py").write_text(textwrap.dedent(FP8_USER_CODE))
    cache = tmp_path_factory.mktemp("summaries")

    def run(**kw):
        from compile_lint.graph import build_graph

        options = ScanOptions(paths=[work / "user_fp8.py"], search_path=[site], use_environment=False,
                              cache_dir=cache, **kw)
        return scan(options), build_graph(options)
    return run


def test_a_function_defined_in_both_branches_keeps_both(fp8_scan):
    result, graph = fp8_scan()
    assert sorted(graph["user_fp8.quantize"]) == [
        "sglang.srt.layers.quantization.fp8_kernel.scaled_fp8_quant",
        "sglang.srt.layers.quantization.fp8_kernel.scaled_fp8_quant@1625"]
    # the CUDA branch's kernels are registered ops (sglang.jit_kernel's @register_custom_op(...)): nothing of
    # theirs is traced; the hand-made test (test_resolver_patterns) holds the condition's wording
    assert not [f for f in result.findings if f.severity == "error"]


def test_the_target_arch_decides_the_branch(fp8_scan):
    result, graph = fp8_scan(target_arch="sm90")
    assert graph["user_fp8.quantize"] == ["sglang.srt.layers.quantization.fp8_kernel.scaled_fp8_quant@1625"]
    assert not any("one of 2" in c.text for f in result.findings for c in f.conditions)


def test_a_function_that_compiles_its_parameter_compiles_what_its_callers_pass(tmp_path_factory):
    """vLLM 0.33.0 ``vllm/model_executor/custom_op.py``: ``CustomOp.maybe_compile(self, fn)`` returns
    ``torch.compile(fn, ...)`` (lines 237 and 261), and ``CustomOp.dispatch_forward`` calls it as
    ``self.maybe_compile(self.forward_native, enable=compile_native)``: the regions compile the ops'
    ``forward_native`` (RMSNorm's among them), not an unknown parameter."""
    from realworld.pypi_fixtures import FixtureUnavailable, fetch

    try:
        site = fetch("vllm", "0.33.0")
    except FixtureUnavailable as e:
        pytest.skip(f"vllm 0.33.0 unavailable: {e}")
    result = scan(ScanOptions(paths=[site / "vllm/model_executor/custom_op.py"], search_path=[site],
                              use_environment=False, cache_dir=tmp_path_factory.mktemp("summaries")))
    assert result.coverage.unresolved == [], result.coverage.unresolved
    by_line = {r.line: {fid for fid, _ in r.entries} for r in result.regions}
    assert sorted(by_line) == [237, 261]
    for line in (237, 261):
        assert "vllm.model_executor.layers.layernorm:RMSNorm.forward_native" in by_line[line]


def _program(site):
    from compile_lint.cache import SummaryCache
    from compile_lint.engine import SummaryLoader
    from compile_lint.program import ModuleLocator, Program

    return Program(ModuleLocator({}, [str(site)]), SummaryLoader(SummaryCache(None)))


def test_an_attribute_set_on_the_instance_new_makes_is_an_instance_attribute():
    """vLLM 0.33.0 ``vllm/model_executor/models/interfaces.py: SupportsQuant.__new__``: ``instance =
    super().__new__(cls)`` then ``instance.quant_config = cls._find_quant_config(*args, **kwargs)``: every model
    that mixes SupportsQuant in holds that value, besides the class attribute's ``None``."""
    from realworld.pypi_fixtures import FixtureUnavailable, fetch

    try:
        site = fetch("vllm", "0.33.0")
    except FixtureUnavailable as e:
        pytest.skip(f"vllm 0.33.0 unavailable: {e}")
    c = _program(site).klass("vllm.model_executor.models.interfaces:SupportsQuant")
    assert [(where, value[1][2]) for value, where in c.self_attrs["quant_config"]] == \
        [("SupportsQuant.__new__", "_find_quant_config")]


def test_setattr_with_a_constant_name_on_self_is_an_instance_attribute():
    """transformers 5.24.0 ``models/esm/modeling_esm.py: EsmRotaryEmbedding.__init__`` line 119:
    ``setattr(self, "attention_scaling", curr_attention_scaling)`` is ``self.attention_scaling = ...``."""
    from realcode.env import EnvUnavailable, env_root

    try:
        site = env_root()
    except EnvUnavailable as e:
        pytest.skip(f"the pinned transformers environment is not available: {e}")
    c = _program(site).klass("transformers.models.esm.modeling_esm:EsmRotaryEmbedding")
    assert [(where, value) for value, where in c.self_attrs["attention_scaling"]] == \
        [("EsmRotaryEmbedding.__init__", ("name", "curr_attention_scaling"))]


def test_vllm_linear_layers_do_not_dispatch_to_fused_moe_methods(tmp_path_factory):
    """Issue [C]'s acceptance, on the model the evidence names (tests/test_realworld.py holds it for
    Qwen2MoeSparseMoeBlock): vllm 0.33.0 reports no path from a linear layer into a fused-MoE method
    (``../shared/evidence/realcode-2026-12-01.md`` section 4: ``CohereEagleModel.forward -> ReplicatedLinear.forward
    -> FusedMoEModularMethod.apply``).  ``vllm/model_executor/layers/linear.py:290`` declares
    ``self.quant_method: QuantizeMethodBase`` and assigns ``UnquantizedLinearMethod()`` or what
    ``resolve_quant_method(quant_config, self, prefix)`` returns: the configs' ``get_quant_method`` narrow on the
    layer with ``isinstance``, ``issubclass(layer_type, LinearBase)`` (QuarkConfig.get_quant_method_target),
    ``method_cls is UnquantizedFusedMoEMethod`` and ``assert isinstance(layer, RoutedExperts)`` (auto_gptq), and the
    declared type is only a fallback for what the assignments do not say."""
    from realworld.pypi_fixtures import FixtureUnavailable, fetch, site_root

    try:
        vllm_site, fi_site = fetch("vllm", "0.33.0"), site_root("current")
    except FixtureUnavailable as e:
        pytest.skip(f"vllm 0.33.0 / flashinfer 0.7.2.post1 unavailable: {e}")
    result = scan(ScanOptions(paths=[vllm_site / "vllm/model_executor/models/cohere_eagle.py"],
                              search_path=[vllm_site, fi_site], use_environment=False,
                              cache_dir=tmp_path_factory.mktemp("summaries")))
    assert result.findings
    linear_into_moe = []
    for f in result.findings:
        names = [fr.qualname for fr in f.trace]
        for a, b in zip(names, names[1:]):
            if a.split(".")[0].endswith("Linear") and a.endswith(".forward") and "MoE" in b:
                linear_into_moe.append(names)
    assert linear_into_moe == [], linear_into_moe[:3]


def test_typing_cast_is_its_second_argument():
    """vLLM 0.33.0 ``vllm/model_executor/warmup/jit_warmup_tilelang_helper.py:128``, in
    ``VllmTileLangJitKernel.compile``: ``cast(Callable[..., Any], self)(**self.warmup_inputs(compile_key))`` calls
    the kernel itself -- its ``__call__``, which ``@kernel_launcher`` wraps."""
    from realworld.pypi_fixtures import FixtureUnavailable, fetch

    try:
        site = fetch("vllm", "0.33.0")
    except FixtureUnavailable as e:
        pytest.skip(f"vllm 0.33.0 unavailable: {e}")
    from compile_lint.graph import build_graph

    graph = build_graph(ScanOptions(paths=[site / "vllm/model_executor/warmup/jit_warmup_tilelang_helper.py"],
                                    search_path=[site], use_environment=False, cache_dir=None), everything=True)
    callees = graph["vllm.model_executor.warmup.jit_warmup_tilelang_helper.VllmTileLangJitKernel.compile"]
    assert "vllm.model_executor.warmup.jit_warmup_tilelang_helper.kernel_launcher.wrapper" in callees, callees
