"""Calls that no other rule names, measured to stop Dynamo on the torch in use (``compile_lint.dynamo.verdicts``)."""
from compile_lint.ruledef import BREAK, DynamoOutcome, Rule

MEASURED_STOP = Rule(
    code="CL118",
    name="call-measured-to-stop-dynamo",
    kind=BREAK,
    message="`{callee}` stops Dynamo (measured on the torch whose verdicts the scan reads: its header says which)",
    # what each callee does is the measured verdict (the report shows it); this is json.dumps's on torch 2.13
    dynamo=DynamoOutcome("torch._dynamo.exc.Unsupported", "GB0156", "Unsupported method call",
                         "the call (each callee's measured outcome is reported)"),
    what="Finds calls to functions that the verdict table of the torch in use (`scripts/measure_dynamo_verdicts.py`, "
         "bundled per torch version) measured to stop Dynamo under `fullgraph=True`, when no other rule names "
         "them: `json.dumps`, `copy.copy`, `dataclasses.fields` of a class (of an instance it compiles: measured apart, `dataclasses.fields@instance`), in-memory output redirection (`io.StringIO`, "
         "`contextlib.redirect_stdout`: transformers' model debugger) on torch 2.13; a generator's state "
         "(`generator.get_state()` on a `torch.Generator`, GB7650: a measured stop beats the torch package "
         "boundary; FlashInfer's `get_seed_and_offset`); calling an `IntEnum` of the scanned code, which runs "
         "its base's `__call__` (`ActivationType(x)`, GB0116 on torch 2.11, compiles on 2.13: FlashInfer's "
         "`normalize_activation_type`; on 2.11 the call compiles when its argument is a parameter whose "
         "default is the member -- `SfLayout(sfLayout)` in `mxfp4_quantize` -- so there it is reported only if "
         "the caller passes one); `importlib.util.find_spec`, `importlib.metadata.version` and "
         "`copy.deepcopy` on torch 2.11, which torch 2.13 constant-folds or traces.",
    why="What Dynamo traces is a fact of one torch version, and these calls are not hazards of a kind another "
        "rule describes (files, processes, clocks...): they stop Dynamo because it has no model of them. The "
        "report carries the exception, message and graph-break id measured on that torch.",
    example='''
import json, torch

def f(x):
    meta = json.dumps({"dtype": str(x.dtype)})  # CL118 on torch 2.13: Unsupported
    return x * len(meta)
''',
    fix="Do the work outside the compiled function (before the call, or once at init), or with values Dynamo "
        "can trace.",
    invalid=('''
import json, torch
def f(x):
    return x + len(json.dumps({"a": 1}))
f_c = torch.compile(f, fullgraph=True)
''',),
    fixed=('''
import json, torch
META_LEN = len(json.dumps({"a": 1}))  # done once, at init
def f(x):
    return x + META_LEN
f_c = torch.compile(f, fullgraph=True)
''',),
    valid=('''
import json, torch
META = json.dumps({"a": 1})
def f(x):
    return x + len(META)
f_c = torch.compile(f, fullgraph=True)
''',),
)

RULES = (MEASURED_STOP,)
