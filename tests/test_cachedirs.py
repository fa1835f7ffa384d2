"""Caches where they belong (lint/cachedirs.py): what depends only on the environment in the user cache
directory, the project's results in ``.compile_lint_cache/`` at its root with a ``.gitignore`` inside; a new
working directory reuses the environment's caches; ``--cache-dir`` keeps everything in one place."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

LIB = """import subprocess


def probe():
    return subprocess.check_output(["nvcc", "--version"])
"""
APP = """import torch
from cl_cached_lib import probe


@torch.compile(fullgraph=True)
def f(x):
    probe()
    return x
"""


def cli(args, cwd, user_cache):
    env = dict(os.environ, PYTHONWARNINGS="ignore", COMPILE_LINT_CACHE_DIR=str(user_cache))
    return subprocess.run([sys.executable, "-m", "compile_lint.cli", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=600)


def git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True,
                          env=dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
                                   GIT_COMMITTER_EMAIL="t@t")).stdout


def checkout(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "app.py").write_text(APP)
    git("init", "-q", cwd=path)
    git("add", "app.py", cwd=path)
    git("commit", "-qm", "app", cwd=path)
    return path


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_new_checkout_reuses_the_environments_caches_and_git_status_stays_clean(tmp_path):
    user = tmp_path / "user-cache"
    site = tmp_path / "site"
    site.mkdir()
    (site / "cl_cached_lib.py").write_text(LIB)
    args = ["scan", "app.py", "--search-path", str(site), "--format", "json", "-q"]
    first = checkout(tmp_path / "one")
    r = cli(args, first, user)
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert [f["callee"] for f in doc["findings"]] == ["subprocess.check_output"]
    # the environment's caches are in the user cache directory, the project's at its root
    assert list(user.glob("trace_rules-*.json")) or "snapshot" in doc["trace_rules"]
    assert list((user / "summaries").rglob("*.pkl")), "the library's summary is in the user cache"
    project = first / ".compile_lint_cache"
    assert (project / ".gitignore").read_text().splitlines()[-1] == "*"
    assert list((project / "results").glob("*.pkl"))
    assert git("status", "--porcelain", cwd=first) == ""

    second = checkout(tmp_path / "two")
    r = cli(args, second, user)
    doc = json.loads(r.stdout)
    assert [f["callee"] for f in doc["findings"]] == ["subprocess.check_output"]
    assert doc["stats"]["result_cache"] == "miss"  # a new project: its own results
    assert doc["stats"]["files_parsed"] == 1  # app.py only: the library's summary came from the user cache
    assert doc["stats"]["cache_hits"] >= 1
    assert "snapshot" in doc["trace_rules"] or "cached" in doc["trace_rules"]  # not dumped again
    assert git("status", "--porcelain", cwd=second) == ""


def test_cache_dir_keeps_every_cache_in_one_place(tmp_path):
    user = tmp_path / "user-cache"
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "app.py").write_text("import torch\nf = torch.compile(lambda x: x, fullgraph=True)\n")
    r = cli(["scan", "app.py", "--cache-dir", str(tmp_path / "one"), "-q"], tmp_path / "p", user)
    assert r.returncode == 0, r.stderr
    assert not user.exists() and not (tmp_path / "p" / ".compile_lint_cache").exists()
    assert (tmp_path / "one" / ".gitignore").is_file() and list((tmp_path / "one" / "results").glob("*.pkl"))


def test_the_default_user_cache_follows_xdg_and_the_env_var(tmp_path, monkeypatch):
    from compile_lint.cachedirs import project_root, user_cache_dir

    monkeypatch.delenv("COMPILE_LINT_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert user_cache_dir() == tmp_path / "xdg" / "compile-lint"
    monkeypatch.setenv("COMPILE_LINT_CACHE_DIR", str(tmp_path / "mine"))
    assert user_cache_dir() == tmp_path / "mine"
    (tmp_path / "proj" / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "proj" / "pyproject.toml").write_text("")
    assert project_root([tmp_path / "proj" / "src" / "pkg"]) == tmp_path / "proj"
