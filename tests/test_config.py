"""[tool.compile-lint] in pyproject.toml and --config: discovery, every key, CLI precedence, errors (exit 2)."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from compile_lint.config import Config, ConfigError, find_config, load_config, parse_config
from compile_lint.regions import FRAMEWORK_MODELS, FrameworkModel
from ecosystem_util import cli, doc_block, doc_commands, make_project, sh, write

HAS_ARCH = importlib.util.find_spec("compile_lint.arch") is not None


def rules_of(run) -> list:
    return [(f["rule"], f["path"], f["line"]) for f in json.loads(run.stdout)["findings"]]


def scan_json(root, *args):
    r = cli(["scan", ".", "--no-cache", "-q", "--format", "json", *args], root)
    assert r.exit_code in (0, 1), r
    return r


# ------------------------------------------------------------------------------------------- discovery
def test_found_by_walking_up_and_pyproject_without_table_does_not_stop(tmp_path):
    write(tmp_path, {"pyproject.toml": '[tool.compile-lint]\nselect = ["CL1"]\n',
                     "sub/pyproject.toml": '[project]\nname = "x"\n', "sub/deep/a.py": ""})
    assert find_config(tmp_path / "sub" / "deep" / "a.py") == tmp_path / "pyproject.toml"
    assert load_config(start=tmp_path / "sub" / "deep").select == ["CL1"]


def test_scanning_outside_the_project_uses_the_working_directory_config(tmp_path):
    make_project(tmp_path / "elsewhere")
    write(tmp_path / "proj", {"pyproject.toml": '[tool.compile-lint]\nignore = ["CL101"]\n'})
    r = cli(["scan", str(tmp_path / "elsewhere"), "--no-cache", "-q", "--format", "json"], tmp_path / "proj")
    assert r.exit_code == 0 and json.loads(r.stdout)["findings"] == [], r


def test_no_config_is_empty(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, {"a.py": ""})
    cfg = load_config(start=tmp_path)
    assert cfg == Config() or (cfg.path is None and not cfg.select)


def test_config_applies_select(tmp_path):
    make_project(tmp_path, **{"pyproject.toml": '[tool.compile-lint]\nselect = ["CL2"]\n'})
    assert rules_of(scan_json(tmp_path)) == []
    (tmp_path / "pyproject.toml").write_text('[tool.compile-lint]\nselect = ["CL1"]\n')
    assert rules_of(scan_json(tmp_path)) == [("CL101", "pkg/helpers.py", 5)]


def test_cli_flags_override_config(tmp_path):
    make_project(tmp_path, **{"pyproject.toml": '[tool.compile-lint]\nselect = ["CL2"]\n'})
    assert rules_of(scan_json(tmp_path, "--select", "CL101")) == [("CL101", "pkg/helpers.py", 5)]
    # --ignore adds to the file's ignore list
    (tmp_path / "pyproject.toml").write_text('[tool.compile-lint]\nignore = ["CL3"]\n')
    assert rules_of(scan_json(tmp_path, "--ignore", "CL101")) == []


def test_explicit_config_file_top_level_keys(tmp_path):
    make_project(tmp_path, **{"ci/lint.toml": 'ignore = ["CL101"]\n'})
    assert rules_of(scan_json(tmp_path)) == [("CL101", "pkg/helpers.py", 5)]
    assert rules_of(scan_json(tmp_path, "--config", "ci/lint.toml")) == []


def test_per_file_ignores_and_exclude(tmp_path):
    make_project(tmp_path, **{"pyproject.toml": '[tool.compile-lint.per-file-ignores]\n"pkg/help*.py" = ["CL1"]\n'})
    assert rules_of(scan_json(tmp_path)) == []
    (tmp_path / "pyproject.toml").write_text('[tool.compile-lint.per-file-ignores]\n"helpers.py" = ["CL2"]\n')
    assert rules_of(scan_json(tmp_path)) == [("CL101", "pkg/helpers.py", 5)]
    # exclude: the region's file is not scanned, so nothing is compiled
    (tmp_path / "pyproject.toml").write_text('[tool.compile-lint]\nexclude = ["pkg/model.py"]\n')
    assert rules_of(scan_json(tmp_path)) == []
    # extend-exclude (ruff's spelling) adds the same way; a bare name skips every directory of that name
    (tmp_path / "pyproject.toml").write_text('[tool.compile-lint]\nextend-exclude = ["pkg/model.py"]\n')
    assert rules_of(scan_json(tmp_path)) == []
    (tmp_path / "pyproject.toml").write_text('[tool.compile-lint]\nextend-exclude = ["pkg"]\n')
    assert rules_of(scan_json(tmp_path)) == []
    (tmp_path / "pyproject.toml").write_text('[tool.compile-lint]\nextend-exclude = ["other"]\n')
    assert rules_of(scan_json(tmp_path)) == [("CL101", "pkg/helpers.py", 5)]


def test_entry_points_and_cache_dir(tmp_path):
    make_project(tmp_path, **{
        "pkg/serve.py": "import subprocess\n\nclass Engine:\n    def step(self):\n        return subprocess.run(['ls'])\n",
        "pyproject.toml": '[tool.compile-lint]\nentry-points = ["pkg.serve:Engine.step"]\ncache-dir = "build/cl-cache"\n',
    })
    r = cli(["scan", ".", "-q", "--format", "json"], tmp_path)
    assert ("CL101", "pkg/serve.py", 5) in rules_of(r)
    assert (tmp_path / "build" / "cl-cache").is_dir()


def test_region_models_extend_builtin_models(tmp_path):
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/compiling.py": "def compile_model(model, fullgraph=False):\n    return model\n",
        "pkg/usage.py": ("import os\nimport torch\nfrom pkg.compiling import compile_model\n\n\n"
                         "class Net(torch.nn.Module):\n    def forward(self, x):\n"
                         "        if os.path.exists('/tmp/flag'):\n            return x\n        return x + 1\n\n\n"
                         "net = compile_model(Net())\n"),
    })
    assert rules_of(scan_json(tmp_path)) == []
    (tmp_path / "pyproject.toml").write_text(
        '[[tool.compile-lint.region-models]]\ncallee = "pkg.compiling.compile_model"\ntarget = [0, "model"]\n'
        'what = "forward"\nfullgraph-default = true\n')
    cfg = load_config(start=tmp_path)
    assert cfg.region_models == [FrameworkModel("pkg.compiling.compile_model", (0, "model"), "forward",
                                                "fullgraph", True, (), "call")]
    r = scan_json(tmp_path)
    assert rules_of(r) == [("CL102", "pkg/usage.py", 8)]
    f = json.loads(r.stdout)["findings"][0]
    assert f["severity"] == "error" and f["region"]["kind"] == "compile_model"


def test_every_key_parses():
    cfg = parse_config({
        "select": ["CL1", "cl2"], "ignore": "CL117", "per-file-ignores": {"tests/*": ["CL2"]},
        "exclude": ["build", "third_party/x"], "entry-points": ["a.b:C.d"],
        "region-models": [{"callee": "a.b.c", "target": "fn", "what": "callable", "kind": "decorator",
                           "fullgraph-keyword": False, "predicates": {"*.capturing": True}}],
        "target-arch": "sm90", "cuda-version": 12.9, "fix-in": ["pkg"], "op-namespace": "mylib",
        "cache-dir": ".cache", "search-path": ["vendor"], "python": ".venv/bin/python", "baseline": "bl.json",
        "extend-exclude": ["gen"], "strict": True,
    }, Path("/proj/pyproject.toml"))
    assert cfg.select == ["CL1", "CL2"] and cfg.ignore == ["CL117"]
    assert cfg.per_file_ignores == [("/proj", "tests/*", ("CL2",))]
    assert cfg.exclude == ["build", "/proj/third_party/x", "gen"] and cfg.strict is True
    m = cfg.region_models[0]
    assert (m.callee, m.target[1], m.what, m.kind, m.fullgraph_keyword, m.predicates) == (
        "a.b.c", "fn", "callable", "decorator", None, (("*.capturing", True),))
    assert (cfg.target_arch, cfg.cuda_version, cfg.fix_in, cfg.op_namespace) == ("sm90", "12.9", ["pkg"], "mylib")
    assert cfg.cache_dir == Path("/proj/.cache") and cfg.search_path == ["/proj/vendor"]
    assert cfg.python == "/proj/.venv/bin/python" and cfg.baseline == Path("/proj/bl.json")


@pytest.mark.parametrize("toml, needle", [
    ('selct = ["CL1"]', "unknown key 'selct'"),
    ('cache_dir = "x"', "did you mean 'cache-dir'"),
    ('select = ["XX1"]', "select: 'XX1' is not a rule code"),
    ('select = 3', "select: expected a list of strings"),
    ('target-arch = "ampere"', "target-arch: expected a GPU architecture"),
    ('cuda-version = "twelve"', "cuda-version: expected 'X.Y'"),
    ('entry-points = ["nocolon"]', "entry-points: expected 'module:qualname'"),
    ('op-namespace = "my-lib"', "op-namespace: expected a Python identifier"),
    ('per-file-ignores = ["x"]', "per-file-ignores: expected a table"),
    ('[[region-models]]\ntarget = 0', "region-models[0]: missing 'callee'"),
    ('[[region-models]]\ncallee = "a.b"\nwhat = "everything"', "region-models[0].what: expected one of"),
    ('[[region-models]]\ncallee = "a.b"\nfullgraph-default = "yes"', "fullgraph-default: expected true or false"),
    ('[[region-models]]\ncallee = "a.b"\ncolour = 1', "region-models[0].colour: unknown key"),
    ('select = [', "invalid TOML"),
    ('fix = 1', "fix: expected a table"),
    ('[fix]\nhoist-to = "module"', "fix.hoist-to: expected 'import' or 'init'"),
    ('[fix]\nopnamespace = "x"', "unknown key 'opnamespace' in [tool.compile-lint.fix]"),
])
def test_bad_config_is_one_clear_line_and_exit_2(tmp_path, toml, needle):
    make_project(tmp_path, **{"pyproject.toml": "[tool.compile-lint]\n" + toml + "\n"})
    if toml.startswith("[fix]"):
        (tmp_path / "pyproject.toml").write_text(toml.replace("[fix]", "[tool.compile-lint.fix]"))
    if toml.startswith("[[region-models]]"):
        (tmp_path / "pyproject.toml").write_text(toml.replace("[[region-models]]", "[[tool.compile-lint.region-models]]"))
    with pytest.raises(ConfigError):
        load_config(start=tmp_path)
    r = cli(["scan", ".", "--no-cache", "-q"], tmp_path)
    assert r.exit_code == 2, r
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("compile-lint: error: ") and needle in lines[0], r


def test_missing_explicit_config_is_exit_2(tmp_path):
    make_project(tmp_path)
    r = cli(["scan", ".", "--no-cache", "-q", "--config", "nope.toml"], tmp_path)
    assert r.exit_code == 2 and "config file not found" in r.stderr


def test_fixers_table_is_accepted():
    cfg = parse_config({"fix": {"op-namespace": "myproj", "hoist-to": "init", "fix-in": ["flashinfer"],
                                "fakes": {"flashinfer.fp4_quantize": "same-as:input"}}}, Path("/p/pyproject.toml"))
    assert cfg.op_namespace == "myproj" and cfg.fix_in == ["flashinfer"]


def test_builtin_models_kept():
    cfg = parse_config({"region-models": [{"callee": "x.y.z"}]}, Path("/p/pyproject.toml"))
    from compile_lint.config import apply_config
    from compile_lint.engine import ScanOptions

    opts = apply_config(ScanOptions(paths=[]), cfg, set())
    assert opts.framework_models[:len(FRAMEWORK_MODELS)] == FRAMEWORK_MODELS
    assert opts.framework_models[-1].callee == "x.y.z"


# ------------------------------------------------------------------------------------------- the doc's examples
def _doc_project(tmp_path):
    toml = doc_block("config")
    if not HAS_ARCH:  # target-arch needs compile_lint.arch (the lead's); parse it, scan without it
        load = parse_config(__import__("tomllib").loads(toml)["tool"]["compile-lint"], tmp_path / "pyproject.toml")
        assert load.target_arch == "sm90" and load.cuda_version == "12.9"
        toml = "\n".join(x for x in toml.splitlines() if not x.startswith(("target-arch", "cuda-version"))) + "\n"
    make_project(tmp_path, **{
        "pyproject.toml": toml,
        "pkg/serve.py": "import subprocess\n\nclass Engine:\n    def step(self):\n        return subprocess.run(['ls'])\n",
        "pkg/compiling.py": "def compile_model(model, fullgraph=False):\n    return model\n",
        "pkg/usage.py": ("import os\nimport torch\nfrom pkg.compiling import compile_model\n\n\n"
                         "class Net(torch.nn.Module):\n    def forward(self, x):\n"
                         "        if os.path.exists('/tmp/flag'):\n            return x\n        return x + 1\n\n\n"
                         "net = compile_model(Net())\n"),
        "pkg/debug_tools.py": "import subprocess\n\ndef dump():\n    subprocess.run(['true'])\n",
        "build/ignored.py": "import torch, subprocess\n\ndef g(x):\n    subprocess.run(['x'])\n\ng_c = torch.compile(g)\n",
        "ci/compile-lint.toml": 'select = ["CL1"]\n',  # replaces pyproject.toml: no region-models, no ignores
        "third_party/README": "vendored code would live here (the example's search-path)\n",
    })
    (tmp_path / "pkg" / "model.py").write_text((tmp_path / "pkg" / "model.py").read_text().replace(
        "from pkg.helpers import cuda_version, pure",
        "from pkg.helpers import cuda_version, pure\nfrom pkg.debug_tools import dump").replace(
        "    cuda_version()\n", "    cuda_version()\n    dump()\n"))
    return tmp_path


def test_doc_config_example(tmp_path):
    root = _doc_project(tmp_path)
    r = sh("compile-lint scan . -q --format json", root)
    assert r.exit_code == 1, r
    found = rules_of(r)
    assert ("CL101", "pkg/helpers.py", 5) in found  # torch.compile region
    assert ("CL101", "pkg/serve.py", 5) in found  # entry-points
    assert ("CL102", "pkg/usage.py", 8) in found  # region-models
    assert not any(p.startswith("pkg/debug_tools") for _, p, _ in found)  # per-file-ignores
    assert not any(p.startswith("build/") for _, p, _ in found)  # exclude
    assert (root / ".compile_lint_cache").is_dir()  # cache-dir


def test_doc_config_cli_example(tmp_path):
    root = _doc_project(tmp_path)
    first, second = doc_commands("config-cli")
    r = sh(first + " -q --format json", root)
    assert sorted(rules_of(r)) == [("CL101", "pkg/debug_tools.py", 4), ("CL101", "pkg/helpers.py", 5)], r
    if not HAS_ARCH:
        second = second.replace(" --target-arch sm120", "")
    r = sh(second + " -q --format json", root)
    assert {x[0] for x in rules_of(r)} == {"CL101"}, r
