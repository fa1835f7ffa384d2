"""Output from traced code: ``logging``, ``print``, ``warnings.warn``."""
from compile_lint.ruledef import BREAK, DynamoOutcome, Rule

_LEVELS = ("debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log")

LOGGING = Rule(
    code="CL107",
    name="logging-in-compiled-region",
    kind=BREAK,
    message="`{callee}` logs inside the compiled region",
    dynamo=DynamoOutcome("torch._dynamo.exc.Unsupported", "GB0291 / GB4841 / GB0007",
                         "logging.Logger method not supported for non-export cases / Unsupported python_type() call "
                         "/ Attempted to call function marked as skipped (logging.warn: warnings.warn)",
                         "at the call (Logger methods); logging/__init__.py (module functions)"),
    what="Finds `logging.info(...)`-style module functions and `Logger` methods (`logger.warning`, "
         "`logger.debug`, ...) in traced code, even when the level is disabled.",
    why="Dynamo does not trace `Logger` methods (GB0291) nor the root-logger functions (GB4841): an error under "
        "`fullgraph=True`, a graph break otherwise.",
    example='''
import logging, torch
logger = logging.getLogger(__name__)

def f(x):
    logger.debug("shape %s", x.shape)  # CL107
    return x * 2
''',
    fix="Log outside the compiled function, or have Dynamo skip the method: "
        "`torch._dynamo.config.ignore_logger_methods.add(logging.Logger.warning)` (measured on torch 2.13: the "
        "call is dropped from the graph; `reorderable_logging_functions` does not help a Logger method, it still "
        "stops with GB0291 -- tests/test_fix_advice.py).",
    # + the methods transformers adds to every Logger (utils/logging.py), where Dynamo stopped on real models
    # (tests/realcode: `logger.warning_once` in utils/generic.py:1144, GB0291)
    calls=tuple(f"logging.{lv}" for lv in _LEVELS) + tuple(f"logging.Logger.{lv}" for lv in _LEVELS)
    + ("logging.Logger.warning_once", "logging.Logger.info_once", "logging.Logger.warning_advice"),
    invalid=('''
import logging, torch
log = logging.getLogger("x")
def f(x):
    log.warning("hi")
    return x
f_c = torch.compile(f, fullgraph=True)
''',),
    fixed=('''
import logging, torch
log = logging.getLogger("x")
def f(x):
    return x
f_c = torch.compile(f, fullgraph=True)
def step(x):  # logged outside the compiled function
    log.warning("hi")
    return f_c(x)
''',),
)

PRINT = Rule(
    code="CL108",
    name="print-in-compiled-region",
    kind=BREAK,
    message="`print` inside the compiled region",
    dynamo=DynamoOutcome("torch._dynamo.exc.Unsupported", "GB0059", "Failed to trace builtin operator",
                         "builtin print, at the call"),
    what="Finds `print(...)` in traced code.",
    why="Dynamo does not trace the `print` builtin: an error under `fullgraph=True`, a graph break otherwise.",
    example='''
import torch

def f(x):
    print("x", x.shape)  # CL108
    return x * 2
''',
    fix="Print outside the compiled function, or register `print` in "
        "`torch._dynamo.config.reorderable_logging_functions`.",
    calls=("builtins.print",),
    invalid=('''
import torch
def f(x):
    print(1)
    return x
f_c = torch.compile(f, fullgraph=True)
''',),
    fixed=('''
import torch
def f(x):
    return x
f_c = torch.compile(f, fullgraph=True)
def step(x):  # printed outside the compiled function
    print(1)
    return f_c(x)
''',),
)

WARNINGS = Rule(
    code="CL109",
    name="warnings-warn-in-compiled-region",
    kind=BREAK,
    message="`{callee}` inside the compiled region",
    dynamo=DynamoOutcome("torch._dynamo.exc.Unsupported", "GB0007", "Attempted to call function marked as skipped",
                         "_warnings.warn (C), at the call"),
    what="Finds `warnings.warn(...)` in traced code.",
    why="`warnings.warn` is a C function: an error under `fullgraph=True`, a graph break otherwise.",
    example='''
import warnings, torch

def f(x):
    warnings.warn("slow path")  # CL109
    return x * 2
''',
    fix="Warn once outside the compiled function (at import or construction).",
    calls=("warnings.warn", "warnings.warn_explicit"),
    invalid=('''
import warnings, torch
def f(x):
    warnings.warn("w")
    return x
f_c = torch.compile(f, fullgraph=True)
''',),
    fixed=('''
import warnings, torch
warnings.warn("w")  # once, at import
def f(x):
    return x
f_c = torch.compile(f, fullgraph=True)
''',),
)

RULES = (LOGGING, PRINT, WARNINGS)
