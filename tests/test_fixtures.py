"""TorchFix-style fixtures: each folder's scan must produce exactly the findings in its expected.txt."""
from pathlib import Path

import pytest

from compile_lint.postwalk import relpath

FIXTURES = Path(__file__).parent / "fixtures"
CASES = sorted(p.name for p in FIXTURES.iterdir() if (p / "expected.txt").exists())


@pytest.mark.parametrize("name", CASES)
def test_fixture(name, run_scan):
    root = FIXTURES / name
    result = run_scan(root)
    got = sorted(f"{f.rule} {f.severity} {relpath(f.path, [str(root)])}:{f.line}" for f in result.findings)
    want = sorted(line.strip() for line in (root / "expected.txt").read_text().splitlines() if line.strip())
    assert got == want


def test_flashinfer_shape_path_runs_through_the_loader(run_scan):
    result = run_scan(FIXTURES / "flashinfer_shape")
    sub = next(f for f in result.findings if f.rule == "CL101")
    names = [fr.qualname for fr in sub.trace]
    # fp4_quantize's default backend "100" selects gen_sm100_module from the dispatch dict
    assert names == ["Dense.forward", "fp4_quantize", "get_quant_module", "gen_sm100_module", "gen_quant_module",
                     "is_cuda_version_at_least", "get_cuda_version"]
    assert sub.region.fullgraph is True
    assert sub.fix_point == "get_quant_module"  # the cached loader owns the hazard


def test_disable_behind_alias_is_error_only_under_fullgraph(run_scan):
    result = run_scan(FIXTURES / "disable_modes")
    by_region = {(f.region.qualname, f.rule): f.severity for f in result.findings}
    assert by_region[("strict", "CL116")] == "error"
    assert by_region[("relaxed", "CL116")] == "note"


def test_show_disabled_reports_what_lies_behind_the_disable_as_notes(run_scan):
    root = FIXTURES / "disable_modes"
    hidden = run_scan(root)
    shown = run_scan(root, show_disabled=True)
    assert not [f for f in hidden.findings if f.rule == "CL101"]  # Dynamo never traces loader's body
    behind = [f for f in shown.findings if f.rule == "CL101"]
    assert [(f.severity, relpath(f.path, [str(root)]), f.line) for f in behind] == [("note", "mod.py", 10)]
    assert [c.text for c in behind[0].conditions] == ["`loader` is traced (without its torch.compiler.disable)"]
    assert [fr.qualname for fr in behind[0].trace] == ["strict", "loader"]
    # the call of the disabled function is the stop either way
    calls = lambda r: sorted((f.region.qualname, f.severity) for f in r.findings if f.rule == "CL116")
    assert calls(shown) == calls(hidden) == [("relaxed", "note"), ("strict", "error")]


def test_show_disabled_flag_config_key_and_result_cache(tmp_path):
    import json
    import shutil

    from ecosystem_util import cli

    shutil.copy(FIXTURES / "disable_modes" / "mod.py", tmp_path / "mod.py")
    behind = lambda r: [(f["severity"], f["line"]) for f in json.loads(r.stdout)["findings"]  # noqa: E731
                        if f["rule"] == "CL101"]
    # with the result cache on: the flag is part of the key, so the second scan is not answered by the first
    assert behind(cli(["scan", ".", "-q", "--format", "json"], tmp_path)) == []
    assert behind(cli(["scan", ".", "-q", "--format", "json", "--show-disabled"], tmp_path)) == [("note", 10)]
    (tmp_path / "pyproject.toml").write_text("[tool.compile-lint]\nshow-disabled = true\n")
    assert behind(cli(["scan", ".", "-q", "--no-cache", "--format", "json"], tmp_path)) == [("note", 10)]
    (tmp_path / "pyproject.toml").write_text('[tool.compile-lint]\nshow-disabled = "yes"\n')
    bad = cli(["scan", ".", "-q", "--no-cache"], tmp_path)
    assert bad.exit_code == 2 and "show-disabled: expected true or false" in bad.stderr
