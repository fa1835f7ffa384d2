"""The command line: exit codes like ruff's, one-line errors, the JSON schema, `graph`, `rules`."""
import json
import os
import subprocess
import sys
from pathlib import Path

CORPUS = Path(__file__).parent / "corpus" / "cases"


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "compile_lint.cli", *args], capture_output=True, text=True,
                          cwd=cwd, env=dict(os.environ, PYTHONWARNINGS="ignore"))


def test_exit_codes(tmp_path):
    clean = tmp_path / "clean.py"
    clean.write_text("import torch\nf = torch.compile(lambda x: x * 2, fullgraph=True)\n")
    assert cli("scan", str(clean), "--no-cache").returncode == 0
    r = cli("scan", str(CORPUS / "c001_subprocess_run_direct.py"), "--no-cache")
    assert r.returncode == 1
    assert "CL101" in r.stdout and "c001_subprocess_run_direct.py:11" in r.stdout


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    for args in (["scan", str(tmp_path / "missing")], ["scan", "--bogus", "."], ["rule", "CL999"], ["scan"]):
        r = cli(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert "Traceback" not in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_json_schema():
    r = cli("scan", str(CORPUS / "c005_subprocess_cross_module_from_import.py"), str(CORPUS / "helpers_pkg"),
            "--format", "json", "--no-cache")
    doc = json.loads(r.stdout)
    assert set(doc) >= {"version", "findings", "stats"}
    f = next(x for x in doc["findings"] if x["rule"] == "CL101")
    assert set(f) >= {"rule", "severity", "path", "line", "col", "qualname", "message", "dynamo", "region", "trace",
                      "fixes"}
    assert f["severity"] == "error"
    assert (f["path"], f["line"], f["qualname"]) == ("helpers_pkg/jit_env.py", 22, "get_cuda_version")
    assert f["region"] == {"path": "c005_subprocess_cross_module_from_import.py", "line": 17, "qualname": "f",
                           "fullgraph": True, "kind": "torch.compile"}
    assert [(t["path"], t["line"], t["qualname"]) for t in f["trace"]] == [
        ("c005_subprocess_cross_module_from_import.py", 12, "f"), ("helpers_pkg/jit_env.py", 22, "get_cuda_version")]
    assert "GB0007" in f["dynamo"]


def test_select_and_ignore():
    r = cli("scan", str(CORPUS), "--no-cache", "--format", "json", "--select", "CL2")
    assert {f["rule"][:3] for f in json.loads(r.stdout)["findings"]} == {"CL2"}
    r = cli("scan", str(CORPUS), "--no-cache", "--format", "json", "--ignore", "CL1,CL2,CL3")
    assert json.loads(r.stdout)["findings"] == [] and r.returncode == 0


def test_graph_adjacency_and_paths():
    r = cli("graph", str(CORPUS / "c065_flashinfer_like_cold.py"), str(CORPUS / "helpers_pkg"), "--no-cache")
    g = json.loads(r.stdout)
    assert "helpers_pkg.flashinfer_like.get_fp4_quantization_module" in g["helpers_pkg.flashinfer_like.fp4_quantize"]
    assert all(isinstance(v, list) for v in g.values())
    assert all(callee in g for callees in g.values() for callee in callees)  # every node listed
    r = cli("graph", str(CORPUS / "c065_flashinfer_like_cold.py"), str(CORPUS / "helpers_pkg"), "--no-cache",
            "--from", "f", "--to", "subprocess.check_output")
    assert r.returncode == 0
    first = r.stdout.splitlines()[0].split(" -> ")
    assert first[0].endswith(".f") and first[-1] == "subprocess.check_output"
    assert "helpers_pkg.jit_env.get_cuda_version" in first


def test_rules_listing_and_docs():
    r = cli("rules")
    assert r.returncode == 0 and "CL101" in r.stdout and "CL201" in r.stdout
    r = cli("rule", "cl101")
    assert r.returncode == 0 and "## Why is this bad" in r.stdout and "GB0007" in r.stdout


def test_graph_unknown_names_are_an_error_with_close_matches():
    args = ("graph", str(CORPUS / "c065_flashinfer_like_cold.py"), str(CORPUS / "helpers_pkg"), "--no-cache", "-q")
    r = cli(*args, "--from", "fp4_quantise", "--to", "subprocess.check_output")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip() == ("compile-lint: error: --from fp4_quantise: no such function in the call graph of "
                                "the regions; did you mean helpers_pkg.flashinfer_like.fp4_quantize, "
                                "helpers_pkg.flashinfer_like.LoadedModule.fp4_quantize?")
    r = cli(*args, "--from", "f", "--to", "Nope")
    assert r.returncode == 2 and r.stderr.startswith("compile-lint: error: --to Nope: no such function")
    # a known pair without a path is still "no path" (exit 1)
    r = cli(*args, "--from", "get_cuda_version", "--to", "fp4_quantize")
    assert r.returncode == 1 and "no path from get_cuda_version to fp4_quantize" in r.stderr
