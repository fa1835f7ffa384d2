"""Fixers: take a hazard's call out of the traced path, with the least invasive fix that is legal there.

Three fixers, tried in this order for every finding (docs/fixers.md has the long form):

- ``op-boundary`` (``compile_lint.fixers.op_boundary``): route the call through a real op - the library's own
  (``torch.ops.ns.name``) or a generated ``torch.library.custom_op`` with a soundly derived fake.  Legal
  everywhere; the default under ``fullgraph=True``.  Safe when the fake is derived from the library's code.
- ``hoist-load`` (``compile_lint.fixers.hoist_load``): run a cached loader / JIT build once at import (or in
  ``__init__``) and read the stored result.  Legal everywhere; always unsafe (the load moves).
- ``compiler-disable`` (``compile_lint.fixers.compiler_disable``): run the call eagerly.  Only when no
  fullgraph region reaches the hazard; the fix of last resort.  Safe.

API::

    from compile_lint.engine import ScanOptions, scan
    from compile_lint.fixers import FixOptions, plan_fixes, apply_fixes

    result = scan(ScanOptions(paths=["src/"]))
    plans = plan_fixes(result, FixOptions(op_namespace="myproj"))
    for p in plans:
        print(p.fixer, p.safety, p.path, p.description)
        print(p.diff)
    report = apply_fixes(plans, unsafe=False)          # writes the safe ones atomically

or all at once, with a re-scan: ``fix(scan_options, FixOptions(...)) -> FixReport``.
"""
from .config import options_from_config, read_config
from .model import (
    COMPILER_DISABLE,
    FIXER_IDS,
    HOIST_LOAD,
    OP_BOUNDARY,
    SAFE,
    UNSAFE,
    FixOptions,
    FixPlan,
    FixReport,
    Planning,
    Refusal,
    Unfixable,
)
from .planner import FIXERS, apply_fixes, fix, plan_all, plan_fixes
from .source import FixError

SAFETY = {
    OP_BOUNDARY: "safe when the fake is derived from the library's own code (allocations, declared or "
                 "over-approximated out-parameters) or the library's own op maps one to one; unsafe with a "
                 "configured fake or a default the library's op computes differently",
    HOIST_LOAD: "unsafe: the load moves from the first call to import time (or __init__)",
    COMPILER_DISABLE: "safe: eager behaviour is unchanged and compiled code runs the call eagerly "
                      "(only offered where no fullgraph region reaches the hazard)",
}


def documentation(fixer_id: str) -> str:
    """The fixer's documentation (what / when legal / safety / example)."""
    return (FIXERS[fixer_id].__doc__ or "").strip() + "\n"


__all__ = [
    "COMPILER_DISABLE", "FIXER_IDS", "FIXERS", "HOIST_LOAD", "OP_BOUNDARY", "SAFE", "SAFETY", "UNSAFE",
    "FixError", "FixOptions", "FixPlan", "FixReport", "Planning", "Refusal", "Unfixable",
    "apply_fixes", "documentation", "fix", "options_from_config", "plan_all", "plan_fixes", "read_config",
]
