"""Bad input: every mistake a user can type is one clear line on stderr and exit code 2, never a traceback.

An empty directory is not a mistake: exit 0, the usual report on stdout, and one warning line on stderr
("no Python files under the given path(s): nothing to scan"), like ruff's "No Python files found".
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ecosystem_util import COMPILE_LINT, cli, make_project


@pytest.fixture(scope="module")
def proj(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad_input")
    work = make_project(root / "work")
    (root / "empty").mkdir()
    return root


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    from test_faults import warm_cache_dir

    return str(warm_cache_dir(tmp_path_factory.mktemp("cache")))  # the installed torch's trace rules, probed once


def _one_error_line(r, *needles):
    assert r.exit_code == 2, r
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout, r
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r
    assert lines[0].startswith("compile-lint: error: "), r
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def _scan(proj, cache, *args):
    return cli(["scan", "work", "-q", "--no-environment", "--cache-dir", cache, *args], proj)


# ------------------------------------------------------------------------------------------- flags
@pytest.mark.parametrize("args,needles", [
    (["--nosuch-flag"], ["--nosuch-flag"]),
    (["--format", "xml"], ["--format", "xml"]),
    (["--target-arch", "sm9x"], ["--target-arch", "sm9x"]),
    (["--target-arch", "sm90", "--cuda-version", "abc"], ["CUDA version", "abc"]),
    (["--cuda-version", "abc"], ["CUDA version", "abc"]),
    (["--entry", "nosuch:fn"], ["entry point not found", "nosuch:fn"]),
    (["--entry", "no-colon-here"], ["entry point not found", "no-colon-here"]),
    (["--public-api", "nosuchpkg"], ["--public-api nosuchpkg", "no such package"]),
    (["--select", "XX"], ["--select", "XX"]),
    (["--ignore", "CL1,E501"], ["--ignore", "E501"]),
    (["--search-path", "no/such/dir"], ["--search-path", "no/such/dir"]),
    (["--config", "no/such.toml"], ["config file not found", "such.toml"]),
    (["--jobs", "0"], ["--jobs"]),
    (["--exclude"], ["--exclude", "requires an argument"]),
    (["--write-baseline"], ["--baseline"]),
    (["--fix", "--op-namespace", "1x"], ["--op-namespace", "1x"]),
    (["--public-api", "pkg", "--format", "sarif"], ["--public-api"]),
])
def test_bad_flag_values(proj, cache, args, needles):
    _one_error_line(_scan(proj, cache, *args), *needles)


def test_missing_path_and_missing_argument(proj, cache):
    _one_error_line(cli(["scan", "no/such/path", "-q"], proj), "no/such/path")
    _one_error_line(cli(["scan"], proj), "PATHS")
    _one_error_line(cli(["graph", "work", "--from", "f", "--no-environment", "--cache-dir", cache], proj),
                    "--from and --to")


def test_missing_interpreter(proj, cache):
    _one_error_line(cli(["scan", "work", "-q", "--cache-dir", cache, "--python", "/no/such/python"], proj),
                    "interpreter", "/no/such/python")


def test_unknown_command_and_rule(proj):
    _one_error_line(cli(["nosuchcmd"], proj), "nosuchcmd")
    _one_error_line(cli(["rule", "CL999"], proj), "CL999")


def test_fix_pr_outside_a_checkout(proj, cache):
    _one_error_line(cli(["fix", "work", "--pr", "-q", "--cache-dir", cache, "--no-environment"], proj),
                    "not inside a git checkout")


def test_corrupt_baseline(proj, cache):
    (proj / "baseline.json").write_text("{ not json")
    _one_error_line(_scan(proj, cache, "--baseline", "baseline.json"), "baseline")


# ------------------------------------------------------------------------------------------- configuration
@pytest.mark.parametrize("text,needles", [
    ("select = 5\n", ["select", "list of strings"]),
    ("select = ['XX']\n", ["select", "'XX'"]),
    ("nosuchkey = 1\n", ["unknown key", "nosuchkey"]),
    ("target-arch = 'sm9x'\n", ["target-arch", "sm9x"]),
    ("cuda-version = 'abc'\n", ["cuda-version", "abc"]),
    ("entry-points = [1]\n", ["entry-points"]),
    ("per-file-ignores = 'x'\n", ["per-file-ignores"]),
    ("{not toml\n", ["invalid TOML"]),
])
def test_bad_config_file(proj, cache, text, needles):
    cfg = proj / "bad.toml"
    cfg.write_text(text)
    _one_error_line(_scan(proj, cache, "--config", str(cfg)), "bad.toml", *needles)


def test_config_that_is_binary_or_a_directory(proj, cache):
    (proj / "binary.toml").write_bytes(b"\xff\xfe\x00\x81 garbage")
    _one_error_line(_scan(proj, cache, "--config", "binary.toml"), "binary.toml", "invalid TOML")
    (proj / "cfgdir").mkdir(exist_ok=True)
    _one_error_line(_scan(proj, cache, "--config", "cfgdir"), "--config", "directory")


def test_broken_pyproject_found_on_the_way_up(tmp_path, cache):
    work = make_project(tmp_path / "repo")
    (work / "pyproject.toml").write_text("[tool.compile-lint\nselect = [\n")
    _one_error_line(cli(["scan", ".", "-q", "--cache-dir", cache, "--no-environment"], work), "pyproject.toml",
                    "invalid TOML")


def test_unreadable_config_file(proj, tmp_path):
    """Needs real permission checks: run without CAP_DAC_OVERRIDE (see test_faults)."""
    from test_faults import _check_unprivileged_works, _unprivileged

    _check_unprivileged_works(tmp_path)
    cfg = proj / "locked.toml"
    cfg.write_text("select = ['CL1']\n")
    cfg.chmod(0)
    try:
        p = _unprivileged(["scan", "work", "-q", "--no-environment", "--config", str(cfg)], proj)
    finally:
        cfg.chmod(0o644)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.strip().count("\n") == 0 and "locked.toml" in p.stderr
    assert "not readable" in p.stderr or "ermission denied" in p.stderr


# ------------------------------------------------------------------------------------------- empty input
def test_empty_directory_is_nothing_to_scan(proj, cache):
    r = cli(["scan", "empty", "-q", "--cache-dir", cache, "--no-environment"], proj)
    assert r.exit_code == 0, r
    assert r.stderr.strip() == "compile-lint: warning: no Python files under the given path(s): nothing to scan"
    assert "0 files scanned" in r.stdout
    r = cli(["scan", "empty", "-q", "--cache-dir", cache, "--no-environment", "--format", "json"], proj)
    assert r.exit_code == 0 and json.loads(r.stdout)["findings"] == []


def test_directory_without_python_files(proj, cache):
    d = proj / "docs-only"
    d.mkdir(exist_ok=True)
    (d / "README.md").write_text("# hi\n")
    (d / "setup.cfg").write_text("[x]\n")
    r = cli(["scan", "docs-only", "-q", "--cache-dir", cache, "--no-environment"], proj)
    assert r.exit_code == 0 and "nothing to scan" in r.stderr


# ------------------------------------------------------------------------------------------- the real binary
def test_internal_error_is_one_line_and_debug_shows_the_traceback(proj):
    """An unexpected exception inside a command: one line and exit 2; ``--debug`` adds the traceback."""
    code = textwrap.dedent("""
        import sys
        import compile_lint.cli as cli
        def boom(opts):
            raise RuntimeError("boom inside the engine")
        cli.scan = boom
        sys.argv = ["compile-lint", *sys.argv[1:]]
        cli.main()
    """)
    base = [sys.executable, "-c", code, "scan", "work", "-q", "--no-environment", "--no-cache"]
    p = subprocess.run(base, cwd=proj, capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.strip() == ("compile-lint: internal error: RuntimeError: boom inside the engine "
                                "(run with --debug for details)")
    p = subprocess.run(base + ["--debug"], cwd=proj, capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "Traceback" in p.stderr and "boom inside the engine" in p.stderr


def test_real_binary_on_a_bad_flag_and_a_missing_path(proj):
    for args, needle in ((["scan", "--nosuch"], "--nosuch"), (["scan", "no/such"], "no/such")):
        p = subprocess.run([COMPILE_LINT, *args], cwd=proj, capture_output=True, text=True, timeout=120)
        assert p.returncode == 2 and p.stdout == "", p
        assert p.stderr.count("\n") == 1 and needle in p.stderr and "Traceback" not in p.stderr
