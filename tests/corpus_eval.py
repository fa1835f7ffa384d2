"""Score the analyzer against the measured corpus (tests/corpus/expected.json).

Recall: every line an `error` case lists is reported as an error, every line a `silent` case lists is
reported at warning level or above.  Precision: of the warning-or-error findings that fall in corpus cases,
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
        for line in case["lines"]:
            s.expected += 1
            hits = at.get(line, []) or at.get(Path(line).name, [])
            need_error = case["lint"] == "error"
            if hits and (not need_error or any(h["severity"] == "error" for h in hits)):
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
