"""Report: findings -> text / json (and sarif / github, see the sibling modules)."""
from __future__ import annotations

import json

from compile_lint import __version__

from ..engine import ScanResult, relpath
from ..findings import Finding

JSON_SCHEMA_VERSION = "1"


def finding_to_dict(f: Finding, roots: list) -> dict:
    rp = lambda p: relpath(p, roots)  # noqa: E731
    return {
        "rule": f.rule,
        "severity": f.severity,
        "path": rp(f.path),
        "line": f.line,
        "col": f.col,
        "qualname": f.qualname,
        "message": f.message,
        "dynamo": f.dynamo,
        "callee": f.callee,
        "region": {
            "path": rp(f.region.path),
            "line": f.region.line,
            "qualname": f.region.qualname,
            "fullgraph": f.region.fullgraph,
            "kind": f.region.kind,
        },
        "trace": [{"path": rp(fr.path), "line": fr.line, "qualname": fr.qualname} for fr in f.trace],
        "regions_reaching": f.regions_reaching,
        "other_regions": [
            {"path": rp(r.path), "line": r.line, "qualname": r.qualname, "fullgraph": r.fullgraph, "kind": r.kind}
            for r in f.other_regions
        ],
        "fix_point": f.fix_point,
        # undecided branches on the path: the hazard is met only if each holds (empty: on every trace)
        "certain": f.certain,
        "conditions": [{"path": rp(c.path), "line": c.line, "text": c.text} for c in f.conditions],
        "fingerprint": f.fingerprint(),
        "fixes": list(f.fixes),
    }


def fix_points(findings: list) -> list:
    """[(fix point, hazards at warning level or above, regions reaching them)], most hazards first."""
    groups: dict = {}
    for f in findings:
        if f.severity == "note" or not f.fix_point:
            continue
        hazards, regions = groups.setdefault(f.fix_point, (set(), set()))
        hazards.add((f.path, f.line, f.rule))
        for r in (f.region,) + tuple(f.other_regions):
            regions.add((r.path, r.line, r.qualname))
    rows = [(name, len(h), len(r)) for name, (h, r) in groups.items()]
    return sorted(rows, key=lambda x: (-x[1], x[0]))


def to_json(result: ScanResult) -> str:
    doc = {
        "version": __version__,
        "schema": JSON_SCHEMA_VERSION,
        "trace_rules": result.trace_rules_source,
        "findings": [finding_to_dict(f, result.roots) for f in result.findings],
        "stats": result.stats,
        "skipped_files": [{"path": p, "reason": r} for p, r in result.problems],
    }
    return dumps_document(doc)


def dumps_document(doc: dict) -> str:
    """JSON with one line per list element (one finding per line): readable, greppable and diffable, and
    written by the C encoder -- ``indent=2`` goes through the pure-Python one, 2 s for 3,000 findings."""
    fields = []
    for key, value in doc.items():
        if isinstance(value, list) and value:
            text = "[\n  " + ",\n  ".join(json.dumps(x) for x in value) + "\n ]"
        else:
            text = json.dumps(value)
        fields.append(f" {json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(fields) + "\n}"


def to_text(result: ScanResult, show_paths: bool = True, color: bool = False, stats: bool = False) -> str:
    def c(code: str, s: str) -> str:
        return f"\x1b[{code}m{s}\x1b[0m" if color else s

    sev_color = {"error": "31;1", "warning": "33;1", "note": "36"}
    lines = []
    for f in result.findings:
        rp = lambda p: relpath(p, result.roots)  # noqa: E731
        head = f"{rp(f.path)}:{f.line}:{f.col}: {c('1', f.rule)} {c(sev_color[f.severity], f.severity)}: {f.message}"
        lines.append(head)
        if f.severity != "note":
            lines.append(f"  dynamo: {'may stop: ' if f.conditions and f.dynamo else ''}{f.dynamo}")
        for cond in f.conditions:
            lines.append(f"  only if: {cond.text}  ({rp(cond.path)}:{cond.line})")
        if show_paths and f.trace:  # (CL302 notes have no call path)
            r = f.region
            fg = {True: "fullgraph=True", False: "fullgraph=False", None: "fullgraph unknown"}[r.fullgraph]
            more = f" (+{f.regions_reaching - 1} more regions)" if f.regions_reaching > 1 else ""
            lines.append(f"  region: {rp(r.path)}:{r.line} {r.kind} {r.qualname} [{fg}]{more}")
            for i, fr in enumerate(f.trace):
                arrow = "└─" if i == len(f.trace) - 1 else "├─"
                tail = f"  ← {f.callee}" if i == len(f.trace) - 1 and f.callee else ""
                lines.append(f"    {arrow} {rp(fr.path)}:{fr.line} in {fr.qualname}{tail}")
        lines.append("")
    points = fix_points(result.findings)
    if len(points) > 1:
        lines.append("By fix point (the outermost function on the path that owns the hazards):")
        for name, n_hazards, n_regions in points[:20]:
            lines.append(f"  {name}: {n_hazards} hazard(s), reached from {n_regions} region(s)")
        if len(points) > 20:
            lines.append(f"  ... and {len(points) - 20} more")
        lines.append("")
    counts = {}
    for f in result.findings:
        counts[f.severity] = counts.get(f.severity, 0) + 1
    summary = ", ".join(f"{counts[s]} {s}{'s' if counts[s] != 1 else ''}" for s in ("error", "warning", "note")
                        if s in counts) or "no findings"
    lines.append(f"Found {summary} in {result.stats['regions']} compiled region(s) "
                 f"({result.stats['files_discovered']} files scanned; trace rules: {result.trace_rules_source}).")
    if result.stats.get("suppressed"):
        lines.append(f"{result.stats['suppressed']} finding(s) suppressed inline.")
    if stats:
        lines.append("")
        lines.append("Statistics:")
        for k, v in result.stats.items():
            lines.append(f"  {k}: {v}")
        for p, why in result.problems[:50]:
            lines.append(f"  skipped {p}: {why}")
    return "\n".join(lines) + "\n"
