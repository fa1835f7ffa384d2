"""Issue [C]: Python patterns real libraries use, each a general mechanism of the resolver (the real-code
suite, tests/realcode/, measures them on transformers and diffusers)."""
import textwrap


def _scan(run_scan, tmp_path, source: str):
    (tmp_path / "m.py").write_text(textwrap.dedent(source))
    return run_scan(tmp_path / "m.py")


def test_a_forward_wrapped_in_a_base_init_subclass_runs_the_wrapper_and_the_method(run_scan, tmp_path):
    """transformers 5.24's GradientCheckpointingLayer.__init_subclass__ sets `cls.forward` to a wrapper
    that calls the subclass's own forward (its closure `forward = cls.forward`); LlamaDecoderLayer and every
    decoder layer are reached only through it."""
    result = _scan(run_scan, tmp_path, '''
        import functools, logging, os, torch

        logger = logging.getLogger(__name__)

        class Checkpointing(torch.nn.Module):
            def __init_subclass__(cls, **kwargs):
                super().__init_subclass__(**kwargs)
                forward = cls.forward

                @functools.wraps(forward)
                def forward_with_checkpointing(self, *args, **kwargs):
                    if self.training:
                        logger.warning("checkpointing")
                    return forward(self, *args, **kwargs)

                cls.forward = forward_with_checkpointing

        class Layer(Checkpointing):
            def forward(self, x):
                os.path.exists("/x")
                return x

        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.layer = Layer()

            def forward(self, x):
                return self.layer(x)

        m = torch.compile(M(), fullgraph=True)
        ''')
    got = {f.callee: f for f in result.findings if f.severity != "note"}
    assert got["os.path.exists"].severity == "error"
    assert [fr.qualname for fr in got["os.path.exists"].trace] == ["M.forward", "Layer.forward"]
    warn = got["logging.Logger.warning"]
    assert warn.severity == "warning" and warn.conditions[0].text == "self.training"


def test_the_wrapper_a_decorator_puts_around_the_compiled_forward_is_traced(run_scan, tmp_path):
    """transformers' `@merge_with_config_defaults` wraps a model's forward; compiling the model traces the
    wrapper first (its `logger.warning_once` stopped Dynamo under gradient checkpointing on real models)."""
    result = _scan(run_scan, tmp_path, '''
        import functools, logging, torch

        logger = logging.getLogger(__name__)

        def merge_with_config_defaults(func):
            @functools.wraps(func)
            def wrapper(self, *args, **kwargs):
                if self.training:
                    logger.warning("use_cache=True is incompatible with gradient checkpointing")
                return func(self, *args, **kwargs)
            return wrapper

        class M(torch.nn.Module):
            @merge_with_config_defaults
            def forward(self, x):
                return x

        m = torch.compile(M(), fullgraph=True)
        ''')
    (f,) = [f for f in result.findings if f.severity != "note"]
    assert f.callee == "logging.Logger.warning" and f.conditions[0].text == "self.training"
    assert f.trace[-1].qualname == "merge_with_config_defaults.<locals>.wrapper"


def test_a_parameter_reassigned_in_the_body_has_the_assigned_value_too(run_scan, tmp_path):
    """FlashInfer 0.7.2.post1's `single_prefill_with_kv_cache(..., backend="auto")` does
    `if backend == "auto": backend = determine_attention_backend(...)` and dispatches on the result; with
    the parameter bound to the constant passed ("auto"), the reassignment was lost and the dispatch looked
    dead (`if backend == "auto": raise`), hiding the module generator's template `open`."""
    result = _scan(run_scan, tmp_path, '''
        import torch

        def determine(x):
            return "fa2" if x.is_cuda else "fa3"

        def gen(backend):
            if backend == "auto":
                raise ValueError("backend should not be auto here")
            with open("/tmp/template.jinja") as f:
                return f.read()

        def api(x, backend="auto"):
            if backend == "auto":
                backend = determine(x)
            gen(backend)
            return x

        @torch.compile(fullgraph=True)
        def run(x):
            return api(x)
        ''')
    got = [f for f in result.findings if f.callee == "builtins.open"]
    assert got and got[0].line == 10, [(f.callee, f.line) for f in result.findings]


def test_the_dunders_python_calls_without_a_call_expression_are_walked(run_scan, tmp_path):
    """lint/implicit.py, each as transformers 5.24 uses it (tests/test_resolver_realcode.py holds them on the
    real code): a config's __getattribute__ on a read, a registry's __getitem__ (and what it returns), a
    dataclass's __post_init__, a property whose setter is defined after it."""
    result = _scan(run_scan, tmp_path, '''
        import dataclasses, os, subprocess, torch

        class Config:
            def __getattribute__(self, key):
                os.path.exists("/getattribute")
                return super().__getattribute__(key)

            @property
            def impl(self):
                os.path.isdir("/getter")
                return "sdpa"

            @impl.setter
            def impl(self, value):
                subprocess.run(["setter"])

        class Registry:
            _mapping = {"sdpa": lambda x: x}

            def __getitem__(self, key):
                os.listdir("/getitem")
                return self._mapping[key]

        REGISTRY = Registry()

        @dataclasses.dataclass
        class Output:
            value: object = None

            def __post_init__(self):
                os.getcwd()

        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.config = Config()

            def forward(self, x):
                fn = REGISTRY[self.config.impl]
                return Output(fn(x))

        m = torch.compile(M(), fullgraph=True)
        ''')
    got = {f.callee: f for f in result.findings if f.severity != "note"}
    for callee, fn in (("os.path.exists", "Config.__getattribute__"), ("os.path.isdir", "Config.impl"),
                       ("os.listdir", "Registry.__getitem__"), ("os.getcwd", "Output.__post_init__")):
        assert callee in got, (callee, sorted(got))
        assert got[callee].severity == "error" and got[callee].trace[-1].qualname == fn
    assert "subprocess.run" not in got  # a read runs the getter, not the setter


def test_self_in_a_method_wrapper_is_the_wrapped_methods_instance(run_scan, tmp_path):
    """A decorator's `def wrapper(self, *args, **kwargs)` around a method (transformers' @capture_outputs
    on `forward`) is walked with the method's class: `self.config` in it is the instance's attribute."""
    result = _scan(run_scan, tmp_path, '''
        import functools, os
        import torch

        class Config:
            def probe(self):
                return os.path.exists("/dev/nvidia0")

        def capture(func):
            @functools.wraps(func)
            def wrapper(self, *args, **kwargs):
                self.config.probe()
                return func(self, *args, **kwargs)
            return wrapper

        class Model(torch.nn.Module):
            def __init__(self, config: Config):
                super().__init__()
                self.config = config

            @capture
            def forward(self, x):
                return x * 2

        m = torch.compile(Model(Config()), fullgraph=True)
    ''')
    hits = [f for f in result.findings if f.callee == "os.path.exists"]
    assert hits and [fr.qualname for fr in hits[0].trace][-2:] == ["capture.<locals>.wrapper", "Config.probe"], \
        [(f.callee, [fr.qualname for fr in f.trace]) for f in result.findings]


def test_a_closure_calls_the_functions_its_varargs_closed_over(run_scan, tmp_path):
    """transformers' `and_masks(*mask_functions)`: the returned closure iterates the tuple of functions it
    was given; a parameter reassigned to such a closure keeps the function it was bound to as well."""
    result = _scan(run_scan, tmp_path, '''
        import os
        import torch

        def and_masks(*mask_functions):
            def and_mask(b, q):
                for mask in mask_functions:
                    q = mask(b, q)
                return q
            return and_mask

        def causal(b, q):
            os.path.exists("/causal")
            return q

        def padding_fn(pad):
            def inner_mask(b, q):
                os.path.exists("/padding")
                return q
            return inner_mask

        def sdpa_mask(q, mask_function=causal, pad=None):
            if pad is not None:
                mask_function = and_masks(mask_function, padding_fn(pad))
            return mask_function(0, q)

        def f(q, pad):
            return sdpa_mask(q, pad=pad)

        g = torch.compile(f, fullgraph=True)
    ''')
    ends = {f.trace[-1].qualname for f in result.findings if f.callee == "os.path.exists"}
    assert ends == {"causal", "padding_fn.<locals>.inner_mask"}, ends


def test_a_class_decorator_that_stores_forward_on_the_class_replaces_it(run_scan, tmp_path):
    """transformers' `@use_experts_implementation`: the decorator assigns `experts_class.forward = forward`
    (a wrapper it defines) and returns the class; calling an instance runs the wrapper."""
    result = _scan(run_scan, tmp_path, '''
        import os
        import torch

        def use_impl(experts_class):
            original_forward = experts_class.forward

            def forward(self, *args, **kwargs):
                os.path.exists("/impl")
                return original_forward(self, *args, **kwargs)

            experts_class.forward = forward
            return experts_class

        @use_impl
        class Experts(torch.nn.Module):
            def forward(self, x):
                return x * 2

        class Block(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.experts = Experts()

            def forward(self, x):
                return self.experts(x)

        m = torch.compile(Block(), fullgraph=True)
    ''')
    ends = [[fr.qualname for fr in f.trace][-2:] for f in result.findings if f.callee == "os.path.exists"]
    assert ends == [["Block.forward", "use_impl.<locals>.forward"]], ends


def test_a_lazy_package_serves_what_it_imports_for_type_checkers(run_scan, tmp_path):
    """The lazy-module idiom (transformers.integrations, diffusers): `if TYPE_CHECKING: from .moe import
    helper` / `else: sys.modules[__name__] = _LazyModule(...)`; `from pkg import helper` is that function."""
    pkg = tmp_path / "lazypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent('''
        import sys
        from typing import TYPE_CHECKING

        _import_structure = {"moe": ["helper"]}
        if TYPE_CHECKING:
            from .moe import helper
        else:
            sys.modules[__name__] = object()  # stands for transformers' _LazyModule(__name__, ...)
    '''))
    (pkg / "moe.py").write_text("import os\n\n\ndef helper(x):\n    os.path.exists('/lazy')\n    return x\n")
    result = _scan(run_scan, tmp_path, '''
        import torch
        from lazypkg import helper

        def f(x):
            return helper(x)

        g = torch.compile(f, fullgraph=True)
    ''')
    assert [f.trace[-1].qualname for f in result.findings if f.callee == "os.path.exists"] == ["helper"]


def test_a_forward_hook_the_models_method_registers_is_walked_under_its_condition(run_scan, tmp_path):
    """transformers' enable_input_require_grads: a method registers a forward hook on a submodule before the
    model is compiled; the compiled forward runs it.  Whether the method ran is not in the code: a warning
    that names it."""
    result = _scan(run_scan, tmp_path, '''
        import os
        import torch

        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = torch.nn.Embedding(10, 4)

            def enable_input_require_grads(self):
                def make_inputs_require_grads(module, input, output):
                    os.path.exists("/hook")
                    output.requires_grad_(True)
                self.embed.register_forward_hook(make_inputs_require_grads)

            def forward(self, ids):
                return self.embed(ids)

        m = torch.compile(Model(), fullgraph=True)
    ''')
    (hit,) = [f for f in result.findings if f.callee == "os.path.exists"]
    assert hit.severity == "warning"
    assert [c.text for c in hit.conditions] == [
        "`Model.enable_input_require_grads` registered it as a module hook before compiling"]


def test_a_hook_registered_while_tracing_is_walked_under_its_condition(run_scan, tmp_path):
    """transformers' output capturing: the traced code registers a forward hook on a submodule; the hook
    runs when that module is called afterwards."""
    result = _scan(run_scan, tmp_path, '''
        import os
        import torch

        def install(module):
            def capture(mod, args, output):
                os.path.exists("/capture")
            module.register_forward_hook(capture)

        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.layer = torch.nn.Linear(4, 4)

            def forward(self, x):
                install(self.layer)
                return self.layer(x)

        m = torch.compile(Model(), fullgraph=True)
    ''')
    (hit,) = [f for f in result.findings if f.callee == "os.path.exists"]
    assert hit.severity == "warning" and hit.trace[-1].qualname == "install.<locals>.capture"
    assert [c.text for c in hit.conditions] == ["the module that `m.install` hooks is called after the hook is "
                                                "registered"]


def test_a_setter_stores_the_arguments_the_class_passes_it(run_scan, tmp_path):
    """diffusers' Attention.set_processor: `self.processor = processor` with `processor: "Base"`; the class's
    own `self.set_processor(Fast() if ok else Base())` says which objects it holds."""
    result = _scan(run_scan, tmp_path, '''
        import os
        import torch

        class Base:
            def __call__(self, x):
                return x

        class Fast(Base):
            def __call__(self, x):
                os.path.exists("/fast")
                return x

        class Attention(torch.nn.Module):
            def __init__(self, ok=True):
                super().__init__()
                processor = Fast() if ok else Base()
                self.set_processor(processor)

            def set_processor(self, processor: "Base") -> None:
                self.processor = processor

            def forward(self, x):
                return self.processor(x)

        m = torch.compile(Attention(), fullgraph=True)
    ''')
    assert [f.trace[-1].qualname for f in result.findings if f.callee == "os.path.exists"] == ["Fast.__call__"]


def test_a_plain_function_called_with_an_instance_as_self_reads_its_members(run_scan, tmp_path):
    """transformers' experts implementations are module functions `def grouped_mm(self, x)` called as
    `impl(self, x)` from a method: `self.gate(...)` in them is the instance's."""
    result = _scan(run_scan, tmp_path, '''
        import os
        import torch

        def grouped_mm(self, x):
            return self.gate(x)

        class Experts(torch.nn.Module):
            def gate(self, x):
                os.path.exists("/gate")
                return x

            def forward(self, x):
                return grouped_mm(self, x)

        m = torch.compile(Experts(), fullgraph=True)
    ''')
    assert [f.trace[-1].qualname for f in result.findings if f.callee == "os.path.exists"] == ["Experts.gate"]


def test_a_parameter_known_only_by_its_name_holds_what_the_body_assigns_it(run_scan, tmp_path):
    """diffusers' FluxAttention.__init__(..., processor=None): `if processor is None: processor =
    self._default_processor_cls()`, then `self.set_processor(processor)`.  Whatever the caller passed, the
    parameter may hold what the body assigns it: the default processor class's instance."""
    result = _scan(run_scan, tmp_path, '''
        import os
        import torch

        class Processor:
            def __call__(self, x):
                os.path.exists("/processor")
                return x

        class Attention(torch.nn.Module):
            _default_processor_cls = Processor

            def __init__(self, processor=None):
                super().__init__()
                if processor is None:
                    processor = self._default_processor_cls()
                self.processor = processor

            def forward(self, x):
                return self.processor(x)

        m = torch.compile(Attention(), fullgraph=True)
    ''')
    assert [f.trace[-1].qualname for f in result.findings if f.callee == "os.path.exists"] == ["Processor.__call__"]


def test_what_a_function_appends_to_a_local_list_is_in_it(run_scan, tmp_path):
    """diffusers' down blocks build `attentions = []`, append a block per layer in a loop, and keep
    `nn.ModuleList(attentions)`; forward zips it with the resnets and calls each."""
    result = _scan(run_scan, tmp_path, '''
        import os
        import torch

        class Block(torch.nn.Module):
            def forward(self, x):
                os.path.exists("/block")
                return x

        class Down(torch.nn.Module):
            def __init__(self, n=2):
                super().__init__()
                blocks = []
                for _ in range(n):
                    blocks.append(Block())
                self.blocks = torch.nn.ModuleList(blocks)

            def forward(self, x):
                for i, block in enumerate(self.blocks):
                    x = block(x)
                return x

        m = torch.compile(Down(), fullgraph=True)
    ''')
    assert [f.trace[-1].qualname for f in result.findings if f.callee == "os.path.exists"] == ["Block.forward"]


def test_an_init_parameter_holds_what_the_constructions_pass_it(run_scan, tmp_path):
    """diffusers' SD3 block builds `Attention(..., processor=JointAttnProcessor2_0())`; Attention.__init__'s
    `processor: "AttnProcessor" | None` goes to `self.set_processor(processor)`, and forward calls
    `self.processor(...)`: the object the construction passed, whatever the parameter's declared type."""
    result = _scan(run_scan, tmp_path, '''
        import os
        import torch

        class Base:
            def __call__(self, x):
                return x

        class Joint:
            def __call__(self, x):
                os.path.exists("/joint")
                return x

        class Attention(torch.nn.Module):
            def __init__(self, dim, processor: "Base" = None):
                super().__init__()
                self.set_processor(processor)

            def set_processor(self, processor: "Base") -> None:
                self.processor = processor

            def forward(self, x):
                return self.processor(x)

        class Block(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.attn = Attention(4, processor=Joint())

            def forward(self, x):
                return self.attn(x)

        m = torch.compile(Block(), fullgraph=True)
    ''')
    assert [f.trace[-1].qualname for f in result.findings if f.callee == "os.path.exists"] == ["Joint.__call__"]


def test_an_autograd_functions_apply_runs_its_forward_and_backward(run_scan, tmp_path):
    """transformers' Bloom: `GeLUFunction.apply(x)` on a `torch.autograd.Function` subclass runs its static
    `forward(ctx, x)`, and Dynamo traces its `backward` too."""
    result = _scan(run_scan, tmp_path, '''
        import os
        import torch

        class Gelu(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                os.path.exists("/forward")
                return x

            @staticmethod
            def backward(ctx, g):
                os.path.isfile("/backward")
                return g

        @torch.compile(fullgraph=True)
        def run(x):
            return Gelu.apply(x)
    ''')
    got = {f.callee: f.trace[-1].qualname for f in result.findings if f.callee.startswith("os.path.")}
    assert got == {"os.path.exists": "Gelu.forward", "os.path.isfile": "Gelu.backward"}, got


def test_an_op_registration_factory_called_with_keywords_registers_an_op(run_scan, tmp_path):
    """sglang's `@register_custom_op(fake_impl=...)` (modelopt_quant.py's fp4_gemm): the factory called with
    keywords only returns a decorator that registers the function as an op, as `@register_custom_op` does; its
    source (an eager wrapper that calls the function) is not what Dynamo meets -- the op is."""
    pkg = tmp_path / "sglang" / "srt" / "utils"
    pkg.mkdir(parents=True)
    for d in (tmp_path / "sglang", tmp_path / "sglang" / "srt", pkg):
        (d / "__init__.py").write_text("")
    (pkg / "custom_op.py").write_text(textwrap.dedent('''
        def register_custom_op(fn=None, *, op_name=None, **extra_kwargs):
            def decorator(op_func):
                def real_impl(*args, **kwargs):
                    return op_func(*args, **kwargs)
                return real_impl
            if fn is not None:
                return decorator(fn)
            return decorator
    '''))
    (tmp_path / "m.py").write_text(textwrap.dedent('''
        import os
        import torch
        from sglang.srt.utils.custom_op import register_custom_op

        def _fake(x):
            return x

        @register_custom_op(fake_impl=_fake)
        def gemm(x):
            os.path.exists("/kernel")
            return x

        @torch.compile(fullgraph=True)
        def run(x):
            return gemm(x)
    '''))
    result = run_scan(tmp_path / "m.py", search_path=[tmp_path])
    assert not [f for f in result.findings if f.callee == "os.path.exists"], \
        [(f.callee, [fr.qualname for fr in f.trace]) for f in result.findings]


def test_a_declared_attribute_type_is_a_fallback_for_what_is_assigned(run_scan, tmp_path):
    """vLLM's LinearBase.__init__: `self.quant_method: QuantizeMethodBase` then `self.quant_method =
    UnquantizedLinearMethod()`; the declaration assigns nothing, so the abstract base's `apply` does not
    dispatch to every subclass (the fused-MoE methods among them)."""
    result = _scan(run_scan, tmp_path, '''
        import abc
        import os
        import torch

        class Method(abc.ABC):
            @abc.abstractmethod
            def apply(self, x): ...

        class LinearMethod(Method):
            def apply(self, x):
                os.path.isfile("/linear")
                return x

        class MoEMethod(Method):
            def apply(self, x):
                os.path.exists("/moe")
                return x

        class Linear(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.method: Method
                self.method = LinearMethod()

            def forward(self, x):
                return self.method.apply(x)

        m = torch.compile(Linear(), fullgraph=True)
    ''')
    got = {f.callee: f.trace[-1].qualname for f in result.findings if f.callee.startswith("os.path.")}
    assert got == {"os.path.isfile": "LinearMethod.apply"}, got


def test_issubclass_and_is_on_known_classes_are_decided(run_scan, tmp_path):
    """vLLM's Quark config: `method_cls = self.target(type(layer))`, which returns a class after
    `issubclass(layer_type, Experts)` checks, then `if method_cls is MoEMethod: return MoEMethod()`.  With
    the layer's class known, both tests are decided: a linear layer never gets the MoE method."""
    result = _scan(run_scan, tmp_path, '''
        import os
        import torch

        class Experts(torch.nn.Module):
            pass

        class LinearMethod:
            def apply(self, x):
                os.path.isfile("/linear")
                return x

        class MoEMethod:
            def apply(self, x):
                os.path.exists("/moe")
                return x

        class Config:
            def target(self, layer_type):
                if issubclass(layer_type, Experts):
                    return MoEMethod
                return LinearMethod

            def get_method(self, layer):
                method_cls = self.target(type(layer))
                if method_cls is MoEMethod:
                    return MoEMethod()
                if method_cls is not None and issubclass(method_cls, LinearMethod):
                    return LinearMethod()
                return None

        class Linear(torch.nn.Module):
            def __init__(self, config: Config):
                super().__init__()
                self.method = config.get_method(self)

            def forward(self, x):
                return self.method.apply(x)

        m = torch.compile(Linear(Config()), fullgraph=True)
    ''')
    got = {f.callee: f.trace[-1].qualname for f in result.findings if f.callee.startswith("os.path.")}
    assert got == {"os.path.isfile": "LinearMethod.apply"}, got


def _write(tmp_path, files: dict):
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))


_REGISTRY_PKG = {
    "pkg/__init__.py": "",
    "pkg/util.py": '''
        import importlib

        def resolve_obj_by_qualname(qualname):
            module_name, obj_name = qualname.rsplit(".", 1)
            module = importlib.import_module(module_name)
            return getattr(module, obj_name)
    ''',
    "pkg/impl.py": '''
        import os

        class FastImpl:
            def forward(self, x):
                os.path.exists("/fast")
                return x

        class SlowImpl:
            def forward(self, x):
                return x
    ''',
}


def test_a_class_named_by_a_constant_dotted_path_is_that_class(run_scan, tmp_path):
    """vLLM's resolve_obj_by_qualname: `qualname.rsplit(".", 1)` folds on a constant, `importlib.import_module`
    of a constant name is that module, `getattr(module, name)` its member: the region calls FastImpl.forward."""
    _write(tmp_path, {**_REGISTRY_PKG, "pkg/model.py": '''
        import torch
        from pkg.util import resolve_obj_by_qualname

        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.impl = resolve_obj_by_qualname("pkg.impl.FastImpl")()

            def forward(self, x):
                return self.impl.forward(x)

        m = torch.compile(M(), fullgraph=True)
    '''})
    result = run_scan(tmp_path / "pkg")
    hits = [f for f in result.findings if f.callee == "os.path.exists"]
    assert [(f.trace[-1].qualname, f.severity, f.conditions) for f in hits] == [("FastImpl.forward", "error", ())]


def test_a_dotted_path_chosen_at_run_time_is_a_condition_the_user_can_decide(run_scan, tmp_path):
    """A registry of dotted paths read with a key known only at run time: each class it names is one of the
    call's alternatives (a condition, never certain), and `--assume self.impl=SlowImpl` picks one."""
    from compile_lint.program.facts import parse_assumption

    _write(tmp_path, {**_REGISTRY_PKG, "pkg/model.py": '''
        import torch
        from pkg.util import resolve_obj_by_qualname

        BACKENDS = {"fast": "pkg.impl.FastImpl", "slow": "pkg.impl.SlowImpl"}

        class M(torch.nn.Module):
            def __init__(self, backend: str):
                super().__init__()
                self.impl = resolve_obj_by_qualname(BACKENDS[backend])()

            def forward(self, x):
                return self.impl.forward(x)

        m = torch.compile(M("fast"), fullgraph=True)
    '''})
    result = run_scan(tmp_path / "pkg")
    hits = [f for f in result.findings if f.callee == "os.path.exists"]
    assert [(f.severity, [c.text for c in f.conditions]) for f in hits] == \
        [("warning", ["`self.impl.forward` is FastImpl.forward (one of 2)"])]
    chosen = run_scan(tmp_path / "pkg", assume=[parse_assumption("self.impl=SlowImpl")])
    assert not [f for f in chosen.findings if f.callee == "os.path.exists"]


def test_import_module_resolves_relative_names_and_a_module_getattr_serves_missing_names(run_scan, tmp_path):
    """`importlib.import_module(".impl", __package__)` is pkg.impl; a name a module does not bind is what its
    PEP 562 `__getattr__(name)` returns (vLLM's `current_platform`, made on first access)."""
    _write(tmp_path, {**_REGISTRY_PKG, "pkg/platforms.py": '''
        import importlib

        _current = None

        def __getattr__(name):
            global _current
            if name == "current_impl":
                if _current is None:
                    _current = getattr(importlib.import_module(".impl", __package__), "FastImpl")()
                return _current
            raise AttributeError(name)
    ''', "pkg/model.py": '''
        import torch
        from pkg.platforms import current_impl

        @torch.compile(fullgraph=True)
        def f(x):
            return current_impl.forward(x)
    '''})
    result = run_scan(tmp_path / "pkg")
    assert [f.trace[-1].qualname for f in result.findings if f.callee == "os.path.exists"] == ["FastImpl.forward"]


def test_a_function_defined_in_two_branches_is_each_under_its_branch(run_scan, tmp_path):
    """`if FLEX: def _call(...)` / `else: def _call(...)`: both functions are kept (the second as `_call@LINE`),
    and the hazard in one is reached only if its branch is the one that ran; an unguarded redefinition (an
    `@overload` stub before the real def) is replaced, as in Python."""
    result = _scan(run_scan, tmp_path, '''
        import os
        import torch
        from typing import overload

        FLEX = os.environ.get("FLEX") == "1"

        if FLEX:
            def _call(x):
                os.path.exists("/flex")
                return x
        else:
            def _call(x):
                return x

        @overload
        def g(x: int) -> int: ...
        def g(x):
            os.path.exists("/g")
            return x

        @torch.compile(fullgraph=True)
        def f(x):
            return g(_call(x))
    ''')
    got = {(f.trace[-1].qualname, f.severity, tuple(c.text for c in f.conditions))
           for f in result.findings if f.callee == "os.path.exists"}
    assert got == {("_call", "warning", ("`_call` is the _call defined if FLEX (one of 2)",)), ("g", "error", ())}


def test_star_imports_under_two_branches_are_each_a_condition(run_scan, tmp_path):
    """`if BACKEND == "torch": from .torch_impl import *` / `else: from .triton_impl import *`: the name may come
    from either module (one of 2, named by module); `--env` decides the branch."""
    from compile_lint.program.facts import parse_env

    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/torch_impl.py": '''
            import os

            def kernel(x):
                os.path.exists("/t")
                return x
        ''',
        "pkg/triton_impl.py": '''
            def kernel(x):
                return x
        ''',
        "pkg/ops.py": '''
            import os

            BACKEND = os.environ.get("PKG_BACKEND", "triton")
            if BACKEND == "torch":
                from .torch_impl import *
            else:
                from .triton_impl import *
        ''',
        "pkg/model.py": '''
            import torch
            from pkg.ops import kernel

            @torch.compile(fullgraph=True)
            def f(x):
                return kernel(x)
        ''',
    })
    result = run_scan(tmp_path / "pkg")
    assert [(f.severity, [c.text for c in f.conditions]) for f in result.findings if f.callee == "os.path.exists"] \
        == [("warning", ["`kernel` is pkg.torch_impl.kernel (one of 2)"])]
    torch_backend = run_scan(tmp_path / "pkg", env=[parse_env("PKG_BACKEND=torch")])
    assert [f.severity for f in torch_backend.findings if f.callee == "os.path.exists"] == ["error"]
    triton_backend = run_scan(tmp_path / "pkg", env=[parse_env("PKG_BACKEND=triton")])
    assert not [f for f in triton_backend.findings if f.callee == "os.path.exists"]


def test_a_function_that_compiles_its_parameter_compiles_what_the_callers_pass(run_scan, tmp_path):
    """`def _compiled(self, fn): return torch.compile(fn, fullgraph=True)` called as `self._compiled(self.run)`
    makes `run` a region (vLLM's CustomOp.maybe_compile(self.forward_native))."""
    result = _scan(run_scan, tmp_path, '''
        import os
        import torch

        class Runner:
            def _compiled(self, fn):
                return torch.compile(fn, fullgraph=True)

            def run(self, x):
                os.path.exists("/x")
                return x

            def setup(self):
                self.step = self._compiled(self.run)
    ''')
    assert [(r.qualname, r.fullgraph) for r in result.regions] == [("Runner.run", True)]
    assert [(f.trace[-1].qualname, f.severity) for f in result.findings if f.callee == "os.path.exists"] == \
        [("Runner.run", "error")]


def test_stores_on_the_instance_new_makes_and_setattr_with_a_constant_name(run_scan, tmp_path):
    """A singleton's `__new__` (`cls._instance = super().__new__(cls)`; `cls._instance.impl = Impl()`) and
    `setattr(self, "impl2", Impl2())` both set instance attributes the compiled forward calls into."""
    result = _scan(run_scan, tmp_path, '''
        import os
        import torch

        class Impl:
            def run(self, x):
                os.path.exists("/impl")
                return x

        class Impl2:
            def run(self, x):
                os.path.exists("/impl2")
                return x

        class Registry:
            _instance = None

            def __new__(cls):
                if cls._instance is None:
                    cls._instance = super().__new__(cls)
                    cls._instance.impl = Impl()
                return cls._instance

        class Holder(torch.nn.Module):
            def __init__(self):
                super().__init__()
                setattr(self, "impl2", Impl2())

            def forward(self, x):
                return self.impl2.run(Registry().impl.run(x))

        m = torch.compile(Holder(), fullgraph=True)
    ''')
    assert sorted(f.trace[-1].qualname for f in result.findings if f.callee == "os.path.exists") == \
        ["Impl.run", "Impl2.run"]


def test_a_quant_method_factory_narrowed_by_the_layer_gives_the_linear_method(run_scan, tmp_path):
    """vLLM's pattern: `self.quant_method: Base` declared, then assigned what a config's factory returns for
    this layer; the factory narrows with `issubclass(type(layer), Linear)`, `cls is MoEMethod` and
    `assert isinstance(layer, Experts)`.  Only the linear method is walked, not every subclass of Base."""
    result = _scan(run_scan, tmp_path, '''
        import os
        import torch

        class Base:
            def apply(self, x):
                return x

        class LinearMethod(Base):
            def apply(self, x):
                return x

        class MoEMethod(Base):
            def apply(self, x):
                os.path.exists("/moe")
                return x

        class Experts(torch.nn.Module):
            pass

        def moe_only(layer):
            assert isinstance(layer, Experts)
            return MoEMethod()

        class Config:
            def target(self, layer_type):
                if issubclass(layer_type, Linear):
                    return LinearMethod
                return MoEMethod

            def get_quant_method(self, layer):
                cls = self.target(type(layer))
                if cls is MoEMethod:
                    return MoEMethod()
                return moe_only(layer) or cls()

        class Linear(torch.nn.Module):
            def __init__(self, config: Config):
                super().__init__()
                self.quant_method: Base
                self.quant_method = config.get_quant_method(self)

            def forward(self, x):
                return self.quant_method.apply(x)

        m = torch.compile(Linear(Config()), fullgraph=True)
    ''')
    assert not [f for f in result.findings if f.callee == "os.path.exists"], \
        [[fr.qualname for fr in f.trace] for f in result.findings]


def test_a_decorator_factory_of_an_op_registration_is_a_boundary(run_scan, tmp_path):
    """sglang's `@register_custom_op(fake_impl=f)` (the factory called with arguments) registers a real op, as
    the bare `@register_custom_op` does: Dynamo never traces the body."""
    _write(tmp_path, {
        "sglang/__init__.py": "",
        "sglang/srt/__init__.py": "",
        "sglang/srt/utils/__init__.py": "",
        "sglang/srt/utils/custom_op.py": '''
            def register_custom_op(fn=None, *, op_name=None, **extra):
                def decorator(op_func):
                    return op_func
                if fn is not None:
                    return decorator(fn)
                return decorator
        ''',
        "app.py": '''
            import os
            import torch
            from sglang.srt.utils.custom_op import register_custom_op

            def _fake(x):
                return x

            @register_custom_op(fake_impl=_fake)
            def gemm(x):
                os.path.exists("/jit")
                return x

            @register_custom_op
            def gemm2(x):
                os.path.exists("/jit2")
                return x

            @torch.compile(fullgraph=True)
            def f(x):
                return gemm2(gemm(x))
        ''',
    })
    result = run_scan(tmp_path / "app.py", search_path=[tmp_path])
    assert not [f for f in result.findings if f.callee == "os.path.exists"]
