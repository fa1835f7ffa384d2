"""Python control flow on a tensor's value: Dynamo traces one path and cannot branch on data."""
from compile_lint.ruledef import BREAK, DynamoOutcome, Rule

DATA_DEPENDENT_BRANCH = Rule(
    code="CL119",
    name="data-dependent-branch",
    kind=BREAK,
    message="a Python branch on a tensor's value (`{callee}`): Dynamo cannot trace data-dependent control flow",
    # measured: the probe "torch.Tensor.__bool__" (`if x.abs().max() == 0:`), torch 2.13 CPU
    dynamo=DynamoOutcome("torch._dynamo.exc.Unsupported", "GB0170", "Data-dependent branching",
                         "the branch: `bool()` of a tensor computed in the graph"),
    what="Finds `if` / `while` / conditional expressions whose test is a tensor the resolver knows to be one: "
         "`if t:`, `if t == 0:`, `while t.any():`, `if t.max() > limit:` on a parameter annotated `torch.Tensor` "
         "or a value a tensor method returned (FlashInfer 0.7.2.post1's `make_nvfp4_global_scale`: "
         "`amax = input_tensor.abs().max().to(torch.float32)`, then `if amax == 0:`), what the `torch` function "
         "of a tensor method's name returns, and arithmetic on a tensor (transformers 5.24's dynamic RoPE: "
         "`seq_len = torch.max(position_ids) + 1`, then `if seq_len > max_seq_len_cached:`). Tests on a tensor's "
         "metadata (`t.shape[0] == 0`, `t.dtype`, `t.is_cuda`, `t is None`, `t.numel()`) are not data: Dynamo "
         "decides them at trace time and guards on them.",
    why="Python needs a bool to pick the branch; in the graph the tensor has no value yet. Dynamo stops "
        "(`Data-dependent branching`, GB0170): an error under `fullgraph=True`, a graph break otherwise.",
    example='''
import torch

def scale(t: torch.Tensor):
    amax = t.abs().max()
    if amax == 0:  # CL119
        return torch.ones(1)
    return 448.0 / amax
''',
    fix="Make the code branchless (`torch.where(amax == 0, torch.ones_like(amax), 448.0 / amax)`, "
        "`torch.clamp`), or decide the branch outside the compiled function.",
    calls=("torch.Tensor.__bool__",),
    invalid=('''
import torch
def f(x: torch.Tensor):
    if x.sum() > 0:
        return x
    return -x
f_c = torch.compile(f, fullgraph=True)
''', '''
import torch
def f(position_ids):
    seq_len = torch.max(position_ids) + 1
    if seq_len > 4096:
        return position_ids * 2
    return position_ids
f_c = torch.compile(f, fullgraph=True)
'''),
    fixed=('''
import torch
def f(x: torch.Tensor):
    return torch.where(x.sum() > 0, x, -x)  # branchless
f_c = torch.compile(f, fullgraph=True)
''', '''
import torch
def f(x: torch.Tensor, positive: bool):
    return x if positive else -x
f_c = torch.compile(f, fullgraph=True)
def inputs(x):  # the branch decided outside the compiled function
    return (x, bool(x.sum() > 0))
'''),
    valid=('''
import torch
def f(x: torch.Tensor):
    if x.shape[0] == 0:
        return x
    return torch.where(x.sum() > 0, x, -x)
f_c = torch.compile(f, fullgraph=True)
''',),
)

RULES = (DATA_DEPENDENT_BRANCH,)
