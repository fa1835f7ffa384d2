"""The comparison: compile-lint's findings and walk against Dynamo's outcome and the code that ran.

Per model (all its variants together):

- **error precision**: an error finding is true when its hazard line is a line where Dynamo stopped for some
  variant of that model, or a line on the user stack Dynamo printed for that stop (the call that leads to it);
- **stop recall**: every distinct stop line is reported from the model's entry: as an error when the default
  inputs stop there, at least as a warning when only another variant's inputs do;
- **warnings**: the number of warning findings (a flood of warnings is noise too);
- **reach recall**: the share of the functions Dynamo traced (any variant) that the walk entered; each miss
  with the nearest calling function of the environment and its line (when the walk entered that caller, the
  call at that line is one it did not resolve);
- **over-reach**: functions the walk entered that no variant executed or traced (tracked, no target).
"""
from __future__ import annotations

from dataclasses import dataclass, field

LOUD = ("error", "warning")


def module_of(path: str) -> str:
    """``transformers/models/llama/modeling_llama.py`` -> ``transformers.models.llama.modeling_llama``."""
    mod = path[:-3] if path.endswith(".py") else path
    if mod.endswith("/__init__"):
        mod = mod[: -len("/__init__")]
    return mod.replace("/", ".")


def _generated(key) -> bool:
    """A frame Dynamo made itself: the function that resumes a frame after a graph break."""
    return "torch_dynamo_resume_in_" in key[2]


def _fn(key) -> tuple:
    path, _line, qual = key
    return (module_of(path), qual)


@dataclass
class Stop:
    path: str
    line: int
    variants: list
    reason: str
    gb: str | None
    in_default: bool
    reported: str = ""  # the severity it was reported with, "" when not

    @property
    def hit(self) -> bool:
        return self.reported == "error" if self.in_default else self.reported in LOUD

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass
class CaseScore:
    name: str
    family: str
    default: str  # the default inputs' outcome under fullgraph, in words
    skipped: str = ""  # why the model was not measured
    variants_measured: int = 0
    variants_failed: list = field(default_factory=list)  # (variant, why)
    stops: list = field(default_factory=list)
    errors: int = 0
    true_errors: int = 0
    false_errors: list = field(default_factory=list)  # "path:line rule callee"
    warnings: int = 0
    traced: int = 0
    reached_traced: int = 0
    reach_misses: list = field(default_factory=list)  # "module:qualname (called at caller path:line[, caller walked])"
    over_reach: int = 0

    @property
    def stop_hits(self) -> int:
        return sum(s.hit for s in self.stops)

    @property
    def reach_recall(self) -> float:
        return self.reached_traced / self.traced if self.traced else 1.0


def _stops(rows: list) -> tuple:
    """{(path, line): Stop} and the set of (path, line) on any stop's user stack."""
    stops: dict = {}
    stack_lines: set = set()

    def add(stop, reason, gb, variant, stack):
        for path, line in stack or ():
            stack_lines.add((path, line))
        if not stop:
            return
        key = (stop["path"], stop["line"])
        s = stops.get(key)
        if s is None:
            s = stops[key] = Stop(stop["path"], stop["line"], [], reason, gb, False)
        if variant not in s.variants:
            s.variants.append(variant)
        s.in_default = s.in_default or variant == "default"

    for r in rows:
        fg = r.get("fullgraph") or {}
        if fg.get("outcome") == "stops":
            add(fg.get("stop"), fg.get("message", ""), fg.get("gb"), r["variant"], fg.get("stack"))
        for b in r.get("breaks") or ():
            # in default mode Dynamo goes on after a break: later breaks are stops of the same inputs
            add(b.get("stop"), b.get("reason", ""), b.get("gb"), r["variant"], b.get("stack"))
    return stops, stack_lines


def score_case(case, rows: list, static: dict) -> CaseScore:
    default_row = next((r for r in rows if r["variant"] == "default"), None)
    if default_row is None or "error" in default_row:
        why = default_row.get("error", "not measured") if default_row else "not measured"
        return CaseScore(case.name, case.family, "-", skipped=why)
    fg = default_row["fullgraph"]
    default = "COMPILES" if fg["outcome"] == "compiles" else \
        f"{fg.get('gb') or fg.get('exception', '?').rsplit('.', 1)[-1]} at {_where(fg.get('stop'))}"
    sc = CaseScore(case.name, case.family, default)
    measured = [r for r in rows if "error" not in r]
    sc.variants_measured = len(measured)
    sc.variants_failed = [(r["variant"], r["error"]) for r in rows if "error" in r]
    stops, stack_lines = _stops(measured)
    findings = static.get("findings", [])
    true_lines = set(stops) | stack_lines
    by_line: dict = {}
    for f in findings:
        key = (f["path"], f["line"])
        sev = f["severity"]
        best = by_line.get(key)
        if best is None or (best != "error" and sev == "error") or (best == "note" and sev == "warning"):
            by_line[key] = sev
        if sev == "error":
            sc.errors += 1
            if key in true_lines:
                sc.true_errors += 1
            else:
                sc.false_errors.append(f"{f['path']}:{f['line']} {f['rule']} {f['callee']}")
        elif sev == "warning":
            sc.warnings += 1
    for key, s in stops.items():
        s.reported = by_line.get(key, "") if by_line.get(key) in LOUD else ""
    sc.stops = sorted(stops.values(), key=lambda s: (not s.in_default, s.path, s.line))

    traced, ran, callers = set(), set(), {}
    for r in measured:
        traced |= {_fn(k) for k in r.get("traced", ()) if not _generated(k)}
        ran |= {_fn(k) for k in r.get("executed", ())}
        for callee, caller, line in r.get("callers", ()):
            callers.setdefault(_fn(callee), (caller, line))
    reached = set(static.get("reached", ()))
    sc.traced = len(traced)
    sc.reached_traced = len(traced & reached)
    for fn in sorted(traced - reached):
        via = callers.get(fn)
        text = f"{fn[0]}:{fn[1]}"
        if via:
            caller, line = via
            walked = " (caller walked: call not resolved)" if _fn(caller) in reached else ""
            text += f" <- {caller[0]}:{line} {caller[2]}{walked}"
        sc.reach_misses.append(text)
    env_reached = {fn for fn in reached if fn[0].split(".")[0] in {m.split(".")[0] for m, _ in ran | traced}}
    sc.over_reach = len(env_reached - ran - traced)
    return sc


def _where(stop) -> str:
    return f"{stop['path']}:{stop['line']}" if stop else "(no library frame)"


@dataclass
class Totals:
    models: int = 0
    skipped: int = 0
    errors: int = 0
    true_errors: int = 0
    stops: int = 0
    stop_hits: int = 0
    warnings: int = 0
    traced: int = 0
    reached_traced: int = 0
    over_reach: int = 0

    @property
    def error_precision(self) -> float:
        return self.true_errors / self.errors if self.errors else 1.0

    @property
    def stop_recall(self) -> float:
        return self.stop_hits / self.stops if self.stops else 1.0

    @property
    def reach_recall(self) -> float:
        return self.reached_traced / self.traced if self.traced else 1.0


def totals(scores: list) -> Totals:
    t = Totals()
    for s in scores:
        if s.skipped:
            t.skipped += 1
            continue
        t.models += 1
        t.errors += s.errors
        t.true_errors += s.true_errors
        t.stops += len(s.stops)
        t.stop_hits += s.stop_hits
        t.warnings += s.warnings
        t.traced += s.traced
        t.reached_traced += s.reached_traced
        t.over_reach += s.over_reach
    return t


def table(scores: list) -> str:
    head = f"{'model':<18} {'family':<15} {'default inputs (fullgraph)':<58} {'stops':>5} {'hit':>4} " \
           f"{'err':>4} {'TP':>3} {'FP':>3} {'warn':>4} {'reach':>7} {'over':>5}"
    lines = [head, "-" * len(head)]
    for s in scores:
        if s.skipped:
            lines.append(f"{s.name:<18} {s.family:<15} skipped: {s.skipped}")
            continue
        lines.append(f"{s.name:<18} {s.family:<15} {s.default[:58]:<58} {len(s.stops):>5} {s.stop_hits:>4} "
                     f"{s.errors:>4} {s.true_errors:>3} {len(s.false_errors):>3} {s.warnings:>4} "
                     f"{s.reach_recall:>6.1%} {s.over_reach:>5}")
    t = totals(scores)
    lines.append("-" * len(head))
    precision = f"{t.error_precision:.1%} ({t.true_errors}/{t.errors})" if t.errors else "n/a (no errors)"
    lines.append(f"{t.models} models measured, {t.skipped} skipped | error precision {precision} | "
                 f"stop recall {t.stop_recall:.1%} ({t.stop_hits}/{t.stops}) | "
                 f"warnings {t.warnings} | reach recall {t.reach_recall:.1%} ({t.reached_traced}/{t.traced}) | "
                 f"over-reach {t.over_reach}")
    return "\n".join(lines)


def details(scores: list, misses: int = 8) -> str:
    out = []
    for s in scores:
        if s.skipped:
            continue
        bits = []
        for st in s.stops:
            if not st.hit:
                how = f"reported as {st.reported}" if st.reported else "not reported"
                bits.append(f"  missed stop {st.where} [{','.join(st.variants)}] {st.gb or ''} {st.reason[:70]} "
                            f"({how})")
        bits += [f"  false error {e}" for e in s.false_errors]
        bits += [f"  reach miss {m}" for m in s.reach_misses[:misses]]
        if len(s.reach_misses) > misses:
            bits.append(f"  ... {len(s.reach_misses) - misses} more reach misses")
        bits += [f"  variant not measured: {v}: {why}" for v, why in s.variants_failed]
        if bits:
            out.append(f"{s.name}:")
            out += bits
    return "\n".join(out)
