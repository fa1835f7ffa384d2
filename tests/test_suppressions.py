"""Inline suppressions, CL302 unused-suppression, --add-ignore, and baselines."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from ecosystem_util import HELPERS, cli, doc_block, doc_commands, make_project, sh, write


def findings(root, *args):
    r = cli(["scan", ".", "--no-cache", "-q", "--format", "json", *args], root)
    assert r.exit_code in (0, 1), r
    return [(f["rule"], f["path"], f["line"]) for f in json.loads(r.stdout)["findings"]]


def helpers_with(line5_suffix="", extra=""):
    lines = HELPERS.splitlines()
    lines[4] += line5_suffix
    return "\n".join(lines) + "\n" + extra


# ------------------------------------------------------------------------------------------- suppressions
def test_inline_noqa_and_file_level(tmp_path):
    make_project(tmp_path)
    assert findings(tmp_path) == [("CL101", "pkg/helpers.py", 5)]
    for suffix in ("  # compile-lint: ignore[CL101]", "  # noqa: CL101", "  # compile-lint: ignore", "  # noqa: CL1"):
        (tmp_path / "pkg/helpers.py").write_text(helpers_with(suffix))
        assert findings(tmp_path) == [], suffix
    (tmp_path / "pkg/helpers.py").write_text("# compile-lint: ignore-file[CL101]\n" + HELPERS)
    assert findings(tmp_path) == []


def test_suppression_on_the_call_path(tmp_path):
    make_project(tmp_path)
    model = (tmp_path / "pkg/model.py").read_text().replace("    cuda_version()\n",
                                                            "    cuda_version()  # compile-lint: ignore[CL101]\n")
    (tmp_path / "pkg/model.py").write_text(model)
    assert findings(tmp_path) == []


def test_cl302_reports_unused_suppressions(tmp_path):
    extra = ("\n\ndef unused():\n    return 1  # compile-lint: ignore[CL101]\n"
             "\n\ndef unknown():\n    return 2  # noqa: CL999\n"
             "\n\ndef kept():\n    return 3  # compile-lint: ignore[CL101, CL302]\n")
    make_project(tmp_path, **{"pkg/helpers.py": helpers_with("  # compile-lint: ignore[CL101, CL102]", extra)})
    r = cli(["scan", ".", "--no-cache", "-q", "--format", "json"], tmp_path)
    got = {(f["rule"], f["line"]): f for f in json.loads(r.stdout)["findings"]}
    assert set(got) == {("CL302", 5), ("CL302", 13), ("CL302", 17)}, got
    assert got[("CL302", 5)]["message"].endswith("CL102 matched nothing in this scan")
    assert got[("CL302", 13)]["message"].endswith("nothing matched it in this scan")
    assert "CL999: no such rule" in got[("CL302", 17)]["message"]
    assert all(f["severity"] == "note" for f in got.values())
    # text report: no region/call path lines for CL302
    text = cli(["scan", ".", "--no-cache", "-q"], tmp_path).stdout
    assert "pkg/helpers.py:13:15: CL302 note: unused suppression `# compile-lint: ignore[CL101]`" in text
    # codes outside --select are not reported; --ignore CL302 turns the rule off
    assert ("CL302", "pkg/helpers.py", 5) not in findings(tmp_path, "--select", "CL101,CL302")
    assert not [f for f in findings(tmp_path, "--ignore", "CL302") if f[0] == "CL302"]
    # ignore-file[CL302] keeps them all
    (tmp_path / "pkg/helpers.py").write_text("# compile-lint: ignore-file[CL302]\n" + helpers_with("", extra))
    assert [f for f in findings(tmp_path) if f[0] == "CL302"] == []


def test_cl302_scoped_to_scanned_files(tmp_path):
    # the helper lives on the search path, outside the scanned directory: its stale comment is not ours
    write(tmp_path / "lib", {"helpers_ext.py": "def h():\n    return 1  # compile-lint: ignore[CL101]\n"})
    write(tmp_path / "app", {"main.py": "import torch\nfrom helpers_ext import h\n\n\ndef f(x):\n"
                                        "    return x + h()  # noqa: CL101\n\n\nf_c = torch.compile(f)\n"})
    r = cli(["scan", "app", "--no-cache", "-q", "--format", "json", "--search-path", "lib"], tmp_path)
    got = [(f["rule"], f["path"], f["line"]) for f in json.loads(r.stdout)["findings"]]
    assert got == [("CL302", "main.py", 6)], got


# ------------------------------------------------------------------------------------------- --add-ignore
def test_add_ignore_appends_merges_and_is_idempotent(tmp_path):
    extra = "\n\ndef g():\n    return subprocess.run(['a'])  # compile-lint: ignore[CL102]\n"
    model_extra = "from pkg.helpers import g\n\n\ndef h(x):\n    g()\n    return x\n\n\nh_c = torch.compile(h)\n"
    make_project(tmp_path, **{"pkg/helpers.py": helpers_with("", extra)})
    (tmp_path / "pkg/model.py").write_text((tmp_path / "pkg/model.py").read_text() + model_extra)
    assert findings(tmp_path, "--ignore", "CL302") == [("CL101", "pkg/helpers.py", 5), ("CL101", "pkg/helpers.py", 13)]
    r = cli(["scan", ".", "--no-cache", "-q", "--add-ignore"], tmp_path)
    assert r.exit_code == 0 and "added 2 suppression(s) in 1 file(s)" in r.stderr, r
    text = (tmp_path / "pkg/helpers.py").read_text()
    assert 'subprocess.check_output(["nvcc", "--version"])  # compile-lint: ignore[CL101]\n' in text
    assert "subprocess.run(['a'])  # compile-lint: ignore[CL102, CL101]\n" in text
    assert findings(tmp_path, "--ignore", "CL302") == []
    r = cli(["scan", ".", "--no-cache", "-q", "--add-ignore"], tmp_path)
    assert "added 0 suppression(s)" in r.stderr and (tmp_path / "pkg/helpers.py").read_text() == text
    assert not list(tmp_path.rglob(".compile-lint-*.tmp"))


def test_add_ignore_extends_noqa_keeps_crlf_and_skips_multiline_strings(tmp_path):
    src = ("import subprocess\r\n\r\n\r\ndef a():\r\n    return subprocess.run(['x'])  # noqa: CL102\r\n\r\n\r\n"
           "def b():\r\n    return subprocess.run('''\r\nls''')\r\n\r\n\r\ndef c():\r\n"
           "    return subprocess.run(['y']) \\\r\n        or 1\r\n")
    model = ("import torch\nfrom pkg.helpers import a, b, c\n\n\ndef f(x):\n    a()\n    b()\n    c()\n    return x\n\n\n"
             "f_c = torch.compile(f)\n")
    write(tmp_path, {"pkg/__init__.py": "", "pkg/model.py": model})
    (tmp_path / "pkg/helpers.py").write_bytes(src.encode())
    before = findings(tmp_path, "--ignore", "CL302")
    assert [x[2] for x in before] == [5, 9, 14], before
    r = cli(["scan", ".", "--no-cache", "-q", "--add-ignore"], tmp_path)
    assert "not suppressed" in r.stderr and "multi-line string" in r.stderr and "backslash" in r.stderr, r
    data = (tmp_path / "pkg/helpers.py").read_bytes().decode()
    assert "return subprocess.run(['x'])  # noqa: CL102, CL101\r\n" in data
    assert data.count("\r\n") == src.count("\r\n") and "\n" not in data.replace("\r\n", "")
    assert [x[2] for x in findings(tmp_path, "--ignore", "CL302")] == [9, 14]


def test_add_ignore_puts_library_hazards_on_the_call_in_scanned_code(tmp_path):
    write(tmp_path / "lib", {"helpers_ext.py": "import subprocess\n\n\ndef h():\n    return subprocess.run(['x'])\n"})
    write(tmp_path / "app", {"main.py": "import torch\nfrom helpers_ext import h\n\n\ndef f(x):\n    h()\n"
                                        "    return x\n\n\nf_c = torch.compile(f)\n"})
    lib_before = (tmp_path / "lib/helpers_ext.py").read_text()
    r = cli(["scan", "app", "--no-cache", "-q", "--search-path", "lib", "--add-ignore"], tmp_path)
    assert "added 1" in r.stderr, r
    assert (tmp_path / "lib/helpers_ext.py").read_text() == lib_before
    assert "    h()  # compile-lint: ignore[CL101]\n" in (tmp_path / "app/main.py").read_text()


def test_doc_suppress_and_add_ignore_examples(tmp_path):
    body = doc_block("suppress")
    write(tmp_path, {"pkg/__init__.py": "", "pkg/helpers.py": body, "pkg/model.py": (
        "import torch\nfrom pkg.helpers import cuda_version, cuda_version_noqa\n\n\ndef f(x):\n"
        "    cuda_version()\n    cuda_version_noqa()\n    return x\n\n\nf_c = torch.compile(f, fullgraph=True)\n")})
    got = findings(tmp_path)
    # both hazards suppressed; the file-level CL102 comment matched nothing -> CL302
    assert [g[0] for g in got] == ["CL302"], got
    shutil.rmtree(tmp_path / "pkg")
    make_project(tmp_path)
    add, rescan = doc_commands("add-ignore")
    r = sh(add + " -q", tmp_path)
    assert r.exit_code == 0 and "added 1 suppression" in r.stderr, r
    assert sh(rescan + " -q", tmp_path).exit_code == 0
    assert "added 0" in sh(add + " -q", tmp_path).stderr


# ------------------------------------------------------------------------------------------- baseline
def test_baseline_reports_only_new_findings_and_survives_line_shifts(tmp_path):
    make_project(tmp_path)
    write_cmd, check_cmd = doc_commands("baseline")
    r = sh(write_cmd + " -q", tmp_path)
    assert r.exit_code == 0 and "recorded 1 finding" in r.stderr, r
    doc = json.loads((tmp_path / ".compile-lint-baseline.json").read_text())
    assert doc["findings"][0]["path"] == "pkg/helpers.py" and len(doc["findings"][0]["fingerprint"]) == 16
    assert sh(check_cmd + " -q", tmp_path).exit_code == 0
    # shift every line: still known
    (tmp_path / "pkg/helpers.py").write_text("# a comment\n\n\n" + (tmp_path / "pkg/helpers.py").read_text())
    r = sh(check_cmd + " -q --format json", tmp_path)
    assert r.exit_code == 0 and json.loads(r.stdout)["stats"]["baselined"] == 1, r
    # a new hazard is reported
    (tmp_path / "pkg/helpers.py").write_text((tmp_path / "pkg/helpers.py").read_text().replace(
        "def pure(x):\n    return x", "def pure(x):\n    subprocess.run(['ls'])\n    return x"))
    r = sh(check_cmd + " -q --format json", tmp_path)
    new = [(f["rule"], f["qualname"]) for f in json.loads(r.stdout)["findings"]]
    assert r.exit_code == 1 and new == [("CL101", "pure")], r


def test_baseline_is_portable_across_checkouts(tmp_path):
    a = make_project(tmp_path / "a")
    assert cli(["scan", ".", "--no-cache", "-q", "--baseline", "bl.json", "--write-baseline"], a).exit_code == 0
    b = tmp_path / "elsewhere" / "b"
    shutil.copytree(a, b)
    assert cli(["scan", ".", "--no-cache", "-q", "--baseline", "bl.json"], b).exit_code == 0


def test_baseline_errors(tmp_path):
    make_project(tmp_path)
    r = cli(["scan", ".", "--no-cache", "-q", "--baseline", "missing.json"], tmp_path)
    assert r.exit_code == 2 and "baseline file not found" in r.stderr
    (tmp_path / "bad.json").write_text("[]")
    r = cli(["scan", ".", "--no-cache", "-q", "--baseline", "bad.json"], tmp_path)
    assert r.exit_code == 2 and "not a compile-lint baseline" in r.stderr
    r = cli(["scan", ".", "--no-cache", "-q", "--write-baseline"], tmp_path)
    assert r.exit_code == 2 and "--write-baseline needs --baseline" in r.stderr
    # `baseline` in the config
    (tmp_path / "pyproject.toml").write_text('[tool.compile-lint]\nbaseline = "bl.json"\n')
    assert cli(["scan", ".", "--no-cache", "-q", "--write-baseline"], tmp_path).exit_code == 0
    assert cli(["scan", ".", "--no-cache", "-q"], tmp_path).exit_code == 0


def test_a_warm_process_reads_a_scanned_file_for_suppressions_again_only_once_it_changed(tmp_path, monkeypatch):
    """keep_scanned_sources (the daemon): whether a file not loaded spells a suppression comment, and its text,
    are kept with its (size, mtime_ns); an edit that adds one, or removes it, is read again."""
    from compile_lint import suppressions

    monkeypatch.setattr(suppressions, "_KEPT_SOURCES", None)
    suppressions.keep_scanned_sources()
    reads = []
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: (reads.append(self.name), real(self))[1])
    quiet, noisy = tmp_path / "quiet.py", tmp_path / "noisy.py"
    quiet.write_text("x = 1\n")
    noisy.write_text("import os  # noqa: F401\n")
    ask = lambda: [suppressions._source_with_comments(str(p)) for p in (quiet, noisy)]  # noqa: E731
    assert ask() == [None, "import os  # noqa: F401\n"] and reads == ["quiet.py", "noisy.py"]
    reads.clear()
    assert ask() == [None, "import os  # noqa: F401\n"] and reads == []
    quiet.write_text("y = 2  # compile-lint: ignore[CL101]\n")
    noisy.write_text("import os\n")
    assert ask() == ["y = 2  # compile-lint: ignore[CL101]\n", None] and reads == ["quiet.py", "noisy.py"]
