"""Score the analyzer against the measured corpus (tests/corpus/expected.json).

Recall: the line where an `error` case measured its first stop is reported as an error, its other lines as
errors or as warnings that name their conditions (they were never measured as stops: see score()); every line
a `silent` case lists is reported at warning level or above.  Precision: of the warning-or-error findings that fall in corpus cases,
the share that is not in a `clean` case and not on a `marked_but_must_not_flag` line.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

CORPUS = Path(__file__).parent / "corpus"


@dataclass
class Score:
    expected: int = 0
    found: int = 0
    flagged: int = 0
    false_positives: list = field(default_factory=list)
    missed: list = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.found / self.expected if self.expected else 1.0

    @property
    def precision(self) -> float:
        return 1 - len(self.false_positives) / self.flagged if self.flagged else 1.0


def cases_of(finding: dict) -> set:
    """The corpus cases a finding belongs to: the case files of the regions that reach it."""
    out = set()
    for r in [finding["region"]] + finding.get("other_regions", []):
        name = Path(r["path"]).name
        if name.startswith("c") and name[1:4].isdigit():
            out.add(name[:-3])
    return out


def score(findings: list, expected: dict | None = None) -> Score:
    expected = expected or json.loads((CORPUS / "expected.json").read_text())["cases"]
    s = Score()
    by_case: dict = {}
    for f in findings:
        for c in cases_of(f):
            by_case.setdefault(c, []).append(f)
    for name, case in expected.items():
        got = by_case.get(name, [])
        loud = [f for f in got if f["severity"] in ("error", "warning")]
        at = {}
        for f in loud:
            at.setdefault(f"{Path(f['path']).name}:{f['line']}", []).append(f)
            at.setdefault(f"{'/'.join(Path(f['path']).parts[-2:])}:{f['line']}", []).append(f)
        first_stop = _first_stop(case)
        for line in case["lines"]:
            s.expected += 1
            hits = at.get(line, []) or at.get(Path(line).name, [])
            # Only the first stop of an error case was measured as one ("Dynamo raised here"); a line after it
            # is reached only once that stop is fixed, and may depend on what the walk cannot decide (a cold
            # cache: `if not self.is_compiled():`).  It must be reported, as an error or as a warning that names
            # its conditions.
            need_error = case["lint"] == "error" and (first_stop is None or line == first_stop)
            conditional_ok = case["lint"] == "error" and not need_error
            if hits and (not need_error or any(h["severity"] == "error" for h in hits)) and (
                    not conditional_ok or any(h["severity"] == "error" or h.get("conditions") for h in hits)):
                s.found += 1
            else:
                s.missed.append(f"{name}: {line} ({case['lint']})")
        s.flagged += len(loud)
        must_not = set(case.get("marked_but_must_not_flag", []))
        for f in loud:
            key = f"{'/'.join(Path(f['path']).parts[-2:])}:{f['line']}"
            short = f"{Path(f['path']).name}:{f['line']}"
            if case["lint"] == "clean" or key in must_not or short in must_not:
                s.false_positives.append(f"{name}: {short} {f['rule']} {f['message']}")
    return s


def _first_stop(case: dict):
    """The case's measured first stop as an expected-line key (``helpers_pkg/flashinfer_like.py:34``), or None."""
    frame = (case.get("dynamo_fullgraph") or {}).get("innermost_case_frame") or ""
    where = frame.split(" ", 1)[0]
    if where.startswith("cases/"):
        where = where[len("cases/"):]
    return where or None
