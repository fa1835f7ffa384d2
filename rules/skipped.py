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
         "`numpy`... on its skip list), except the calls Dynamo constant-folds (`re.*` and "
         "`importlib.metadata.version` with constant arguments).",
    why="Dynamo refuses to trace into a skipped file: an error under `fullgraph=True`, a graph break "
        "otherwise. The list changes between torch versions (older releases skipped `os`, `logging`, "
        "`threading`...), so compile-lint asks the installed torch, or a snapshot from torch 2.13 without it.",
    example='''
import re, torch

def f(x, name: str):
    if re.match(r"fp(\\d+)", name):  # CL117 when `name` is not a constant
        return x * 2
    return x
''',
    fix="Do the work outside the compiled function, or with constant arguments.",
)

RULES = (SKIPPED_MODULE,)
