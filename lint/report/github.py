"""GitHub Actions workflow commands: one ``::error``/``::warning``/``::notice`` annotation per finding.

``::error file=pkg/jit.py,line=32,col=11,title=CL101::message`` shows on the pull request's diff.  File paths
are relative to the working directory (the repository root in a workflow); the message carries the Dynamo
outcome and the call path from the compiled region, one hop per line.
"""
from __future__ import annotations

import os

COMMAND = {"error": "error", "warning": "warning", "note": "notice"}


def escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def _path(p: str, base: str) -> str:
    try:
        rel = os.path.relpath(p, base)
    except ValueError:
        return p
    return p if rel.startswith("..") else rel.replace(os.sep, "/")


def annotation(f, base: str) -> str:
    lines = [f.message]
    if f.severity != "note" and f.dynamo:
        lines.append(f"dynamo: {f.dynamo}")
    if f.trace:
        r = f.region
        fg = {True: "fullgraph=True", False: "fullgraph=False", None: "fullgraph unknown"}[r.fullgraph]
        lines.append(f"region: {_path(r.path, base)}:{r.line} {r.kind} {r.qualname} [{fg}]")
        for fr in f.trace:
            lines.append(f"  -> {_path(fr.path, base)}:{fr.line} in {fr.qualname}")
    props = [f"file={escape_property(_path(f.path, base))}", f"line={f.line}", f"col={f.col}",
             f"title={escape_property(f.rule)}"]
    return f"::{COMMAND.get(f.severity, 'warning')} {','.join(props)}::{escape_data(chr(10).join(lines))}"


def to_github(result, base_dir=None) -> str:
    base = os.path.abspath(base_dir or os.getcwd())
    out = [annotation(f, base) for f in result.findings]
    return "\n".join(out) + ("\n" if out else "")
