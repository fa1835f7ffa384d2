"""Which hazard of a region Dynamo meets first: the one library mode shows for an API.

Dynamo stops at the first hazard on the one path it traces, so the hazard shown should be that one.  Two
things decide it, in this order:

1. **The call users make.**  The public API is called with its required arguments and its optional ones at
   their defaults (the GPU harness does; so do most callers).  The region is walked once more so
   (``Reach.walk(default_call=True)``), and what that walk reaches comes first: on FlashInfer's
   ``single_decode_with_kv_cache`` the ``use_tensor_cores=False`` branch builds the decode module, whose
   template ``open`` is where Dynamo stops -- not the prefill module's loader behind ``if use_tensor_cores:``.
2. **The order the code runs in**: an error (every trace) before a break behind undecided branches, a wrapper
   installed only by a non-default configuration last, a once-only initialisation after the code that runs
   on every call (``lazy_initialisation``), a hazard only where an optional argument is passed after the call
   with its defaults (1. again: ``SfLayout(sfLayout)`` compiles on the default member), then the fewest undecided branches, then execution order along
   the path (``execution_order``).

The verdict itself (unsafe / unsafe if / safe) is the general walk's: a hazard on the default call only is
not one on every call.
"""
from __future__ import annotations

from typing import Optional

from .findings import ALTERNATIVE, ARGUMENT_PASSED, CONDITIONAL_WRAPPER, Finding


def execution_order(f: Finding) -> tuple:
    """Where a hazard comes in the order the region runs, from its path: at the first function where two paths
    part, the earlier line runs first; on one line the call leading deeper (``get_module().run(x)``: the
    loader runs before the call on its result), and of two calls leading deeper the one whose expression
    ends first (``gen_module(...).build_and_load()``: the generator's template ``open`` before the loader's
    ``Path.exists``)."""
    frames = f.trace
    if not frames:
        return ()
    return tuple((fr.line, 0, fr.end) for fr in frames[:-1]) + ((frames[-1].line, 1, ()),)


def conditional_break(f: Finding) -> bool:
    """A warning only for its conditions: where they hold, the hazard stops Dynamo like an error."""
    from compile_lint.rules import ALL_RULES

    from .ruledef import BREAK

    rule = ALL_RULES.get(f.rule)
    return f.severity == "warning" and bool(f.conditions) and rule is not None and rule.kind == BREAK


def breaks(hazards: list) -> list:
    """Every hazard that stops Dynamo on some trace: the errors and the breaks behind undecided branches."""
    return [f for f in hazards if f.severity == "error" or conditional_break(f)]


def stopping(hazards: list) -> list:
    """The hazards that stop Dynamo: the errors, failing those the breaks behind undecided branches."""
    return [f for f in hazards if f.severity == "error"] or [f for f in hazards if conditional_break(f)]


def _literal(c) -> Optional[tuple]:
    """A condition as a literal of the path's formula, or None where it has no opposite (one of a call's
    several callees, a condition without its guard)."""
    if not c.expr or c.expr[:1] == (ALTERNATIVE,):
        return None
    return (c.path, c.line, c.expr, bool(c.polarity))


def every_case(condition_sets: list, limit: int = 2000) -> bool:
    """Whether the paths met under these sets of conditions (each set a conjunction) together cover every
    case: ``{backend == "fa2"}`` and ``{backend != "fa2"}`` do.  Iterated consensus on the disjunction -- from
    ``A and c`` and ``B and not c`` follows ``A and B`` -- reaches the empty conjunction exactly when it is a
    tautology; ``limit`` bounds the terms derived (an answer of False past it is only "not shown")."""
    terms = set()
    for cs in condition_sets:
        lits = [_literal(c) for c in cs]
        if None in lits:
            continue  # a branch the formula cannot name is no part of a proof
        terms.add(frozenset(lits))
    if frozenset() in terms:
        return True
    todo = list(terms)
    while todo and len(terms) < limit:
        a = todo.pop()
        for lit in a:
            opposite = lit[:3] + (not lit[3],)
            for b in [t for t in terms if opposite in t]:
                r = (a - {lit}) | (b - {opposite})
                if any(x[:3] + (not x[3],) in r for x in r):
                    continue  # contradictory: no path
                if not r:
                    return True
                if r not in terms:
                    terms.add(r)
                    todo.append(r)
    return False


def met_first(hazards: list) -> list:
    """The hazards Dynamo may stop at first.  The errors, failing those the breaks behind undecided branches
    -- unless breaks behind undecided branches run before the earliest error and, whichever way those
    branches go, one of them is met (FlashInfer's ``gen_customize_single_prefill_module`` opens a template in
    its ``fa2`` branch and in its ``fa3`` one, and raises in every other, before the loader's certain
    ``Path.exists``): then those."""
    worst = stopping(hazards)
    if not worst or worst[0].severity != "error":
        return worst
    earliest = execution_order(min(worst, key=lambda f: (execution_order(f), f.path, f.line)))
    before = [f for f in breaks(hazards) if f.severity != "error" and execution_order(f) < earliest]
    return before if before and every_case([f.conditions for f in before]) else worst


def lazy_initialisation(c) -> bool:
    """A condition that holds only until some call has run the code once: ``if cls._instance is None:``
    (FlashInfer's ``AutoTuner.get``, whose lock guards the singleton's creation).  Dynamo reads the attribute
    when it traces, so once the region ran eagerly -- a warm-up, a profiling pass, the GPU harness's eager
    call -- the branch is not taken and the hazard behind it is not met.  Only state (an attribute) counts:
    ``if out is None:`` on a parameter is the call's own choice."""
    e = c.expr
    return bool(c.polarity) and len(e) == 3 and e[0] == "cmp" and e[1][:1] == ("attr",) and \
        len(e[2]) == 1 and e[2][0] == ("Is", ("const", None))


# (ranking by execution order alone, conditions ignored, shows a `logger.warning` behind `threads < 1`
# for 20 APIs whose stop is the loader: measured 2026-12-01)
_RANK = (
    lambda f: any(c.expr[:1] == (CONDITIONAL_WRAPPER,) for c in f.conditions),
    lambda f: f.severity != "error",
    lambda f: any(lazy_initialisation(c) or c.expr[2:3] == (ARGUMENT_PASSED,) for c in f.conditions),
    lambda f: len(f.conditions),
    lambda f: (execution_order(f), f.path, f.line),
)


def _rank(f: Finding) -> tuple:
    return tuple(key(f) for key in _RANK)


def _first_by_rank(findings: list) -> Finding:
    """``min(findings, key=_rank)``, one part of the rank at a time: each part is worked out only for the
    findings that tie on the parts before it (a region of flashinfer's JIT loaders has thousands of
    conditional breaks, each with a path some 30 conditions long: ranking all of them whole took 5 % of an
    incremental scan).  The first of the findings that tie on every part, as ``min`` returns."""
    for key in _RANK:
        if len(findings) == 1:
            break
        keys = [key(f) for f in findings]
        best = min(keys)
        findings = [f for f, k in zip(findings, keys) if k == best]
    return findings[0]


def first_hazard(hazards: list, default_call: Optional[list] = None) -> Optional[Finding]:
    """The hazard of ``hazards`` (one region's) that Dynamo meets first; ``default_call``: what the walk of
    the API called with its defaults found (1. above).  Where the region has an error (it is unsafe on every
    call), the default call's own finding is returned -- it may be certain on that call only; else the
    general walk's finding at the same place, with its conditions (the API is unsafe only if they hold)."""
    worst = met_first(hazards)
    if not worst:
        return None
    if default_call:
        sites = {(f.rule, f.path, f.line): f for f in breaks(hazards)}
        met = [f for f in met_first(default_call) if (f.rule, f.path, f.line) in sites]
        if met:
            first = _first_by_rank(met)
            return first if worst[0].severity == "error" else sites[(first.rule, first.path, first.line)]
    return _first_by_rank(worst)
