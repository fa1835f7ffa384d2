"""Calls into modules that the installed torch's trace rules skip (``torch._dynamo.trace_rules``)."""
from compile_lint.ruledef import BREAK, DynamoOutcome, Rule

SKIPPED_MODULE = Rule(
    code="CL117",
    name="call-into-skipped-module",
    kind=BREAK,
    message="`{callee}` is in a module Dynamo skips ({detail})",
    dynamo=DynamoOutcome("torch._dynamo.exc.Unsupported", "GB0007", "Attempted to call function marked as skipped",
                         "the call site"),
    what="Finds calls into modules that `torch._dynamo.trace_rules` marks as skipped for the installed torch "
         "(the stdlib's `abc`, `copy`, `importlib`, `random`, `re`, `linecache`; third-party packages such as "
         "`networkx`... on its skip list), except the calls measured to compile on that torch (the verdict "
         "table: `re.findall/search/match/split/compile/sub`, `importlib.util.find_spec` and "
         "`importlib.metadata.version` on torch 2.13, which Dynamo constant-folds; a `str` is always a constant "
         "to Dynamo).",
    why="Dynamo refuses to trace into a skipped file: an error under `fullgraph=True`, a graph break "
        "otherwise. The list changes between torch versions (older releases skipped `os`, `logging`, "
        "`threading`...), so compile-lint asks the installed torch, or a snapshot from torch 2.13 without it. "
        "What is folded changes too: `re.findall` stops Dynamo on torch 2.11 and compiles on 2.13, so the "
        "verdict comes from the table measured on the installed torch (or the nearest one measured).",
    example='''
import linecache, torch

def f(x, path: str):
    if linecache.getline(path, 1).startswith("#"):  # CL117 (GB0007 on torch 2.13)
        return x * 2
    return x
''',
    fix="Do the work outside the compiled function, or with constant arguments.",
)

RULES = (SKIPPED_MODULE,)
