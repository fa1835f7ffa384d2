"""Library mode (``scan --public-api PACKAGE``): which public APIs of a package are compile-safe.

Each public function is compiled, in the analyzer's mind, with ``fullgraph=True``.  An API is *unsafe* when an
error-level hazard is reachable from it (every call stops Dynamo); *unsafe if* when a hazard that stops Dynamo is
reachable only behind branches the analyzer cannot decide (an argument, a config value, an environment
variable), which the table names; *safe* when neither is.  The table names the most direct hazard with its path
(FlashInfer issue #2733 asks for exactly this list).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .engine import ScanResult
from .findings import Finding
from .postwalk import relpath


UNSAFE, UNSAFE_IF, SAFE = "unsafe", "unsafe-if", "safe"


@dataclass
class ApiVerdict:
    api: str
    safe: bool
    first_hazard: Optional[Finding]
    # a hazard stops Dynamo on every call; the one shown may still carry conditions: the one met first where
    # they hold, another one met before the certain error where they do not (firsthazard.met_first)
    always: bool = False

    @property
    def status(self) -> str:
        if self.first_hazard is None:
            return SAFE
        return UNSAFE if self.always or self.first_hazard.severity == "error" else UNSAFE_IF


def verdicts(result: ScanResult) -> list:
    out = []
    for i, r in enumerate(result.regions):
        if r.kind != "public-api":
            continue
        f = getattr(result, "first_hazard", {}).get(i)
        out.append(ApiVerdict(r.qualname, f is None, f, i in getattr(result, "unsafe_always", ())))
    return sorted(out, key=lambda v: v.api)


def to_dict(v: ApiVerdict, roots: list) -> dict:
    d = {"api": v.api, "safe": v.safe, "status": v.status, "first_hazard": None}
    if v.first_hazard is not None:
        f = v.first_hazard
        d["first_hazard"] = {
            "rule": f.rule, "severity": f.severity, "path": relpath(f.path, roots), "line": f.line,
            "callee": f.callee, "dynamo": f.dynamo, "trace": [fr.qualname for fr in f.trace],
            "conditions": [{"path": relpath(c.path, roots), "line": c.line, "text": c.text} for c in f.conditions],
        }
    return d


def to_text(result: ScanResult) -> str:
    rows = verdicts(result)
    width = max((len(v.api) for v in rows), default=10)
    lines = [f"{'public API':<{width}}  verdict   first hazard (and the path to it)"]
    for v in rows:
        if v.safe:
            lines.append(f"{v.api:<{width}}  safe")
            continue
        f = v.first_hazard
        path = " → ".join(fr.qualname for fr in f.trace)
        label = "UNSAFE   " if v.status == UNSAFE else "UNSAFE IF"
        lines.append(f"{v.api:<{width}}  {label} {f.rule} {f.callee} at {relpath(f.path, result.roots)}:{f.line}"
                     f"  ({path})")
        if v.status == UNSAFE_IF:
            lines.append(f"{'':<{width}}            only if: " + "; ".join(c.text for c in f.conditions))
        elif f.conditions:
            lines.append(f"{'':<{width}}            first if: " + "; ".join(c.text for c in f.conditions)
                         + " (otherwise another hazard stops it first)")
    unsafe = sum(1 for v in rows if v.status == UNSAFE)
    unsafe_if = sum(1 for v in rows if v.status == UNSAFE_IF)
    lines.append(f"\n{len(rows) - unsafe - unsafe_if} of {len(rows)} public APIs are compile-safe; {unsafe} reach a "
                 f"hazard on every call, {unsafe_if} only under the conditions shown (fullgraph=True).")
    return "\n".join(lines) + "\n"
