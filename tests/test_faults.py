"""Faults: an interrupted ``--fix`` loses nothing, and a scan survives what a file system can do to it.

- ``--fix`` stopped at every write (an exception inside the write path, and a real SIGKILL in a subprocess
  before and after each rename): every file is its old text or its new text, never a mix; a re-run finishes.
- a read-only file, a file deleted between discovery and indexing, symlink loops, an unreadable directory or
  file (privileges dropped in a subprocess), a 20 MB generated file, a NUL byte, deep nesting: one clear
  reason each, and the rest of the scan goes on with the same findings.
- the summary cache: corrupt, truncated, wrong-type, unwritable or shared by concurrent runs: rebuilt, never
  trusted, and the findings do not change.
"""
from __future__ import annotations

import atexit
import ctypes
import json
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from compile_lint.engine import ScanOptions, scan
from ecosystem_util import COMPILE_LINT, make_project

TESTS = Path(__file__).parent
FIX_NAMES = ("namespace_closure", "build_chain", "compiler_disable")  # 4 files written by one --fix


# ------------------------------------------------------------------------------------------- helpers
_WARM: dict = {}


def warm_cache_dir(dest) -> Path:
    """A cache directory holding the installed torch's trace rules (probed once per session), so that a CLI
    run does not import torch again: it reads them from the cache like a user's second run."""
    import shutil
    import tempfile

    if "dir" not in _WARM:
        d = Path(tempfile.mkdtemp(prefix="cl-warm-"))
        atexit.register(shutil.rmtree, d, True)
        (d / "empty").mkdir()
        subprocess.run([COMPILE_LINT, "scan", str(d / "empty"), "--cache-dir", str(d / "cache"), "-q",
                        "--no-environment"], capture_output=True, timeout=300)
        _WARM["dir"] = d / "cache"
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for f in _WARM["dir"].glob("trace_rules-*.json"):
        shutil.copy(f, dest / f.name)
    return dest


def _opts(*paths, **kw):
    kw.setdefault("cache_dir", None)
    kw.setdefault("use_environment", False)
    kw.setdefault("use_installed_torch", False)  # the bundled trace rules: no torch subprocess per scan
    return ScanOptions(paths=[Path(p) for p in paths], **kw)


def _key(findings):
    return sorted((Path(f.path).name, f.line, f.rule, f.callee) for f in findings)


def _snapshot(root: Path) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.py"))}


def _fix_project(root: Path) -> Path:
    from test_fixers import place

    for name in FIX_NAMES:
        place(name, root)
    return root / "fx"


@pytest.fixture(scope="module")
def fix_states(tmp_path_factory):
    """(old, new): every .py file of the fixers' project before and after a complete ``fix``."""
    from compile_lint.fixers import FixOptions, fix
    from test_fixers import scan_opts

    root = tmp_path_factory.mktemp("ref")
    pkg = _fix_project(root)
    old = _snapshot(root)
    rep = fix(scan_opts(pkg, use_installed_torch=False), FixOptions(unsafe=True))
    new = _snapshot(root)
    assert len(rep.written) >= 3, rep.written
    _REMAINING["ref"] = _key(rep.remaining)
    return old, new


_REMAINING: dict = {}


def _rerun_completes(pkg: Path, new: dict) -> None:
    """A second ``fix`` after an interruption leaves the same findings as an uninterrupted one.  (When the
    generated op module was written but the call site was not, the re-run adds a second op beside the orphan
    one -- ``quantize_sm100_2`` -- so the bytes may differ from the uninterrupted run; the code still parses.)"""
    import ast

    from compile_lint.fixers import FixOptions, fix
    from test_fixers import scan_opts

    rep = fix(scan_opts(pkg, use_installed_torch=False), FixOptions(unsafe=True))
    assert _key(rep.remaining) == _REMAINING["ref"]
    for p in pkg.rglob("*.py"):
        ast.parse(p.read_text())
    assert set(_snapshot(pkg.parent)) == set(new)


def _assert_old_or_new(root: Path, old: dict, new: dict) -> int:
    """Every .py file is exactly its old or its new text; returns how many are new."""
    now = _snapshot(root)
    n_new = 0
    for rel, data in now.items():
        candidates = [x for x in (old.get(rel), new.get(rel)) if x is not None]
        assert data in candidates, f"{rel} is neither the old nor the new text (partial write)"
        n_new += data != old.get(rel)
    assert set(old) <= set(now), f"a file disappeared: {set(old) - set(now)}"
    return n_new


# ------------------------------------------------------------------------------------------- --fix interrupted
@pytest.mark.parametrize("at", [1, 2, 3, 4])
def test_fix_interrupted_at_each_rename(at, tmp_path, monkeypatch, fix_states):
    """KeyboardInterrupt raised in place of the ``at``-th rename: earlier files are new, the rest old, no temp
    file is left, and a second run completes the fix."""
    from compile_lint.fixers import FixOptions, fix
    from compile_lint.fixers import source
    from test_fixers import scan_opts

    old, new = fix_states
    pkg = _fix_project(tmp_path)
    real = os.replace
    calls = []

    def replace(a, b):
        calls.append(b)
        if len(calls) == at:
            raise KeyboardInterrupt("killed in the middle of --fix")
        return real(a, b)

    monkeypatch.setattr(source.os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        fix(scan_opts(pkg, use_installed_torch=False), FixOptions(unsafe=True))
    assert _assert_old_or_new(tmp_path, old, new) == at - 1
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")], "temp file left behind"
    monkeypatch.setattr(source.os, "replace", real)
    _rerun_completes(pkg, new)
    if at == 1:  # nothing was written: the re-run is the uninterrupted run
        assert _snapshot(tmp_path) == new


def test_fix_interrupted_while_writing_the_temp_file(tmp_path, monkeypatch, fix_states):
    """A failure after half the bytes are written (disk full, a kill during write): the target keeps its text."""
    from compile_lint.fixers import FixOptions, fix
    from compile_lint.fixers import source
    from test_fixers import scan_opts

    old, new = fix_states
    pkg = _fix_project(tmp_path)
    real_fsync = os.fsync
    n = {"calls": 0}

    def fsync(fd):
        n["calls"] += 1
        if n["calls"] == 2:  # the second file: the temp file holds the new text, not yet renamed
            raise OSError(28, "No space left on device")
        return real_fsync(fd)

    monkeypatch.setattr(source.os, "fsync", fsync)
    rep = fix(scan_opts(pkg, use_installed_torch=False), FixOptions(unsafe=True))
    assert _assert_old_or_new(tmp_path, old, new) == 1  # the op module; nothing is written after the failure
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]
    reasons = [why for _, why in rep.skipped]
    assert reasons and all("No space left on device" in w and "cannot write" in w for w in reasons), reasons


_KILL_DRIVER = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, {tests!r})
    from compile_lint.fixers import FixOptions, fix
    from compile_lint.fixers import source
    from test_fixers import scan_opts
    at, when = int(sys.argv[1]), sys.argv[2]
    real = os.replace
    calls = []
    def replace(a, b):
        calls.append(b)
        if len(calls) == at and when == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        real(a, b)
        if len(calls) == at and when == "after":
            os.kill(os.getpid(), signal.SIGKILL)
    source.os.replace = replace
    fix(scan_opts({pkg!r}, use_installed_torch=False), FixOptions(unsafe=True))
""")


@pytest.mark.parametrize("at,when", [(1, "before"), (2, "after"), (4, "before")])
def test_fix_sigkilled_mid_run(at, when, tmp_path, fix_states):
    """A real SIGKILL of the fixing process right before / after a rename: every file is old or new; the temp
    file a kill may leave is not a .py file, so no scan ever reads it; a re-run completes the fix."""
    from compile_lint.fixers import FixOptions, fix
    from test_fixers import scan_opts

    old, new = fix_states
    pkg = _fix_project(tmp_path)
    code = _KILL_DRIVER.format(tests=str(TESTS), pkg=str(pkg))
    p = subprocess.run([sys.executable, "-c", code, str(at), when], capture_output=True, text=True, timeout=300)
    assert p.returncode == -signal.SIGKILL, p.stderr[-2000:]
    assert _assert_old_or_new(tmp_path, old, new) == (at - 1 if when == "before" else at)
    leftovers = [q for q in tmp_path.rglob("*") if q.name.endswith(".tmp")]
    assert all(not q.name.endswith(".py") for q in leftovers)
    _rerun_completes(pkg, new)


# ------------------------------------------------------------------------------------------- the file system
@pytest.fixture
def project(tmp_path):
    return make_project(tmp_path / "proj")


def test_read_only_files_scan_like_writable_ones(project):
    want = _key(scan(_opts(project)).findings)
    for p in project.rglob("*.py"):
        p.chmod(0o444)
    project.joinpath("pkg").chmod(0o555)
    try:
        r = scan(_opts(project))
    finally:
        project.joinpath("pkg").chmod(0o755)
    assert _key(r.findings) == want and want
    assert not r.problems


def test_file_deleted_during_the_scan(project, monkeypatch):
    """Discovered, then deleted before it is read: one line about it; the other files are still scanned."""
    import compile_lint.engine as engine

    extra = project / "pkg" / "gone.py"
    extra.write_text("import torch\n\n@torch.compile\ndef g(x):\n    return x\n")
    real = engine.discover

    def discover_then_delete(*a, **kw):
        d = real(*a, **kw)
        extra.unlink()
        return d

    monkeypatch.setattr(engine, "discover", discover_then_delete)
    r = scan(_opts(project))
    assert [f.callee for f in r.findings] == ["subprocess.check_output"]
    why = dict(r.problems).get(str(extra))
    assert why and "No such file or directory" in why and "\n" not in why


def test_file_deleted_between_two_reads(project, monkeypatch):
    """Deleted after the region pre-filter read it but before it is indexed."""
    import compile_lint.engine as engine

    victim = project / "pkg" / "helpers.py"
    real_loader = engine.SummaryLoader.__call__

    def load(self, module, path, is_package):
        if Path(path) == victim and victim.exists():
            victim.unlink()
        return real_loader(self, module, path, is_package)

    monkeypatch.setattr(engine.SummaryLoader, "__call__", load)
    r = scan(_opts(project))
    assert not r.findings  # the hazard's file is gone; the region is still found
    assert r.stats["regions"] == 1
    assert any("helpers.py" in p and "No such file" in why for p, why in r.problems), r.problems


def test_symlink_loops(project):
    pkg = project / "pkg"
    (pkg / "up").symlink_to("..")  # a directory loop
    (pkg / "self.py").symlink_to("self.py")  # a file loop
    (pkg / "a.py").symlink_to("b.py")
    (pkg / "b.py").symlink_to("a.py")
    (pkg / "dangling.py").symlink_to(project / "nowhere.py")
    r = scan(_opts(project))
    assert [f.callee for f in r.findings] == ["subprocess.check_output"]
    why = dict(r.problems)
    assert "symlink loop" in why[str(pkg / "up")]
    for name in ("self.py", "a.py", "b.py"):
        assert "loop" in why[str(pkg / name)].lower(), why
    assert "broken symlink" in why[str(pkg / "dangling.py")]
    assert all("\n" not in w for w in why.values())


def test_scanning_a_symlink_loop_directly_is_a_clear_error(tmp_path):
    (tmp_path / "loop.py").symlink_to("loop.py")
    p = subprocess.run([COMPILE_LINT, "scan", "loop.py", "--no-cache", "-q"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.count("\n") == 1 and "loop.py" in p.stderr


def test_a_20mb_generated_file_is_skipped_quickly(project):
    big = project / "pkg" / "generated.py"
    chunk = "".join(f"def f{i}(x):\n    return helper(x, key='{i}')\n\n" for i in range(2000))
    with open(big, "w") as fh:
        fh.write("import torch\n\nf_c = torch.compile(lambda x: x)\n\n")  # a region candidate: it is indexed
        while fh.tell() < 20_000_000:
            fh.write(chunk)
    t = time.monotonic()
    r = scan(_opts(project))
    elapsed = time.monotonic() - t
    assert [f.callee for f in r.findings] == ["subprocess.check_output"]
    why = dict(r.problems).get(str(big))
    assert why and "too large" in why and "\n" not in why, r.problems
    assert elapsed < 30, f"{elapsed:.1f}s"


def test_nul_bytes_and_undecodable_files(project):
    pkg = project / "pkg"
    head = b"import torch  # torch.compile\n"  # region candidates: each file is indexed
    (pkg / "nul.py").write_bytes(head + b"x = 1\x00\n@torch.compile\ndef f(x):\n    return x\n")
    (pkg / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\nname = '\xe9t\xe9'  # compile\n")
    (pkg / "badenc.py").write_bytes(b"# -*- coding: no-such-codec -*-\nx = 1  # compile\n")
    (pkg / "garbage.py").write_bytes(head + os.urandom(4096))
    (pkg / "py2.py").write_text("import torch  # compile\nprint 'hello'\n")
    r = scan(_opts(project))
    assert [f.callee for f in r.findings] == ["subprocess.check_output"]
    why = dict(r.problems)
    assert "null bytes" in why.get(str(pkg / "nul.py"), ""), r.problems
    assert "Missing parentheses" in why.get(str(pkg / "py2.py"), ""), r.problems
    assert str(pkg / "garbage.py") in why
    assert str(pkg / "latin.py") not in why
    for p, w in r.problems:
        assert w and "\n" not in w


def test_deep_nesting_is_skipped_not_a_crash(project):
    pkg = project / "pkg"
    head = "import torch  # torch.compile\n"  # region candidates: each file is indexed
    (pkg / "deep1.py").write_text(head + "x = " + "a + " * 5000 + "1\n")  # RecursionError in ast.parse
    (pkg / "deep2.py").write_text(head + "x = " + "(" * 300 + "1" + ")" * 300 + "\n")
    (pkg / "deep3.py").write_text(head + "".join("    " * i + f"if x{i}:\n" for i in range(120)) + "    " * 120 +
                                  "pass\n")
    (pkg / "deep4.py").write_text(head + "y = a" + ".b" * 3000 + "\n")
    (pkg / "deep5.py").write_text(head + "@torch.compile\ndef f(x):\n    return " + "g(" * 150 + ")" * 150 + "\n")
    r = scan(_opts(project))
    assert [f.callee for f in r.findings] == ["subprocess.check_output"]
    why = dict(r.problems)
    for n in ("deep1.py", "deep2.py", "deep3.py"):
        assert why.get(str(pkg / n)), (n, r.problems)


# ------------------------------------------------------------------------------------------- without privileges
_PR_CAPBSET_DROP, _CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 24, 1, 2


def _drop_file_privileges():
    """preexec_fn: drop the capabilities that let root ignore file permissions (in the child only)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            os._exit(97)


def _unprivileged(args, cwd):
    """Run compile-lint without the power to bypass file permissions: as root, drop CAP_DAC_OVERRIDE and
    CAP_DAC_READ_SEARCH from the child's bounding set (no setuid: the venv may live under /root); as another
    user, run it as is."""
    if not sys.platform.startswith("linux"):
        pytest.skip("permission tests need Linux capabilities")
    pre = _drop_file_privileges if os.geteuid() == 0 else None
    p = subprocess.run([COMPILE_LINT, *args], cwd=cwd, capture_output=True, text=True, timeout=300, preexec_fn=pre)
    if p.returncode == 97:
        pytest.skip("running as root and cannot drop CAP_DAC_OVERRIDE (no CAP_SETPCAP): permissions are not "
                    "enforced for this process")
    return p


def _check_unprivileged_works(tmp_path):
    probe = tmp_path / "probe"
    probe.write_text("x")
    probe.chmod(0)
    try:
        p = _unprivileged(["--version"], tmp_path)
        assert p.returncode == 0, p.stderr
        pre = _drop_file_privileges if os.geteuid() == 0 else None
        q = subprocess.run(["cat", str(probe)], capture_output=True, preexec_fn=pre)
        if q.returncode == 0:
            pytest.skip("file permissions are not enforced here even without CAP_DAC_OVERRIDE")
    finally:
        probe.chmod(0o644)


def test_unreadable_directory_and_file(project, tmp_path):
    _check_unprivileged_works(tmp_path)
    locked = project / "pkg" / "locked"
    locked.mkdir()
    (locked / "__init__.py").write_text("import subprocess\nsubprocess.run(['x'])\n")
    secret = project / "pkg" / "secret.py"
    secret.write_text("import torch\n@torch.compile\ndef f(x):\n    return x\n")
    cache = warm_cache_dir(project.parent / "cache")
    locked.chmod(0)
    secret.chmod(0)
    try:
        p = _unprivileged(["scan", ".", "--cache-dir", str(cache), "-q", "--format", "json"], project)
    finally:
        locked.chmod(0o755)
        secret.chmod(0o644)
    assert p.returncode == 1, p.stderr  # the hazard in pkg/helpers.py is still found
    assert "Traceback" not in p.stderr
    doc = json.loads(p.stdout)
    assert [f["callee"] for f in doc["findings"]] == ["subprocess.check_output"]
    why = {Path(s["path"]).name: s["reason"] for s in doc["skipped_files"]}
    assert "Permission denied" in why["locked"] and "cannot list" in why["locked"]
    assert "Permission denied" in why["secret.py"]


def test_unwritable_directory_for_fix_and_cache(tmp_path):
    """--fix where the files cannot be replaced and the cache cannot be written: clear lines, nothing lost."""
    _check_unprivileged_works(tmp_path)
    work = make_project(tmp_path / "proj")
    (work / "pkg/model.py").write_text((work / "pkg/model.py").read_text().replace(", fullgraph=True", ""))
    before = _snapshot(work)
    warm_cache_dir(work / ".compile_lint_cache")  # readable, not writable: the trace rules come from it
    for d in (work / "pkg", work / ".compile_lint_cache"):
        d.chmod(0o555)
    try:
        p = _unprivileged(["scan", ".", "--fix", "-q", "--stats"], work)
    finally:
        for d in (work / "pkg", work / ".compile_lint_cache"):
            d.chmod(0o755)
    assert p.returncode in (1, 2), p
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr, p.stderr
    assert "Permission denied" in p.stderr + p.stdout
    assert _snapshot(work) == before


# ------------------------------------------------------------------------------------------- the cache
def _entries(cache: Path) -> list:
    """The summary cache's entries (not the result cache's, lint/resultcache.py)."""
    return sorted((cache / "summaries").rglob("*.pkl"))


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "wrong-type", "directory"])
def test_corrupt_cache_is_rebuilt_never_trusted(damage, project, tmp_path):
    cache = tmp_path / "cache"
    want = _key(scan(_opts(project, cache_dir=cache)).findings)
    entries = _entries(cache)
    assert entries
    for e in entries:
        data = e.read_bytes()
        if damage == "garbage":
            e.write_bytes(os.urandom(len(data)))
        elif damage == "truncated":
            e.write_bytes(data[: len(data) // 2])
        elif damage == "empty":
            e.write_bytes(b"")
        elif damage == "wrong-type":
            e.write_bytes(pickle.dumps({"name": "pkg.helpers", "functions": {}}))
        else:
            e.unlink()
            e.mkdir()
    r = scan(_opts(project, cache_dir=cache))
    assert _key(r.findings) == want
    assert r.stats["cache_hits"] == 0 and r.stats["files_parsed"] == len(entries)
    assert all("\n" not in w for _, w in r.problems)
    if damage != "directory":
        r2 = scan(_opts(project, cache_dir=cache))  # rebuilt: now trusted again
        assert r2.stats["cache_hits"] == len(entries) and r2.stats["files_parsed"] == 0
        assert _key(r2.findings) == want


def test_cache_dir_that_is_a_file(project, tmp_path):
    blocker = tmp_path / "cache"
    blocker.write_text("not a directory")
    r = scan(_opts(project, cache_dir=blocker))
    assert [f.callee for f in r.findings] == ["subprocess.check_output"]
    assert any("cannot write cache entry" in w for _, w in r.problems), r.problems


def _gen_package(root: Path, n: int) -> Path:
    pkg = root / "gen"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    for i in range(n):
        nxt = f"from gen.m{i + 1} import step{i + 1}\n" if i + 1 < n else "import subprocess\n"
        call = f"step{i + 1}(x)" if i + 1 < n else "subprocess.check_output(['nvcc'])"
        (pkg / f"m{i}.py").write_text(f"{nxt}\n\ndef step{i}(x):\n    {call}\n    return x\n" +
                                      "".join(f"\n\ndef pad{j}(y):\n    return y + {j}\n" for j in range(30)))
    (pkg / "model.py").write_text("import torch\nfrom gen.m0 import step0\n\n\n@torch.compile(fullgraph=True)\n"
                                  "def f(x):\n    return step0(x)\n")
    return pkg


def test_concurrent_runs_share_one_cache(tmp_path):
    """Four processes scan the same tree into the same empty cache at once: identical reports, no problem
    reported, no temp file left, every entry loadable."""
    pkg = _gen_package(tmp_path / "src", 60)
    cache = warm_cache_dir(tmp_path / "cache")  # the installed torch's trace rules only
    assert not _entries(cache)
    cmd = [COMPILE_LINT, "scan", str(pkg), "--cache-dir", str(cache), "--no-environment", "-q", "--format", "json"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 1, err
        assert "Traceback" not in err
    docs = [json.loads(o) for o, _ in outs]
    assert all(d["findings"] == docs[0]["findings"] for d in docs)
    assert [f["callee"] for f in docs[0]["findings"]] == ["subprocess.check_output"]
    assert all(not d["skipped_files"] for d in docs), [d["skipped_files"] for d in docs]
    assert not [q for q in cache.rglob("*") if q.name.startswith(".tmp")]
    entries = _entries(cache)
    assert len(entries) >= 60
    for e in entries:
        with open(e, "rb") as fh:
            pickle.load(fh)
    # and a run that finds everything it needs cached
    r = scan(_opts(pkg, cache_dir=cache))
    assert r.stats["cache_hits"] == len(entries) and r.stats["files_parsed"] == 0


def test_stats_count_and_list_skipped_files(project):
    """`--stats`: files that cannot be parsed are counted (files_skipped) and listed with their one-line reason."""
    (project / "pkg" / "py2.py").write_text("import torch  # torch.compile\nprint 'hello'\n")
    (project / "pkg" / "nul.py").write_bytes(b"import torch  # torch.compile\nx = 1\x00\n")
    cache = warm_cache_dir(project.parent / "cache")
    p = subprocess.run([COMPILE_LINT, "scan", ".", "--stats", "-q", "--no-environment", "--cache-dir", str(cache)],
                       cwd=project, capture_output=True, text=True, timeout=300)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert "  files_skipped: 2" in p.stdout, p.stdout
    assert f"  skipped {project / 'pkg' / 'py2.py'}: cannot parse: Missing parentheses" in p.stdout
    assert f"  skipped {project / 'pkg' / 'nul.py'}: cannot parse: source code string cannot contain null bytes" \
        in p.stdout


def test_a_report_is_renamed_into_place_without_fsync_and_a_source_file_is_fsynced(tmp_path, monkeypatch):
    """A report (``-o``) is written again by the next run: it is renamed over the old one whole, not fsynced
    (0.1-0.4 s for the benchmark site's 67 MB report).  What a fixer or ``--add-ignore`` writes is the user's
    source: fsynced before the rename."""
    from compile_lint.atomic import write_atomic
    from compile_lint.postscan import write_report

    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    report = tmp_path / "out" / "report.json"
    report.parent.mkdir()
    report.write_text("old")
    report.chmod(0o640)
    write_report('{"findings": []}\n', str(report))
    assert report.read_text() == '{"findings": []}\n' and synced == []
    assert report.stat().st_mode & 0o777 == 0o640  # (the old file's mode, as for every atomic write)
    assert sorted(p.name for p in report.parent.iterdir()) == ["report.json"]  # no temp file left
    write_atomic(tmp_path / "mod.py", b"x = 1\n")
    assert (tmp_path / "mod.py").read_bytes() == b"x = 1\n" and len(synced) == 1
