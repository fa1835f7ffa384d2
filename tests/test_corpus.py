"""The analyzer against the measured corpus: recall must be 100%, precision at least 98% (expected.json); and
against every measured stop (corpus_stops.json): every stop reported, every error finding at a stop."""
import json
from pathlib import Path

from corpus_eval import CORPUS, STOPS, measured_overrides, score, score_stops

from compile_lint.report import to_json


def test_corpus_recall_and_precision(run_scan, capsys):
    # --show-disabled: the HAZARD lines inside a torch.compiler.disable'd function (c056, c070) are shown, as notes
    result = run_scan(CORPUS / "cases", show_disabled=True)
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


# Where the analyzer and the every-stop measurement disagree (issue [D] item 3), measured on torch 2.13.0+cpu.  The
# test fails when one is fixed (take it out) as well as when a new one appears: the list can only shrink.  Empty
# since c003's `p.wait()` (subprocess.Popen.wait, measured GB0142) is CL101 and a torch.compiler.disable'd body
# is not walked (c056, c070: the disable itself is the stop, CL116; its body only with --show-disabled, as notes).
KNOWN_STOP_DISAGREEMENTS: set = set()


def test_every_measured_stop_is_reported_and_every_error_is_a_stop(run_scan, capsys):
    """Reads the committed corpus_stops.json (no torch run here; tests/test_oracle.py re-measures it)."""
    result = run_scan(CORPUS / "cases")
    s = score_stops(json.loads(to_json(result))["findings"])
    doc = json.loads(STOPS.read_text())
    with capsys.disabled():
        print(f"\ncorpus, every stop (measured on torch {doc['measured_on']['torch']}): "
              f"recall {s.recall:.1%} ({s.found}/{s.stops} stops, {len(s.multi)} cases with more than one), "
              f"precision {s.precision:.1%} ({s.at_stops}/{s.errors} error findings at a measured stop)"
              + "".join(f"\n  missed {m}" for m in s.missed) + "".join(f"\n  not a stop {m}" for m in s.not_a_stop))
    assert s.stops and s.errors
    assert s.disagreements == KNOWN_STOP_DISAGREEMENTS, (
        "the analyzer and the measured stops disagree elsewhere than the known analyzer bugs:\n"
        + "\n".join(s.missed + s.not_a_stop)
        + f"\nnew: {sorted(s.disagreements - KNOWN_STOP_DISAGREEMENTS)}"
        + f"\nno longer (remove from KNOWN_STOP_DISAGREEMENTS): {sorted(KNOWN_STOP_DISAGREEMENTS - s.disagreements)}")


def test_score_stops_counts_what_it_should():
    """A later stop reported as a conditional warning counts, a first stop as a warning does not; an error at a
    line that is no stop is a disagreement."""
    def f(line, severity="error", conditions=None, case="c901_x"):
        return {"path": f"/c/cases/{case}.py", "line": line, "severity": severity, "rule": "CL1",
                "conditions": conditions or [], "region": {"path": f"/c/cases/{case}.py"}}

    stops = {"c901_x": {"stops": [{"at": "c901_x.py:3", "gb": "GB1", "first_line": "a"},
                                {"at": "c901_x.py:5", "gb": "GB1", "first_line": "b"}]},
             "c902_y": {"stops": []}}
    s = score_stops([f(3), f(5, "warning", ["cold"]), f(9)], stops)
    assert (s.found, s.stops, s.at_stops, s.errors, s.multi) == (2, 2, 1, 2, ["c901_x"])
    assert len(s.not_a_stop) == 1 and "c901_x.py:9" in s.not_a_stop[0]
    s = score_stops([f(3, "warning", ["x"]), f(5, "warning"), f(2, case="c902_y")], stops)
    assert s.found == 0 and len(s.missed) == 2 and s.errors == 1 and s.at_stops == 0


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
    """The predicted Dynamo outcome names the graph-break id Dynamo gave for each error case (a case's lines
    behind a torch.compiler.disable are shown with --show-disabled)."""
    expected = json.loads((CORPUS / "expected.json").read_text())["cases"]
    result = run_scan(CORPUS / "cases", show_disabled=True)
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
