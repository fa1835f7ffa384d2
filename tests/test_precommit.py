"""`compile-lint precommit FILES...` and the hooks in .pre-commit-hooks.yaml, run by the real pre-commit.

The pre-commit tests skip (with the reason) when the `pre-commit` package is not importable, or when its
virtualenv for the hook cannot be installed (no package index reachable).  `pre-commit try-repo` is pointed at
a committed copy of this work tree, so uncommitted changes here are what is tested.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from ecosystem_util import BIN, ROOT, cli, doc_block, doc_commands, git, init_repo, make_project, sh

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"}
NETWORK_HINTS = ("Could not find a version", "No matching distribution", "Temporary failure in name resolution",
                 "Failed to establish a new connection", "Network is unreachable", "ProxyError")


def rules(run):
    return [(f["rule"], f["path"], f["line"]) for f in json.loads(run.stdout)["findings"]]


# ------------------------------------------------------------------------------------------- the command
def test_precommit_reports_findings_whose_path_touches_the_files(tmp_path):
    make_project(tmp_path, **{
        "pkg/mid.py": "from pkg.helpers import cuda_version\n\n\ndef middle():\n    return cuda_version()\n",
        "pkg/model2.py": "import torch\nfrom pkg.mid import middle\n\n\ndef g(x):\n    middle()\n    return x\n\n\n"
                         "g_c = torch.compile(g)\n",
        "pkg/other.py": "X = 1\n",
    })
    init_repo(tmp_path)

    def touching(*files):
        r = cli(["precommit", "--no-cache", "--format", "json", *files], tmp_path)
        assert r.exit_code in (0, 1), r
        return r.exit_code, sorted({(f["rule"], f["region"]["path"]) for f in json.loads(r.stdout)["findings"]})

    assert touching("pkg/other.py", "pkg/__init__.py") == (0, [])
    # the hazard's file: both regions' paths go through it (one finding, the shortest path)
    code, found = touching("pkg/helpers.py")
    assert code == 1 and [x[0] for x in found] == ["CL101"]
    # a region's file, and a function in the middle of the other path
    assert touching("pkg/model.py") == (1, [("CL101", "pkg/model.py")])
    r = cli(["precommit", "--no-cache", "--format", "json", "pkg/mid.py"], tmp_path)
    f = json.loads(r.stdout)["findings"]
    assert r.exit_code == 1 and [fr["path"] for fr in f[0]["trace"]] == ["pkg/model2.py", "pkg/mid.py", "pkg/helpers.py"]


def test_precommit_scans_the_work_tree_from_a_subdirectory(tmp_path):
    make_project(tmp_path)
    init_repo(tmp_path)
    r = cli(["precommit", "--no-cache", "helpers.py"], tmp_path / "pkg")
    assert r.exit_code == 1 and "CL101" in r.stdout, r


def test_hook_definitions():
    yaml = pytest.importorskip("yaml", reason="PyYAML (comes with pre-commit)")
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"compile-lint", "compile-lint-fix"}
    assert hooks["compile-lint"]["entry"] == "compile-lint precommit"
    assert hooks["compile-lint-fix"]["entry"] == "compile-lint fix"
    for h in hooks.values():
        assert h["language"] == "python" and h["types"] == ["python"] and h["require_serial"] is True


# ------------------------------------------------------------------------------------------- real pre-commit
@pytest.fixture(scope="module")
def pre_commit(tmp_path_factory):
    pytest.importorskip("pre_commit", reason="the `pre-commit` package is not installed (pip install pre-commit)")
    exe = BIN / "pre-commit"
    if not exe.exists():
        pytest.skip("pre-commit is importable but its script is not next to this interpreter")
    return str(exe)


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory):
    """A committed copy of this work tree (tracked + untracked, not ignored files)."""
    dst = tmp_path_factory.mktemp("hook-repo") / "compile-lint"
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split("\0")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / rel)
    init_repo(dst)
    return dst


@pytest.fixture(scope="module")
def pc_env(tmp_path_factory):
    env = dict(GIT_ENV)
    env["PRE_COMMIT_HOME"] = str(tmp_path_factory.mktemp("pre-commit-home"))
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def run_pc(cmd, cwd, env):
    r = sh(cmd, cwd, env=env, timeout=900)
    out = r.stdout + r.stderr
    if "An unexpected error has occurred" in out and any(h in out for h in NETWORK_HINTS):
        pytest.skip("pre-commit could not install the hook's environment (no package index): " + out[-300:])
    return r


def hazard_repo(path: Path) -> Path:
    make_project(path)
    return init_repo(path)


def remove_hazard(repo: Path):
    (repo / "pkg/helpers.py").write_text((repo / "pkg/helpers.py").read_text().replace(
        'return subprocess.check_output(["nvcc", "--version"])', 'return "12.9"'))
    git(repo, "commit", "-qam", "fix")


def test_try_repo_fails_on_a_hazard_and_passes_without(tmp_path, pre_commit, hook_repo, pc_env):
    repo = hazard_repo(tmp_path / "proj")
    r = run_pc(f"{pre_commit} try-repo {hook_repo} compile-lint --all-files", repo, pc_env)
    out = r.stdout + r.stderr
    assert r.exit_code == 1, out
    assert "compile-lint" in out and "Failed" in out and "pkg/helpers.py:5:12: CL101 error" in out, out
    remove_hazard(repo)
    r = run_pc(f"{pre_commit} try-repo {hook_repo} compile-lint --all-files", repo, pc_env)
    assert r.exit_code == 0 and "Passed" in r.stdout, r


def test_doc_try_repo_example(tmp_path, pre_commit, hook_repo, pc_env):
    (cmd,) = doc_commands("precommit-try")
    repo = hazard_repo(tmp_path / "proj")
    r = run_pc(cmd.replace("/path/to/compile-lint", str(hook_repo)), repo, pc_env)
    assert r.exit_code == 1 and "CL101" in r.stdout, r


def test_doc_config_with_the_remote_hook(tmp_path, pre_commit, hook_repo, pc_env):
    repo = hazard_repo(tmp_path / "proj")
    rev = git(hook_repo, "rev-parse", "HEAD")
    cfg = doc_block("precommit-config").replace("https://github.com/OWNER/compile-lint", str(hook_repo))
    cfg = cfg.replace("rev: v0.1.0", f"rev: {rev}")
    (repo / ".pre-commit-config.yaml").write_text(cfg)
    git(repo, "add", ".pre-commit-config.yaml")
    r = run_pc(f"{pre_commit} run --all-files", repo, pc_env)
    assert r.exit_code == 1 and "CL101" in r.stdout, r
    # only the staged files count: a commit touching an unrelated file passes
    git(repo, "commit", "-qm", "config", "--no-verify")
    (repo / "pkg/other.py").write_text("X = 1\n")
    git(repo, "add", "pkg/other.py")
    r = run_pc(f"{pre_commit} run", repo, pc_env)
    assert r.exit_code == 0 and "Passed" in r.stdout, r
    (repo / "pkg/model.py").write_text((repo / "pkg/model.py").read_text() + "\n")
    git(repo, "add", "pkg/model.py")
    r = run_pc(f"{pre_commit} run", repo, pc_env)
    assert r.exit_code == 1 and "CL101" in r.stdout, r


def test_doc_local_system_hook(tmp_path, pre_commit, pc_env):
    repo = hazard_repo(tmp_path / "proj")
    (repo / ".pre-commit-config.yaml").write_text(doc_block("precommit-local"))
    git(repo, "add", ".pre-commit-config.yaml")
    r = run_pc(f"{pre_commit} run --all-files", repo, pc_env)  # compile-lint is on PATH (this venv)
    assert r.exit_code == 1 and "pkg/helpers.py:5:12: CL101" in r.stdout, r
    remove_hazard(repo)
    r = run_pc(f"{pre_commit} run --all-files", repo, pc_env)
    assert r.exit_code == 0 and "Passed" in r.stdout, r


def test_doc_daemon_hook(tmp_path, pre_commit, pc_env):
    """The README's hook with --daemon: answered by a daemon started as the README says, and the same
    answers as without one."""
    repo = hazard_repo(tmp_path / "proj")
    (repo / ".pre-commit-config.yaml").write_text(doc_block("precommit-daemon"))
    git(repo, "add", ".pre-commit-config.yaml")
    env = dict(pc_env, COMPILE_LINT_CACHE_DIR=str(tmp_path / "user-cache"))
    assert sh("compile-lint daemon start", repo, env).exit_code == 0
    try:
        r = run_pc(f"{pre_commit} run --all-files", repo, env)
        assert r.exit_code == 1 and "pkg/helpers.py:5:12: CL101" in r.stdout, r
        assert "no daemon running" not in r.stdout + r.stderr, r
        remove_hazard(repo)
        r = run_pc(f"{pre_commit} run --all-files", repo, env)
        assert r.exit_code == 0 and "Passed" in r.stdout, r
        assert "2 requests served" in sh("compile-lint daemon status", repo, env).stdout
    finally:
        sh("compile-lint daemon stop", repo, env)


def test_try_repo_fix_hook_applies_safe_fixes(tmp_path, pre_commit, hook_repo, pc_env):
    repo = tmp_path / "proj"
    make_project(repo, **{".gitignore": ".compile_lint_cache/\n"})
    (repo / "pkg/model.py").write_text((repo / "pkg/model.py").read_text().replace(", fullgraph=True", ""))
    init_repo(repo)
    r = run_pc(f"{pre_commit} try-repo {hook_repo} compile-lint-fix --all-files", repo, pc_env)
    if "No such command 'fix'" in r.stdout + r.stderr:
        pytest.skip("this build has no `compile-lint fix` command")
    assert r.exit_code == 1 and "files were modified by this hook" in r.stdout, r
    assert "torch.compiler.disable(subprocess.check_output)" in (repo / "pkg/helpers.py").read_text()
    git(repo, "commit", "-qam", "apply the fix")
    r = run_pc(f"{pre_commit} try-repo {hook_repo} compile-lint-fix --all-files", repo, pc_env)
    assert r.exit_code == 0 and "Passed" in r.stdout, r
