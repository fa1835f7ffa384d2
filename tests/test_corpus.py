"""The analyzer against the measured corpus: recall must be 100%, precision at least 98%."""
import json
from pathlib import Path

from corpus_eval import CORPUS, measured_overrides, score

from compile_lint.report import to_json


def test_corpus_recall_and_precision(run_scan, capsys):
    result = run_scan(CORPUS / "cases")
    findings = json.loads(to_json(result))["findings"]
    s = score(findings)
    with capsys.disabled():
        print(f"\ncorpus: recall {s.recall:.1%} ({s.found}/{s.expected} lines), "
              f"precision {s.precision:.1%} ({s.flagged - len(s.false_positives)}/{s.flagged} warning+ findings); "
              f"{len(s.dropped)} expected error lines dropped by the measured verdicts"
              + "".join(f"\n  dropped {c} {line}: {why}" for (c, line), why in sorted(s.dropped.items())))
    assert not s.missed, "missed:\n" + "\n".join(s.missed)
    assert s.recall == 1.0
    assert s.precision >= 0.98, "false positives:\n" + "\n".join(s.false_positives)


def test_measured_overrides_follow_the_table():
    """An expected error line is dropped exactly when every call on it is measured to compile: with a table
    that says c104's `re.findall` and `builtins.float` compile, a line calling them is dropped; a line that
    also calls an unmeasured callee is not."""
    from compile_lint.dynamo.verdicts import Verdict, VerdictTable

    expected = {"c104_re_findall_const": {"lint": "error", "lines": ["c104_re_findall_const.py:11"]},
                "c001_subprocess_run_direct": {"lint": "error", "lines": ["c001_subprocess_run_direct.py:11"]}}
    ok = Verdict("compiles")
    table = VerdictTable("9.9", "3.11", "today", {"re.findall": ok, "builtins.float": ok})
    assert set(measured_overrides(expected, table)) == {("c104_re_findall_const", "c104_re_findall_const.py:11")}
    only_re = VerdictTable("9.9", "3.11", "today", {"re.findall": ok})
    assert measured_overrides(expected, only_re) == {}  # float(...) on the line has no verdict: kept
    assert measured_overrides(expected, None) == {}


def test_every_case_has_a_region(run_scan):
    result = run_scan(CORPUS / "cases")
    cases = {p.stem for p in (CORPUS / "cases").glob("c*.py")}
    with_region = {Path(r.path).stem for r in result.regions if r.entries}
    assert cases <= with_region
    assert all(r.fullgraph is True for r in result.regions)


def test_clean_cases_have_nothing_above_note(run_scan):
    expected = json.loads((CORPUS / "expected.json").read_text())["cases"]
    clean = {name for name, c in expected.items() if c["lint"] == "clean"}
    result = run_scan(*[CORPUS / "cases" / f"{name}.py" for name in sorted(clean)])
    loud = [f for f in result.findings if f.severity != "note"]
    assert loud == []


def test_error_case_lines_are_errors_with_the_measured_gb_family(run_scan):
    """The predicted Dynamo outcome names the graph-break id Dynamo gave for each error case."""
    expected = json.loads((CORPUS / "expected.json").read_text())["cases"]
    result = run_scan(CORPUS / "cases")
    by_line = {}
    for f in result.findings:
        for r in (f.region,) + f.other_regions:
            by_line.setdefault((Path(r.path).stem, f"{'/'.join(Path(f.path).parts[-2:])}:{f.line}"), []).append(f)
            by_line.setdefault((Path(r.path).stem, f"{Path(f.path).name}:{f.line}"), []).append(f)
    mismatched = []
    for name, case in expected.items():
        gb = (case.get("dynamo_fullgraph") or {}).get("gb")
        if case["lint"] != "error" or not gb:
            continue
        for line in case["lines"]:
            hits = by_line.get((name, line), [])
            if not any(gb in h.dynamo for h in hits) and not any(h.rule in ("CL101", "CL116") for h in hits):
                mismatched.append(f"{name} {line}: measured {gb}, predicted {[h.dynamo for h in hits]}")
    assert not mismatched, "\n".join(mismatched)
