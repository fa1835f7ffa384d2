"""Library mode (``scan --public-api PACKAGE``): which public APIs of a package are compile-safe.

Each public function is compiled, in the analyzer's mind, with ``fullgraph=True``; an API is *unsafe* when
any error-level hazard is reachable from it, and the table names the most direct one with its path
(FlashInfer issue #2733 asks for exactly this list).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .engine import ScanResult, relpath
from .findings import Finding


@dataclass
class ApiVerdict:
    api: str
    safe: bool
    first_hazard: Optional[Finding]


def verdicts(result: ScanResult) -> list:
    out = []
    for i, r in enumerate(result.regions):
        if r.kind != "public-api":
            continue
        f = getattr(result, "first_hazard", {}).get(i)
        out.append(ApiVerdict(r.qualname, f is None, f))
    return sorted(out, key=lambda v: v.api)


def to_dict(v: ApiVerdict, roots: list) -> dict:
    d = {"api": v.api, "safe": v.safe, "first_hazard": None}
    if v.first_hazard is not None:
        f = v.first_hazard
        d["first_hazard"] = {
            "rule": f.rule, "path": relpath(f.path, roots), "line": f.line, "callee": f.callee,
            "dynamo": f.dynamo, "trace": [fr.qualname for fr in f.trace],
        }
    return d


def to_text(result: ScanResult) -> str:
    rows = verdicts(result)
    width = max((len(v.api) for v in rows), default=10)
    lines = [f"{'public API':<{width}}  verdict  first hazard (and the path to it)"]
    for v in rows:
        if v.safe:
            lines.append(f"{v.api:<{width}}  safe")
            continue
        f = v.first_hazard
        path = " → ".join(fr.qualname for fr in f.trace)
        lines.append(f"{v.api:<{width}}  UNSAFE   {f.rule} {f.callee} at {relpath(f.path, result.roots)}:{f.line}"
                     f"  ({path})")
    unsafe = sum(1 for v in rows if not v.safe)
    lines.append(f"\n{len(rows) - unsafe} of {len(rows)} public APIs are compile-safe; {unsafe} reach a hazard "
                 f"(fullgraph=True).")
    return "\n".join(lines) + "\n"
