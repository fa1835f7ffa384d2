"""SARIF 2.1.0 (OASIS): one run, every rule in ``tool.driver.rules`` with its documentation as help, one result
per finding with the call path from the compiled region to the hazard as a code flow (one thread-flow location
per hop), and ``fixes`` where a finding carries edits.

Paths are URIs relative to ``%SRCROOT%`` (the working directory by default: the repository root in CI, which is
what GitHub code scanning expects); files outside it are absolute ``file://`` URIs.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Optional
from urllib.parse import quote

from compile_lint import __version__

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
LEVEL = {"error": "error", "warning": "warning", "note": "note"}


def _first_sentence(text: str) -> str:
    text = " ".join(text.split())
    for end in (". ", ".\n"):
        i = text.find(end)
        if i != -1:
            return text[: i + 1]
    return text


def rule_descriptor(rule) -> dict:
    from compile_lint.ruledef import BREAK, SILENT

    level = "error" if rule.kind == BREAK else "warning" if rule.kind == SILENT else "note"
    doc = rule.documentation()
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": _first_sentence(rule.what)},
        "fullDescription": {"text": " ".join(rule.what.split())},
        "help": {"text": doc, "markdown": doc},
        "defaultConfiguration": {"level": level},
        "properties": {"tags": ["torch.compile", rule.family or "compile-lint", rule.kind],
                       "dynamo": rule.dynamo.describe(),
                       "precision": "high" if rule.kind != "note" else "medium"},
    }


class _Locator:
    def __init__(self, base: Path):
        self.base = Path(base).absolute()

    def artifact(self, path: str) -> dict:
        p = Path(path)
        if not p.is_absolute():
            return {"uri": quote(p.as_posix()), "uriBaseId": SRCROOT}
        try:
            rel = p.relative_to(self.base)
            return {"uri": quote(rel.as_posix()), "uriBaseId": SRCROOT}
        except ValueError:
            return {"uri": p.as_uri()}

    def location(self, path: str, line: int, col: Optional[int] = None, message: Optional[str] = None) -> dict:
        region = {"startLine": max(1, int(line or 1))}
        if col:
            region["startColumn"] = max(1, int(col))
        loc = {"physicalLocation": {"artifactLocation": self.artifact(path), "region": region}}
        if message:
            loc["message"] = {"text": message}
        return loc


def _get(obj, *names, default=None):
    for n in names:
        if isinstance(obj, dict) and n in obj:
            return obj[n]
        if not isinstance(obj, dict) and hasattr(obj, n):
            return getattr(obj, n)
    return default


def sarif_fix(fix, loc: _Locator) -> Optional[dict]:
    """A SARIF ``fix`` from one of a finding's fixes (a mapping or an object), either

    - with ``files`` (path -> new text) and ``originals`` (path -> old text, None for a new file), as the fixers'
      ``FixPlan`` carries: one whole-file replacement per file (unambiguous whatever the edit kinds), or
    - with ``edits``, each with ``path``, ``start_line``/``line``, ``start_col``/``col``, ``end_line``,
      ``end_col`` (1-based, end exclusive) and ``replacement``.

    Anything else (a bare fixer id) has no SARIF form and is left out."""
    desc = _get(fix, "description", "title", "message", "fixer", "id", default="compile-lint fix")
    desc = str(desc).strip().splitlines()[0] if str(desc).strip() else "compile-lint fix"
    files, originals = _get(fix, "files"), _get(fix, "originals")
    if isinstance(files, dict) and files and isinstance(originals, dict):
        changes = []
        for path, new in files.items():
            old = originals.get(path)
            region = {"charOffset": 0, "charLength": len(old or "")}
            changes.append({"artifactLocation": loc.artifact(str(path)),
                            "replacements": [{"deletedRegion": region, "insertedContent": {"text": str(new)}}]})
        return {"description": {"text": desc}, "artifactChanges": changes}
    edits = _get(fix, "edits", "changes")
    if not edits or isinstance(fix, str):
        return None
    changes: dict = {}
    for e in edits:
        path = _get(e, "path", "file")
        sl = _get(e, "start_line", "line")
        text = _get(e, "replacement", "new_text", "inserted")
        if path is None or sl is None or text is None:
            return None
        sc = int(_get(e, "start_col", "col", default=1))
        deleted = {"startLine": int(sl), "startColumn": sc, "endLine": int(_get(e, "end_line", default=sl)),
                   "endColumn": int(_get(e, "end_col", default=sc))}
        changes.setdefault(str(path), []).append({"deletedRegion": deleted, "insertedContent": {"text": str(text)}})
    return {"description": {"text": desc},
            "artifactChanges": [{"artifactLocation": loc.artifact(p), "replacements": r} for p, r in changes.items()]}


def result_for(f, rule_index: dict, loc: _Locator, fingerprint_base: list) -> dict:
    r = f.region
    fg = {True: "fullgraph=True", False: "fullgraph=False", None: "fullgraph unknown"}[r.fullgraph]
    text = f.message.rstrip(".") + "."
    if f.severity != "note" and f.dynamo:
        text += f" Dynamo{' may stop' if f.conditions else ''}: {f.dynamo.rstrip('.')}."
    if f.conditions:
        text += " Only if: " + "; ".join(c.describe() for c in f.conditions) + "."
    if f.trace:
        text += f" Reached from compiled region {r.qualname} ({r.kind}, {fg})"
        text += f" and {f.regions_reaching - 1} more." if f.regions_reaching > 1 else "."
    res = {
        "ruleId": f.rule,
        "level": LEVEL.get(f.severity, "warning"),
        "message": {"text": text},
        "locations": [loc.location(f.path, f.line, f.col)],
        "partialFingerprints": {"compileLint/v1": _portable_fingerprint(f, fingerprint_base)},
        "properties": {"qualname": f.qualname, "callee": f.callee, "fixPoint": f.fix_point,
                       "region": {"path": loc.artifact(r.path)["uri"], "line": r.line,
                                  "qualname": r.qualname, "kind": r.kind, "fullgraph": r.fullgraph},
                       "regionsReaching": f.regions_reaching, "certain": f.certain,
                       "conditions": [{"path": loc.artifact(c.path)["uri"], "line": c.line, "text": c.text}
                                      for c in f.conditions]},
    }
    if f.rule in rule_index:
        res["ruleIndex"] = rule_index[f.rule]
    if f.trace:
        res["relatedLocations"] = [dict(loc.location(r.path, r.line, None, f"compiled region: {r.qualname} "
                                                     f"({r.kind}, {fg})"), id=0)]
        tfl = []
        for i, fr in enumerate(f.trace):
            last = i == len(f.trace) - 1
            msg = f"in {fr.qualname}: " + (f"calls {f.callee} (hazard)" if last and f.callee else
                                            "hazard" if last else "calls the next function on the path")
            tfl.append({"location": loc.location(fr.path, fr.line, f.col if last and fr.line == f.line else None,
                                                 msg),
                        "nestingLevel": i, "executionOrder": i + 1,
                        "kinds": ["call"] if not last else ["call", "danger"]})
        res["codeFlows"] = [{"message": {"text": f"call path from {r.qualname} to the hazard"},
                             "threadFlows": [{"locations": tfl}]}]
    fixes = [x for x in (sarif_fix(fx, loc) for fx in (f.fixes or ())) if x]
    if fixes:
        res["fixes"] = fixes
    other = [fx for fx in (f.fixes or ()) if isinstance(fx, str)]
    if other:
        res["properties"]["fixers"] = other
    return res


def _portable_fingerprint(f, roots: list) -> str:
    """``Finding.fingerprint()`` of the finding with its paths as reported (relative to the scanned roots), so
    the same hazard has the same fingerprint in every checkout."""
    import dataclasses

    from ..findings import Frame, RegionRef
    from ..postwalk import relpath

    r = f.region
    g = dataclasses.replace(f, path=relpath(f.path, roots),
                            region=RegionRef(relpath(r.path, roots), r.line, r.qualname, r.fullgraph, r.kind),
                            trace=tuple(Frame(relpath(x.path, roots), x.line, x.qualname) for x in f.trace))
    return g.fingerprint()


def to_sarif_dict(result, base_dir=None) -> dict:
    from compile_lint.rules import ALL_RULES

    loc = _Locator(Path(base_dir) if base_dir else Path.cwd())
    rules = [rule_descriptor(r) for r in ALL_RULES.values()]
    rule_index = {r["id"]: i for i, r in enumerate(rules)}
    results = [result_for(f, rule_index, loc, result.roots) for f in result.findings]
    notifications = [{"level": "warning", "message": {"text": f"skipped {p}: {why}"},
                      "locations": [loc.location(p, 1)] if os.path.isabs(p) else []}
                     for p, why in result.problems]
    cov = getattr(result, "coverage", None)
    if cov is not None:
        # what was not analysed is part of the result (code scanning shows these on the tool's run)
        for u in cov.unresolved:
            notifications.append({"level": "warning", "descriptor": {"id": "compile-lint/unanalysed-region"},
                                  "message": {"text": f"compiled region not analysed: {u.kind}: {u.reason}"},
                                  "locations": [loc.location(u.path, u.line)]})
        for m in cov.missing_libraries:
            notifications.append({"level": "note", "descriptor": {"id": "compile-lint/library-not-found"},
                                  "message": {"text": f"library `{m.name}` not found on the search path "
                                                      f"(imported {m.count} time(s)); calls into it were not "
                                                      f"followed"},
                                  "locations": []})
    for n in notifications:
        if not n["locations"]:
            del n["locations"]
    run = {
        "tool": {"driver": {"name": "compile-lint", "version": __version__, "semanticVersion": __version__,
                            "rules": rules}},
        "originalUriBaseIds": {SRCROOT: {"uri": loc.base.as_uri() + "/"}},
        "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notifications}],
        "results": results,
        "columnKind": "unicodeCodePoints",
        "properties": {"traceRules": result.trace_rules_source, "stats": result.stats,
                       "coverage": cov.to_dict(lambda p: _rel_or_abs(p, result.roots)) if cov is not None else None},
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def _rel_or_abs(path: str, roots: list) -> str:
    from ..postwalk import relpath

    return relpath(path, roots)


def to_sarif(result, base_dir=None) -> str:
    return json.dumps(to_sarif_dict(result, base_dir), indent=2)
