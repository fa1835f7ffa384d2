"""Score the analyzer against the measured corpus (tests/corpus/expected.json).

Two scores.  :func:`score`, against expected.json (the corpus author's lines): recall: the line where an `error`
case measured its first stop is reported as an error, its other lines as errors or as warnings that name their
conditions; every line a `silent` case lists is reported at warning level or above.  Precision: of the
warning-or-error findings that fall in corpus cases, the share that is not in a `clean` case and not on a
`marked_but_must_not_flag` line.

:func:`score_stops`, against every measured stop (tests/corpus_stops.json, written by
scripts/measure_corpus_stops.py and re-measured by tests/test_oracle.py): expected.json measured each case only
up to its *first* stop; corpus_stops.json has every stop, in order (the first under fullgraph=True, the later
ones Dynamo met once the earlier ones were made opaque: tests/oracle_runner.py).  Recall: every measured stop is
reported (the first as an error, a later one as an error or a warning naming its conditions); precision: every
error finding is at a measured stop of its case.

Measured overrides.  The corpus (a byte copy of the shared one: never edited here) was measured on one torch,
and only up to each case's *first* stop.  Where the measured verdict table for the installed torch
(compile_lint/dynamo/data/verdicts-torch-*.json, re-measured by tests/test_dynamo_verdicts.py) contradicts an
expected error line, scoring follows the measurement: :func:`measured_overrides` drops an expected error line
when every call on it has a callee the table measured as `compiles` (e.g. a line whose only call is
`re.findall`, which torch 2.13 constant-folds while torch 2.11 stops at it).  The list is derived, never
written by hand: the line's calls are resolved through the file's own imports, and a line with any call that
cannot be named, or whose callee has no `compiles` verdict, is kept.  test_corpus.py prints how many lines were
dropped (none on torch 2.13.0+cpu).
"""
from __future__ import annotations

import ast
import builtins
import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

CORPUS = Path(__file__).parent / "corpus"


def installed_verdicts():
    """The bundled verdict table for the installed torch (the nearest one measured), read without importing
    torch."""
    from importlib.metadata import PackageNotFoundError, version

    from compile_lint.dynamo.verdicts import load_verdicts

    try:
        return load_verdicts(version("torch"))
    except PackageNotFoundError:
        return load_verdicts(None)


@lru_cache(maxsize=None)
def _calls_by_line(path: Path) -> dict:
    """{line: [dotted callee or None]} for a corpus file: names resolved through its imports only."""
    tree = ast.parse(path.read_text())
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    aliases[a.asname] = a.name  # import a.b as c: c is a.b
                else:
                    top = a.name.split(".")[0]
                    aliases[top] = top  # import a.b: binds a
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"

    def dotted(e):
        if isinstance(e, ast.Name):
            return aliases.get(e.id) or (f"builtins.{e.id}" if hasattr(builtins, e.id) else None)
        if isinstance(e, ast.Attribute):
            base = dotted(e.value)
            return f"{base}.{e.attr}" if base else None
        return None

    out: dict = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            out.setdefault(node.lineno, []).append(dotted(node.func))
    return out


def measured_overrides(expected: dict, verdicts) -> dict:
    """{(case, line): why} for expected error lines whose every call is measured to compile (see above)."""
    out = {}
    if verdicts is None:
        return out
    for name, case in expected.items():
        if case["lint"] != "error":
            continue
        for line in case["lines"]:
            rel, _, num = line.rpartition(":")
            calls = _calls_by_line(CORPUS / "cases" / rel).get(int(num), [])
            if calls and all(c is not None and verdicts.compiles(c) for c in calls):
                out[(name, line)] = f"{', '.join(calls)} compiles on torch {verdicts.torch} (measured)"
    return out


@dataclass
class Score:
    expected: int = 0
    found: int = 0
    flagged: int = 0
    false_positives: list = field(default_factory=list)
    missed: list = field(default_factory=list)
    dropped: dict = field(default_factory=dict)  # (case, line) -> why: measured_overrides

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


def score(findings: list, expected: dict | None = None, verdicts="installed") -> Score:
    """``verdicts``: the measured table whose `compiles` verdicts override expected error lines ("installed":
    the installed torch's; None: no overrides)."""
    expected = expected or json.loads((CORPUS / "expected.json").read_text())["cases"]
    s = Score()
    s.dropped = measured_overrides(expected, installed_verdicts() if verdicts == "installed" else verdicts)
    by_case: dict = {}
    for f in findings:
        for c in cases_of(f):
            by_case.setdefault(c, []).append(f)
    for name, case in expected.items():
        got = by_case.get(name, [])
        loud = [f for f in got if f["severity"] in ("error", "warning")]
        # what lies behind a torch.compiler.disable, shown on request (--show-disabled) as a note that names the
        # disable: Dynamo never traces it, the call of the disabled function is the measured stop (GB0098)
        behind = [f for f in got if f["severity"] == "note" and any(
            c["text"].endswith("(without its torch.compiler.disable)") for c in f.get("conditions", []))]
        at = {}
        for f in loud + behind:
            at.setdefault(f"{Path(f['path']).name}:{f['line']}", []).append(f)
            at.setdefault(f"{'/'.join(Path(f['path']).parts[-2:])}:{f['line']}", []).append(f)
        stop_is_disable = (case.get("dynamo_fullgraph") or {}).get("gb") == "GB0098"
        first_stop = _first_stop(case)
        for line in case["lines"]:
            if (name, line) in s.dropped:
                continue
            s.expected += 1
            hits = at.get(line, []) or at.get(Path(line).name, [])
            if not stop_is_disable:
                hits = [h for h in hits if h["severity"] != "note"]
            # Only the first stop of an error case was measured as one ("Dynamo raised here"); a line after it
            # is reached only once that stop is fixed, and may depend on what the walk cannot decide (a cold
            # cache: `if not self.is_compiled():`).  It must be reported, as an error or as a warning that names
            # its conditions -- or, behind a disable whose call is the measured stop (c056, c070), as the note
            # that --show-disabled gives.
            need_error = case["lint"] == "error" and (first_stop is None or line == first_stop)
            if need_error:
                hits = [h for h in hits if h["severity"] != "note"]
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


STOPS = Path(__file__).parent / "corpus_stops.json"


@dataclass
class StopScore:
    """The analyzer against every measured stop (tests/corpus_stops.json): recall over stop lines, precision over
    error findings."""
    stops: int = 0
    found: int = 0
    errors: int = 0  # error findings in corpus cases
    at_stops: int = 0  # ... of which at a measured stop line of their case
    missed: list = field(default_factory=list)
    not_a_stop: list = field(default_factory=list)
    multi: list = field(default_factory=list)  # cases with more than one stop
    disagreements: set = field(default_factory=set)  # {(case, "file:line")}: missed or not a stop

    @property
    def recall(self) -> float:
        return self.found / self.stops if self.stops else 1.0

    @property
    def precision(self) -> float:
        return self.at_stops / self.errors if self.errors else 1.0


def case_key(path: str, line: int) -> str:
    """A finding's place as the corpus names it: ``c087_x.py:11``, ``helpers_pkg/jit_env.py:22``."""
    p = Path(path)
    folder = p.parent.name  # findings name files relative to the scanned folder (cases/) or absolutely
    return f"{folder + '/' if folder not in ('', 'cases') else ''}{p.name}:{line}"


def score_stops(findings: list, stops: dict | None = None) -> StopScore:
    """Every measured stop of a case must be reported there: the first (the fullgraph stop, certain) as an error,
    a later one as an error or as a warning that names its conditions (it is reached only once the earlier
    stops are made opaque, on values the eager run had: a cold cache, a missing file).  Every error finding of a
    case must be at one of its measured stops."""
    stops = stops or json.loads(STOPS.read_text())["cases"]
    s = StopScore()
    by_case: dict = {}
    for f in findings:
        for c in cases_of(f):
            by_case.setdefault(c, []).append(f)
    for name in sorted(stops):
        measured = [st["at"] for st in stops[name]["stops"]]
        if len(measured) > 1:
            s.multi.append(name)
        got = by_case.get(name, [])
        at: dict = {}
        for f in got:
            at.setdefault(case_key(f["path"], f["line"]), []).append(f)
        for i, line in enumerate(measured):
            s.stops += 1
            hits = at.get(line, [])
            if any(h["severity"] == "error" for h in hits) or (
                    i > 0 and any(h["severity"] == "warning" and h.get("conditions") for h in hits)):
                s.found += 1
            else:
                s.disagreements.add((name, line))
                s.missed.append(f"{name}: stop {i + 1} at {line} ({stops[name]['stops'][i]['gb']} "
                                f"{stops[name]['stops'][i]['first_line']}); reported: "
                                f"{[(h['severity'], h['rule']) for h in hits] or 'nothing'}")
        for f in got:
            if f["severity"] != "error":
                continue
            s.errors += 1
            key = case_key(f["path"], f["line"])
            if key in measured:
                s.at_stops += 1
            else:
                s.disagreements.add((name, key))
                s.not_a_stop.append(f"{name}: {key} {f['rule']} error, Dynamo's stops: {measured or 'none'}")
    return s


def _first_stop(case: dict):
    """The case's measured first stop as an expected-line key (``helpers_pkg/flashinfer_like.py:34``), or None."""
    frame = (case.get("dynamo_fullgraph") or {}).get("innermost_case_frame") or ""
    where = frame.split(" ", 1)[0]
    if where.startswith("cases/"):
        where = where[len("cases/"):]
    return where or None
