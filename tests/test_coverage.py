"""Coverage is part of the result: a region that could not be analysed, and a library that imports could not
reach, are named in every format, and "No findings" is said only when every region was analysed (--strict
makes an unanalysed region exit 2); a hazard reached from several regions or fix points is printed once."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jsonschema

CORPUS = Path(__file__).parent / "corpus" / "cases"
SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
MISSING = "cl_missing_diffusers"  # a library no interpreter has

SCRIPT = f"""import torch
from {MISSING} import DiffusionPipeline

pipe = DiffusionPipeline.from_pretrained("x")
pipe.unet = torch.compile(pipe.unet, fullgraph=True)
"""
LIBRARY = '''import subprocess
import torch


class UNet(torch.nn.Module):
    def forward(self, x):
        return x + probe()


def probe():
    return int(subprocess.check_output(["nvidia-smi"]))


class DiffusionPipeline:
    unet: UNet

    def __init__(self):
        self.unet = UNet()

    @classmethod
    def from_pretrained(cls, name):
        return cls()
'''


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "compile_lint.cli", *args, "--no-cache", "-q"],
                          capture_output=True, text=True, cwd=cwd, env=dict(os.environ, PYTHONWARNINGS="ignore"))


def project(tmp_path):
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "run.py").write_text(SCRIPT)
    lib = tmp_path / "site" / MISSING
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text(LIBRARY)
    return tmp_path / "app", tmp_path / "site"


def test_a_region_compiling_a_model_of_a_missing_library_is_named_with_the_library(tmp_path):
    app, _site = project(tmp_path)
    r = cli("scan", "run.py", cwd=app)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "No findings in" not in out.replace("No findings in the 0 regions analysed", "")
    assert re.search(r"^No findings in the 0 regions analysed; 1 region could not be analysed \(above\)\.", out, re.M)
    assert (f"run.py:5: torch.compile: `pipe.unet` is not resolvable: `{MISSING}` is not importable from "
            f"{sys.executable}; pass --python or --search-path") in out
    assert f"  {MISSING} (imported at run.py:2)" in out
    assert "Coverage: 1 compiled region(s) found, 0 analysed, 1 could not be analysed:" in out


def test_strict_makes_an_unanalysed_region_exit_2(tmp_path):
    app, site = project(tmp_path)
    r = cli("scan", "run.py", "--strict", cwd=app)
    assert r.returncode == 2
    assert "could not be analysed" in r.stderr and "Traceback" not in r.stderr
    # the fix the message names works: with the library on the search path the region is walked
    r = cli("scan", "run.py", "--strict", "--search-path", str(site), cwd=app)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "CL101" in r.stdout and "could not be analysed" not in r.stdout
    assert "Coverage: 1 compiled region(s) found, all analysed." in r.stdout


def test_strict_from_the_config_file(tmp_path):
    app, _site = project(tmp_path)
    (app / "pyproject.toml").write_text("[tool.compile-lint]\nstrict = true\n")
    r = cli("scan", "run.py", cwd=app)
    assert r.returncode == 2 and "--strict" in r.stderr
    (app / "pyproject.toml").write_text('[tool.compile-lint]\nstrict = "yes"\n')
    r = cli("scan", "run.py", cwd=app)
    assert r.returncode == 2 and "strict: expected true or false, got 'yes'" in r.stderr
    assert "Traceback" not in r.stderr


def test_json_and_sarif_carry_the_coverage(tmp_path):
    app, _site = project(tmp_path)
    doc = json.loads(cli("scan", "run.py", "--format", "json", cwd=app).stdout)
    cov = doc["coverage"]
    assert cov["complete"] is False and cov["regions_found"] == 1 and cov["regions_resolved"] == 0
    (u,) = cov["regions_unresolved"]
    assert (u["path"], u["line"], u["target"], u["library"]) == ("run.py", 5, "pipe.unet", MISSING)
    assert [m["name"] for m in cov["missing_libraries"]] == [MISSING]
    assert cov["missing_libraries"][0]["imported_by"] == ["run.py:2"]

    sarif = json.loads(cli("scan", "run.py", "--format", "sarif", cwd=app).stdout)
    schema = json.loads(SCHEMA.read_text())
    errors = list(jsonschema.Draft4Validator(schema).iter_errors(sarif))
    assert not errors, errors[0].message
    notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    region = [n for n in notes if n["descriptor"]["id"] == "compile-lint/unanalysed-region"]
    assert len(region) == 1 and "`pipe.unet` is not resolvable" in region[0]["message"]["text"]
    assert region[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 5
    assert any(n["descriptor"]["id"] == "compile-lint/library-not-found" and MISSING in n["message"]["text"]
               for n in notes)


def test_a_region_built_from_a_parameter_says_so(tmp_path):
    (tmp_path / "m.py").write_text("import torch\n\ndef wrap(model):\n    return torch.compile(model)\n")
    r = cli("scan", "m.py", cwd=tmp_path)
    assert "`model` is not resolvable: `model` is a parameter of `wrap`" in r.stdout
    assert "No findings in the 0 regions analysed; 1 region could not be analysed" in r.stdout


def test_no_findings_only_when_every_region_was_analysed(tmp_path):
    (tmp_path / "ok.py").write_text("import torch\nf = torch.compile(lambda x: x * 2, fullgraph=True)\n")
    r = cli("scan", "ok.py", "--strict", cwd=tmp_path)
    assert r.returncode == 0
    assert re.search(r"^No findings in 1 compiled region\. ", r.stdout, re.M)
    (tmp_path / "none.py").write_text("x = 1\n")
    r = cli("scan", "none.py", cwd=tmp_path)
    assert r.returncode == 0 and "No compiled region found: nothing was analysed." in r.stdout


TWO_MODELS = """import torch
from lib import A, B

a = torch.compile(A(), fullgraph=True)
b = torch.compile(B(), fullgraph=True)
"""
TWO_MODELS_LIB = """import subprocess
import torch


def probe():
    return subprocess.check_output(["nvcc", "--version"])


class A(torch.nn.Module):
    def forward(self, x):
        probe()
        return x


class B(torch.nn.Module):
    def forward(self, x):
        probe()
        return x
"""


def test_a_hazard_reached_from_two_regions_is_printed_once(tmp_path):
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "run.py").write_text(TWO_MODELS)
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "lib.py").write_text(TWO_MODELS_LIB)
    args = ("scan", "run.py", "--search-path", str(tmp_path / "site"))
    r = cli(*args, cwd=tmp_path / "app")
    heads = re.findall(r"^\S+:\d+:\d+: CL101 .*$", r.stdout, re.M)
    assert len(heads) == 1, r.stdout
    assert "also reached from: run.py:5 B.forward (--show-all-paths prints each)" in r.stdout
    # the summary names the compile calls in the user's code, not the library's forward
    assert "  run.py:4 torch.compile(A.forward): 1 hazard(s)" in r.stdout
    assert "  A.forward:" not in r.stdout
    assert "Found 1 error in 2 compiled regions." in r.stdout
    every = cli(*args, "--show-all-paths", cwd=tmp_path / "app").stdout
    assert len(re.findall(r"^  region: ", every, re.M)) == 2
    # JSON keeps one finding per fix point (fixing A does not fix B)
    doc = json.loads(cli(*args, "--format", "json", cwd=tmp_path / "app").stdout)
    assert sorted(f["fix_point"] for f in doc["findings"] if f["rule"] == "CL101") == ["A.forward", "B.forward"]


def test_each_hazard_of_the_readme_example_appears_once():
    r = cli("scan", "c065_flashinfer_like_cold.py", "helpers_pkg", cwd=CORPUS)
    heads = re.findall(r"^(\S+:\d+):\d+: (CL\d+) ", r.stdout, re.M)
    assert heads and len(heads) == len(set(heads)), r.stdout
    assert "Coverage: 1 compiled region(s) found, all analysed." in r.stdout
