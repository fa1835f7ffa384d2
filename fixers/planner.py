"""Choosing, rendering and applying fixes.

For every finding (errors and warnings; notes ride along) the fixers are tried in order - op-boundary, then
hoist-load, then compiler-disable (only where no fullgraph region reaches the hazard) - and the first that can
fix it at its site wins; the others that could are kept as alternatives, and the reasons of those that could
not are kept for the report.  Findings that share a fix site share one plan.  Plans are rendered on the text
the scan saw; applying renders every plan of a file together in one libcst pass, re-parses the result and
writes each file atomically.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

from . import api_op, compiler_disable, hoist_load, op_boundary
from .model import SAFE, FixOptions, FixPlan, FixReport, GeneratedBlock, Planning, Refusal, ReplaceNode, Unfixable
from .sites import Context
from .source import FixError, atomic_write, render, unified_diff

FIXERS = {api_op.ID: api_op, op_boundary.ID: op_boundary, hoist_load.ID: hoist_load,
          compiler_disable.ID: compiler_disable}
# api-op makes op-boundary plans at a public API (library mode with --fix-in); it is tried first there
ORDER = (api_op.ID, op_boundary.ID, hoist_load.ID, compiler_disable.ID)
_FIXER_OF = {api_op.ID: op_boundary.ID}


def _label(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def plan_all(result, options: Optional[FixOptions] = None) -> Planning:
    options = options or FixOptions()
    ctx = Context(result, options)
    order = [f for f in ORDER if (not options.only or f in options.only or _FIXER_OF.get(f, f) in options.only)
             and (f != api_op.ID or options.fix_in)]
    built: dict = {}
    chosen: dict = {}
    unfixable = []
    for f in result.findings:
        if f.severity == "note":
            continue
        refusals, plan_for_f, alts = [], None, []
        for fid in order:
            fx = FIXERS[fid]
            try:
                s = fx.site(ctx, f)
            except Exception as e:  # a fixer bug must not take the scan down
                s = Refusal(fid, f"internal error while locating the fix site: {type(e).__name__}: {e}")
            if isinstance(s, Refusal):
                refusals.append(s)
                continue
            extra = []
            if isinstance(s, list):  # api-op: the finding's own public API first, then the others reaching it
                s, extra = s[0], s[1:]
                for k2, p2 in extra:
                    plan2 = _build(built, fx, fid, ctx, k2, p2)
                    if not isinstance(plan2, Refusal):  # another API's own op: a plan of its own
                        chosen.setdefault(plan2.key, plan2)
                        if f not in chosen[plan2.key].findings:
                            chosen[plan2.key].findings.append(f)
                    elif all((plan2.fixer, plan2.reason) != (x.fixer, x.reason) for x in refusals):
                        refusals.append(plan2)  # that API still reaches the hazard: say why it is no op
                if isinstance(s, Refusal):  # the finding's own region is not an API the fixer can make an op
                    refusals.append(s)
                    continue
            key, payload = s
            plan = _build(built, fx, fid, ctx, key, payload)
            if isinstance(plan, Refusal):
                refusals.append(plan)
                continue
            if plan_for_f is None:
                plan_for_f = plan
            else:
                alts.append(plan)
        if plan_for_f is None:
            unfixable.append(Unfixable(f, refusals))
            continue
        plan = chosen.setdefault(plan_for_f.key, plan_for_f)
        if f not in plan.findings:
            plan.findings.append(f)
        for r in refusals:
            if all((r.fixer, r.reason) != (x.fixer, x.reason) for x in plan.refusals):
                plan.refusals.append(r)
        for a in alts:
            if all(a.key != x.key for x in plan.alternatives):
                plan.alternatives.append(a)
    plans = _drop_conflicts(list(chosen.values()), unfixable)
    rendered = []
    for p in plans:
        try:
            _render_plan(ctx, p)
        except FixError as e:  # the edit would not parse (or the file moved): refuse it, never write it
            unfixable += [Unfixable(f, [Refusal(p.fixer, str(e))]) for f in p.findings]
            continue
        rendered.append(p)
    return Planning(rendered, unfixable)


def _build(built: dict, fx, fid: str, ctx, key, payload):
    if key not in built:
        try:
            built[key] = fx.build(ctx, payload)
        except FixError as e:
            built[key] = Refusal(fid, str(e))
        except Exception as e:
            built[key] = Refusal(fid, f"internal error: {type(e).__name__}: {e}")
    return built[key]


def plan_fixes(result, options: Optional[FixOptions] = None) -> list:
    """The chosen fix per fix site for ``result`` (a ``ScanResult``), rendered (``FixPlan.files``/``diff``)."""
    return plan_all(result, options).plans


def _spans(plan: FixPlan):
    return [(e.path, e.span()) for e in plan.edits if isinstance(e, ReplaceNode)]


def _overlap(a, b) -> bool:
    (pa, sa), (pb, sb) = a, b
    if pa != pb:
        return False
    start_a, end_a = (sa[0], sa[1]), (sa[2], sa[3])
    start_b, end_b = (sb[0], sb[1]), (sb[2], sb[3])
    return start_a < end_b and start_b < end_a


def _drop_conflicts(plans: list, unfixable: list) -> list:
    """Two plans editing overlapping code: keep the one fixing more findings (then: fixer order)."""
    ranked = sorted(plans, key=lambda p: (-len(p.findings), ORDER.index(p.key[0] if p.key and p.key[0] in ORDER
                                                                          else p.fixer)))
    kept: list = []
    for p in ranked:
        clash = None
        for k in kept:
            for a in _spans(p):
                for b in _spans(k):
                    if _overlap(a, b) and not (a == b and _same_edit(p, k, a)):
                        clash = k
        if clash is None:
            kept.append(p)
        else:
            for f in p.findings:
                if f not in clash.findings:
                    clash.findings.append(f)
    order = {id(p): i for i, p in enumerate(plans)}
    return sorted(kept, key=lambda p: order[id(p)])


def _same_edit(p, k, span) -> bool:
    ep = [e for e in p.edits if isinstance(e, ReplaceNode) and (e.path, e.span()) == span]
    ek = [e for e in k.edits if isinstance(e, ReplaceNode) and (e.path, e.span()) == span]
    return bool(ep) and ep[0].new == ek[0].new


def _current(path: str) -> Optional[str]:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def _render_plan(ctx: Context, plan: FixPlan) -> None:
    by_path: dict = {}
    for e in plan.edits:
        by_path.setdefault(e.path, []).append(e)
    diffs = []
    for path, edits in sorted(by_path.items()):
        original = _current(path) if any(isinstance(e, GeneratedBlock) for e in edits) else ctx.text(path)
        new = render(path, original, edits)
        plan.originals[path] = original
        plan.files[path] = new
        if new != original:
            diffs.append(unified_diff(path, original, new, _label(path)))
    plan.diff = "".join(diffs)


def allowed(plan: FixPlan, unsafe: bool) -> bool:
    return plan.safety == SAFE or unsafe


def apply_fixes(plans: list, unsafe: bool = False, write: bool = True) -> FixReport:
    """Render every allowed plan of each file together, re-parse, and (``write``) write atomically.  Plans whose
    file changed since the scan, or whose edits cannot be rendered, are skipped with the reason."""
    report = FixReport()
    todo = []
    for p in plans:
        if not allowed(p, unsafe):
            report.skipped.append((p, "unsafe fix (use --unsafe-fixes)"))
            continue
        stale = [path for path, orig in p.originals.items() if _current(path) != orig and not any(
            isinstance(e, GeneratedBlock) and e.path == path for e in p.edits)]
        if stale:
            report.skipped.append((p, f"{stale[0]} changed since it was scanned"))
            continue
        todo.append(p)
    while True:
        by_path: dict = {}
        for p in todo:
            for e in p.edits:
                by_path.setdefault(e.path, []).append(e)
        results, failed = {}, None
        for path, edits in by_path.items():
            original = _current(path)
            try:
                results[path] = (original, render(path, original, edits))
            except FixError as e:
                failed = (path, str(e))
                break
        if failed is None:
            break
        bad = [p for p in todo if any(e.path == failed[0] for e in p.edits)]
        for p in bad:
            report.skipped.append((p, failed[1]))
        todo = [p for p in todo if p not in bad]
    diffs = []
    # generated modules first: a user file never refers to an op module that is not on disk
    ordered = sorted(results.items(), key=lambda kv: (kv[1][0] is not None, kv[0]))
    write_failed = None  # (path, reason): the first file that could not be written; nothing after it is
    for path, (original, new) in ordered:
        if new == original:
            continue
        if write:
            if write_failed is not None:
                continue
            try:
                atomic_write(path, new)
            except OSError as e:  # read-only directory, disk full: the file keeps its old text
                write_failed = (path, f"cannot write {_label(path)}: {e.strerror or e}")
                continue
        diffs.append(unified_diff(path, original, new, _label(path)))
        report.written.append(path)
    if write_failed is not None:
        done = set(report.written) | {path for path, (original, new) in results.items() if new == original}
        report.skipped += [(p, write_failed[1]) for p in todo if any(e.path not in done for e in p.edits)]
        todo = [p for p in todo if all(e.path in done for e in p.edits)]
    report.applied = todo
    report.diff = "".join(diffs)
    return report


def fix(scan_options, options: Optional[FixOptions] = None, write: bool = True, result=None) -> FixReport:
    """Scan, plan, apply, re-scan - until a round changes nothing (a fix can uncover a call site the first scan
    merged into one finding).  ``report.remaining`` holds the findings of the last scan."""
    from compile_lint.engine import scan

    options = options or FixOptions()
    result = result if result is not None else scan(scan_options)
    total = FixReport(remaining=None)
    seen_diffs = set()
    check = None
    if options.fix_in and options.verify_imports:
        from .verify import ImportCheck

        check = ImportCheck(getattr(scan_options, "python", None) or sys.executable, options.fix_in)
    for rnd in range(max(1, options.max_rounds)):
        planning = plan_all(result, options)
        total.unfixable = planning.unfixable
        plans = [p for p in planning.plans if allowed(p, options.unsafe)]
        known = {p.key for p, _ in total.skipped}
        total.skipped += [(p, "unsafe fix (use --unsafe-fixes)") for p in planning.plans
                          if not allowed(p, options.unsafe) and p.key not in known]
        if check is not None and plans:
            from .verify import withdraw_breaking

            gone = {p.key for p, why in total.skipped if why.startswith("withdrawn")}
            plans, withdrawn = withdraw_breaking([p for p in plans if p.key not in gone], check)
            total.skipped += withdrawn
        if not plans:
            break
        rep = apply_fixes(plans, unsafe=options.unsafe, write=write)
        rep.skipped = [(p, why) for p, why in rep.skipped if not why.startswith("unsafe fix")]
        total.rounds = rnd + 1
        total.applied += rep.applied
        total.skipped += rep.skipped
        total.written += [w for w in rep.written if w not in total.written]
        if not rep.written or rep.diff in seen_diffs:
            break
        seen_diffs.add(rep.diff)
        total.diff += rep.diff
        if not write:
            break
        result = scan(scan_options)
        if any(why.startswith("cannot write") for _, why in rep.skipped):
            break  # the file system refused a write: report what is left, do not try again
    total.remaining = list(result.findings)
    total.result = result
    return total
