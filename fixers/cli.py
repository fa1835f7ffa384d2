"""What ``compile-lint scan --diff/--fix`` and ``compile-lint fix`` do (the click glue lives in ``lint/cli.py``)."""
from __future__ import annotations

import sys
from typing import Optional

from .config import options_from_config
from .model import FixOptions
from .planner import allowed, apply_fixes, fix, plan_all


def fix_options(paths, unsafe: bool, fix_in, op_namespace) -> FixOptions:
    fo = FixOptions(unsafe=unsafe)
    if fix_in:
        fo.fix_in = tuple(x.strip() for v in fix_in for x in v.split(",") if x.strip())
    if op_namespace:
        if not op_namespace.isidentifier():
            raise ValueError(f"--op-namespace must be a Python identifier, got {op_namespace!r}")
        fo.op_namespace = op_namespace
    try:  # [tool.compile-lint] fix-in / op-namespace, when the project's config defines them
        from compile_lint.config import setting

        if not fo.fix_in and setting("fix_in"):
            fo.fix_in = tuple(setting("fix_in"))
        if op_namespace is None and setting("op_namespace"):
            fo.op_namespace = setting("op_namespace")
    except Exception:
        pass
    return options_from_config(paths[0] if paths else ".", fo)


def _echo_err(msg: str) -> None:
    print(msg, file=sys.stderr)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def show_diff(result, fo: FixOptions, out=None) -> int:
    """``scan --diff``: print the unified diff of the fixes ``--fix`` would apply; exit 1 when there is one."""
    out = out or sys.stdout
    planning = plan_all(result, fo)
    chosen = [p for p in planning.plans if allowed(p, fo.unsafe)]
    rep = apply_fixes(chosen, unsafe=fo.unsafe, write=False)
    if rep.diff:
        out.write(rep.diff)
    unsafe = [p for p in planning.plans if not allowed(p, fo.unsafe)]
    _summary(rep.applied, unsafe, planning.unfixable, dry=True)
    return 1 if rep.diff else 0


def _summary(applied, unsafe, unfixable, dry: bool, remaining: Optional[list] = None) -> None:
    verb = "would apply" if dry else "applied"
    if applied:
        kinds = sorted({p.fixer for p in applied})
        files = sorted({f for p in applied for f in p.files})
        _echo_err(f"compile-lint: {verb} {_plural(len(applied), 'fix')} ({', '.join(kinds)}) to "
                  f"{_plural(len(files), 'file')}")
        for p in applied:
            _echo_err(f"  {p.summary()}")
    else:
        _echo_err(f"compile-lint: no fix {'to apply' if dry else 'applied'}")
    if unsafe:
        _echo_err(f"compile-lint: {_plural(len(unsafe), 'unsafe fix')} available with --unsafe-fixes:")
        for p in unsafe:
            _echo_err(f"  {p.summary()} [{p.safety_reason}]")
    if unfixable:
        _echo_err(f"compile-lint: no automatic fix for {_plural(len(unfixable), 'finding')}:")
        for u in unfixable[:20]:
            f = u.finding
            reasons = "; ".join(f"{r.fixer}: {r.reason}" for r in u.refusals) or "no fixer applies"
            _echo_err(f"  {f.path}:{f.line} {f.rule}: {reasons}")
        if len(unfixable) > 20:
            _echo_err(f"  ... and {len(unfixable) - 20} more")
    if remaining is not None:
        _echo_err(f"compile-lint: {_plural(len(remaining), 'finding')} remain after the re-scan")


def apply_and_rescan(scan_options, result, fo: FixOptions):
    """``scan --fix``: apply, re-scan until nothing changes; returns (report, last ScanResult)."""
    rep = fix(scan_options, fo, write=True, result=result)
    last = rep.result if rep.result is not None else result
    unsafe = [p for p, why in rep.skipped if why.startswith("unsafe fix")]
    _summary(rep.applied, unsafe, rep.unfixable, dry=False, remaining=list(last.findings))
    for p, why in rep.skipped:
        if not why.startswith("unsafe fix"):
            _echo_err(f"compile-lint: skipped {p.summary()}: {why}")
    return rep, last
