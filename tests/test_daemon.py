"""`compile-lint daemon` and `scan --daemon` (lint/daemon.py): the console script, as a user runs it."""
from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

import pytest

from compile_lint import daemon

from ecosystem_util import sh
from test_incremental import CASES, EDITS, _edit

pytestmark = pytest.mark.skipif(not daemon.available(), reason="the daemon needs Unix sockets")


@pytest.fixture
def served(tmp_path):
    """A corpus copy, a cache directory and a running daemon (its socket under a private user cache dir)."""
    root = tmp_path / "cases"
    shutil.copytree(CASES, root)
    env = {"COMPILE_LINT_CACHE_DIR": str(tmp_path / "user-cache")}
    r = sh("compile-lint daemon start --idle-timeout 600", tmp_path, env)
    assert r.exit_code == 0 and "started" in r.stdout, r
    try:
        yield root, tmp_path / "cache", env
    finally:
        sh("compile-lint daemon stop", tmp_path, env)


def _scan(root: Path, cache: Path, env: dict, *extra: str) -> tuple:
    r = sh(f"compile-lint scan . --no-environment --show-disabled --format json --incremental "
           f"--cache-dir {cache} {' '.join(extra)}", root, env)
    assert r.exit_code in (0, 1), r
    return json.loads(r.stdout)["findings"], r


def _no_cache(root: Path, env: dict) -> list:
    r = sh("compile-lint scan . --no-environment --show-disabled --format json --no-cache", root, env)
    assert r.exit_code in (0, 1), r
    return json.loads(r.stdout)["findings"]


def _status(tmp_path: Path, env: dict) -> str:
    return sh("compile-lint daemon status", tmp_path, env).stdout


def test_each_edit_answered_by_the_daemon_equals_a_scan_without_cache(served, tmp_path):
    root, cache, env = served
    first, r = _scan(root, cache, env, "--daemon")
    assert "no daemon running" not in r.stderr and first == _no_cache(root, env)
    for rel, old, new in EDITS:
        _edit(root / rel, old, new)
        got, r = _scan(root, cache, env, "--daemon")
        assert "no daemon running" not in r.stderr
        assert got == _no_cache(root, env), rel
    status = _status(tmp_path, env)
    assert f"{1 + len(EDITS)} requests served" in status and "1 incremental states in memory" in status, status


def test_the_daemon_takes_a_state_another_process_wrote_since_from_disk(served, tmp_path):
    """Its own state in memory is older than the cache entry then: using it would miss the other run's edit."""
    root, cache, env = served
    _scan(root, cache, env, "--daemon")
    _edit(root / EDITS[0][0], *EDITS[0][1:])  # a new hazard, scanned by a process of its own
    mine, _ = _scan(root, cache, env)
    assert mine == _no_cache(root, env)
    _edit(root / EDITS[2][0], *EDITS[2][1:])
    got, _ = _scan(root, cache, env, "--daemon")
    assert got == _no_cache(root, env)
    assert any("CUDA_V" in f["message"] for f in got)


def test_a_failed_request_or_a_client_gone_away_leaves_the_daemon_serving(served, tmp_path, monkeypatch):
    root, cache, env = served
    r = sh(f"compile-lint scan {tmp_path / 'missing'} --daemon --cache-dir {cache}", root, env)
    assert r.exit_code == 2 and "Traceback" not in r.stderr and "missing" in r.stderr, r
    monkeypatch.setenv("COMPILE_LINT_CACHE_DIR", env["COMPILE_LINT_CACHE_DIR"])
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(str(daemon.socket_path()))
    conn.sendall(b"\x00\x00\x00")  # half a length, then gone
    conn.close()
    got, r = _scan(root, cache, env, "--daemon")
    assert "no daemon running" not in r.stderr and got == _no_cache(root, env)
    assert "2 requests served" in _status(tmp_path, env)


def test_without_a_daemon_the_command_runs_in_its_own_process(tmp_path):
    root = tmp_path / "cases"
    shutil.copytree(CASES, root)
    env = {"COMPILE_LINT_CACHE_DIR": str(tmp_path / "user-cache")}
    assert sh("compile-lint daemon status", tmp_path, env).exit_code == 1
    got, r = _scan(root, tmp_path / "cache", env, "--daemon")
    assert "no daemon running" in r.stderr and got == _no_cache(root, env) and got


def test_stop_ends_the_daemon_and_removes_its_socket(tmp_path):
    env = {"COMPILE_LINT_CACHE_DIR": str(tmp_path / "user-cache")}
    assert sh("compile-lint daemon start", tmp_path, env).exit_code == 0
    r = sh("compile-lint daemon start", tmp_path, env)
    assert r.exit_code == 0 and "already running" in r.stdout, r
    assert "stopped" in sh("compile-lint daemon stop", tmp_path, env).stdout
    assert sh("compile-lint daemon status", tmp_path, env).exit_code == 1
    assert not list((tmp_path / "user-cache" / "daemon").glob("*.sock"))
    assert "none running" in sh("compile-lint daemon stop", tmp_path, env).stdout


def test_the_result_written_after_the_answer_is_the_scans_not_the_filtered_report(served, tmp_path):
    """The daemon writes a scan's result cache entry after answering; the command has filtered its report by
    then (a baseline here, the staged files for the pre-commit hook): the entry still holds every finding and
    its counts, and the next run in a process of its own is a hit with a full scan's findings."""
    root, cache, env = served
    base = tmp_path / "baseline.json"
    r = sh(f"compile-lint scan . --no-environment --show-disabled --cache-dir {cache} --baseline {base} "
           f"--write-baseline", root, env)
    assert r.exit_code == 0 and base.is_file(), r
    _edit(root / EDITS[0][0], *EDITS[0][1:])  # one new hazard
    new, r = _scan(root, cache, env, f"--daemon --baseline {base}")
    assert "no daemon running" not in r.stderr and len(new) == 1
    assert "1 requests served" in _status(tmp_path, env)  # (answered after the entry was written)
    got, r = _scan(root, cache, env)
    want = _no_cache(root, env)
    assert got == want and len(want) > 1
    doc = json.loads(r.stdout)
    assert doc["stats"]["result_cache"] == "hit" and doc["stats"]["findings"] == len(want)


def test_the_daemons_output_is_the_commands_byte_for_byte_in_the_clients_encoding(served, tmp_path):
    """The answer carries the output as bytes in the client's stdout encoding (lint/daemon.py's protocol): a
    report naming a non-ASCII file is what the command prints in its own process, in UTF-8 and in Latin-1."""
    import os
    import subprocess

    from ecosystem_util import BIN

    root, cache, env = served
    shutil.copy(root / "c001_subprocess_run_direct.py", root / "cäse_ß.py")

    def run(encoding: str, *extra: str) -> subprocess.CompletedProcess:
        e = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", PYTHONIOENCODING=encoding,
                 **env)
        # (--no-paths: the call paths are drawn with box-drawing characters, which Latin-1 has not)
        return subprocess.run(["compile-lint", "scan", ".", "--no-environment", "--no-paths", "--cache-dir", str(cache),
                               *extra],
                              cwd=root, env=e, capture_output=True, timeout=600)

    run("utf-8")  # (then each run is a result cache hit, in its own process as in the daemon's)
    for encoding in ("utf-8", "latin-1"):
        own = run(encoding)
        assert own.returncode == 1 and "cäse_ß.py".encode(encoding) in own.stdout, own
        got = run(encoding, "--daemon")
        assert b"no daemon running" not in got.stderr and (got.returncode, got.stdout) == (1, own.stdout)
