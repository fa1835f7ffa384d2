"""Baselines: record today's findings, then report only new ones.

``compile-lint scan . --baseline .compile-lint-baseline.json --write-baseline`` records every current finding
by ``Finding.fingerprint()`` (rule, file, enclosing function, callee and region: stable when lines move).
``--baseline FILE`` alone then drops the recorded findings from the report.  Paths are made relative to the
baseline file's directory before fingerprinting, so a baseline written in one checkout works in another.
Fingerprints are counted: two identical findings recorded once each leave a third one reported as new.
"""
from __future__ import annotations

import dataclasses
import json
import os
from collections import Counter
from pathlib import Path

from .engine import ScanError
from .findings import Frame, RegionRef

BASELINE_VERSION = 1


def _rel(path: str, base: str) -> str:
    try:
        rel = os.path.relpath(path, base)
    except ValueError:
        return path
    return rel.replace(os.sep, "/") if not rel.startswith("..") else path


def portable(f, base: str):
    """A copy of the finding with its paths relative to ``base`` (what the baseline fingerprints)."""
    r = f.region
    return dataclasses.replace(
        f, path=_rel(f.path, base),
        region=RegionRef(_rel(r.path, base), r.line, r.qualname, r.fullgraph, r.kind),
        trace=tuple(Frame(_rel(fr.path, base), fr.line, fr.qualname) for fr in f.trace),
    )


def fingerprint(f, base: str) -> str:
    return portable(f, base).fingerprint()


def write_baseline(path, findings: list) -> int:
    path = Path(path).absolute()
    base = str(path.parent)
    entries = []
    for f in findings:
        p = portable(f, base)
        entries.append({"fingerprint": p.fingerprint(), "rule": p.rule, "path": p.path, "line": p.line,
                        "qualname": p.qualname, "callee": p.callee, "message": p.message})
    entries.sort(key=lambda e: (e["path"], e["line"], e["rule"]))
    doc = {"tool": "compile-lint", "version": BASELINE_VERSION, "findings": entries}
    from .atomic import write_atomic

    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, (json.dumps(doc, indent=1) + "\n").encode())
    return len(entries)


def load_baseline(path) -> Counter:
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise ScanError(f"baseline file not found: {path} (create it with --baseline {path} --write-baseline)") \
            from None
    except (OSError, ValueError) as e:
        raise ScanError(f"cannot read baseline {path}: {e}") from None
    if not isinstance(doc, dict) or doc.get("tool") != "compile-lint" or not isinstance(doc.get("findings"), list):
        raise ScanError(f"{path} is not a compile-lint baseline (expected {{\"tool\": \"compile-lint\", "
                        f"\"findings\": [...]}})")
    if doc.get("version") != BASELINE_VERSION:
        raise ScanError(f"{path}: unsupported baseline version {doc.get('version')!r} (expected {BASELINE_VERSION})")
    try:
        return Counter(e["fingerprint"] for e in doc["findings"])
    except (KeyError, TypeError):
        raise ScanError(f"{path}: every baseline entry needs a 'fingerprint'") from None


def new_findings(findings: list, path) -> tuple:
    """(findings not in the baseline, number dropped)."""
    known = load_baseline(path)
    base = str(Path(path).absolute().parent)
    out, dropped = [], 0
    for f in findings:
        fp = fingerprint(f, base)
        if known[fp] > 0:
            known[fp] -= 1
            dropped += 1
            continue
        out.append(f)
    return out, dropped
