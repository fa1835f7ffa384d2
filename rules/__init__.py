"""The rules: one module per hazard family.  ``ALL_RULES`` maps a code (``CL101``) to its ``Rule``.

Codes: CL1xx make Dynamo stop (an error under ``fullgraph=True``, a graph break otherwise); CL2xx compile
but behave differently from eager (silent); CL3xx are notes.
"""
from functools import lru_cache

from compile_lint.ruledef import Rule

from . import boundaries, caching, clock, control, environment, filesystem, imports, jit, locks, measured, \
    nondeterminism, output, process, skipped, suppressions

_FAMILIES = (process, filesystem, locks, clock, output, imports, nondeterminism, jit, caching, boundaries,
             environment, skipped, measured, control, suppressions)


def _collect() -> dict:
    rules = {}
    for mod in _FAMILIES:
        family = mod.__name__.rsplit(".", 1)[-1]
        for r in mod.RULES:
            object.__setattr__(r, "family", family)
            assert r.code not in rules, r.code
            rules[r.code] = r
    return dict(sorted(rules.items()))


ALL_RULES: dict = _collect()
SINK_RULES = tuple(r for r in ALL_RULES.values() if r.calls or r.enters or r.shapes)


@lru_cache(maxsize=None)  # a pure function of the name: asked millions of times on a big scan
def rule_for_call(qualname: str):
    """The first rule whose sinks name this fully qualified callee, or None."""
    for r in SINK_RULES:
        if r.matches_call(qualname):
            return r
    return None


@lru_cache(maxsize=None)  # a pure function of the name: asked millions of times on a big scan
def rule_for_enter(type_name: str):
    for r in SINK_RULES:
        if type_name in r.enters:
            return r
    return None


@lru_cache(maxsize=None)  # a pure function of the name: asked millions of times on a big scan
def rule_for_shape(method: str, nargs: int):
    for r in SINK_RULES:
        for name, max_args in r.shapes:
            if name == method and nargs <= max_args:
                return r
    return None


__all__ = ["ALL_RULES", "Rule", "rule_for_call", "rule_for_enter", "rule_for_shape"]
