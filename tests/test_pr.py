"""`compile-lint fix --pr`: branch, commit (hooks never run), PR body, push to a (local, bare) remote.

The fixes come from a stand-in fixer with the interface of lint/pr.py (``Fixer``), so that the flow is tested
independently of which fixes exist."""
from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

import compile_lint.pr as pr
from compile_lint.engine import ScanError, ScanOptions
from ecosystem_util import cli, doc_block, doc_commands, git, init_repo, make_project

HAZARD = 'return subprocess.check_output(["nvcc", "--version"])'
OTHER = "\n\ndef other():\n    return subprocess.run(['ls'])\n"


def hoist_fixer(result, options):
    """Fix cuda_version's subprocess call (only that one)."""
    out = []
    for f in result.findings:
        if f.qualname == "cuda_version":
            p = Path(f.path)
            p.write_text(p.read_text().replace(HAZARD, 'return CUDA_VERSION').replace(
                "import subprocess\n", "import subprocess\n\nCUDA_VERSION = '12.9'  # read once at import\n", 1))
            out.append(pr.AppliedFix(f, "hoist-load", "read the version once at import time", (f.path,)))
    return out


@pytest.fixture
def repo(tmp_path):
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    work = make_project(tmp_path / "work")
    (work / "pkg/helpers.py").write_text((work / "pkg/helpers.py").read_text() + OTHER)
    (work / "pkg/model.py").write_text((work / "pkg/model.py").read_text().replace(
        "from pkg.helpers import cuda_version, pure", "from pkg.helpers import cuda_version, other, pure").replace(
        "    cuda_version()\n", "    cuda_version()\n    other()\n"))
    (work / ".gitignore").write_text(".compile_lint_cache/\n")
    init_repo(work)
    git(work, "branch", "-M", "main")
    git(work, "remote", "add", "origin", str(remote))
    git(work, "push", "-q", "-u", "origin", "main")
    # hooks that must never run: in .git/hooks and in a configured core.hooksPath
    marker = tmp_path / "HOOK-RAN"
    for d in (work / ".git" / "hooks", work / "evil-hooks"):
        d.mkdir(exist_ok=True)
        for name in ("pre-commit", "commit-msg", "post-commit", "pre-push", "prepare-commit-msg", "post-checkout"):
            h = d / name
            h.write_text(f"#!/bin/sh\necho {name} >> {marker}\nexit 1\n")
            h.chmod(0o755)
    git(work, "config", "core.hooksPath", str(work / "evil-hooks"))
    return work, remote, marker


def opts(work):
    return ScanOptions(paths=[work], cache_dir=None)


def test_fix_pr_branch_commit_body_and_push(repo):
    work, remote, marker = repo
    head = git(work, "rev-parse", "--short", "HEAD")
    res = pr.fix_pr(opts(work), work, hoist_fixer, push=True, open_pr=True)
    assert not marker.exists(), marker.read_text()
    assert res.branch == f"compile-lint/fix-{head}" and res.base == "main"
    # back on main, untouched; the fix lives on the branch
    assert git(work, "rev-parse", "--abbrev-ref", "HEAD") == "main"
    assert HAZARD in (work / "pkg/helpers.py").read_text()
    assert git(work, "show", "--name-only", "--format=", res.branch).split() == ["pkg/helpers.py"]
    assert "CUDA_VERSION = '12.9'" in git(work, "show", f"{res.branch}:pkg/helpers.py")
    msg = git(work, "log", "-1", "--format=%B", res.branch)
    assert msg.startswith("compile-lint: fix 1 torch.compile hazard\n")
    assert "- CL101 pkg/helpers.py:5 subprocess.check_output" in msg and "Remaining after a re-scan: 1" in msg
    assert git(work, "rev-parse", f"{res.branch}^") == git(work, "rev-parse", "main")
    # pushed to the bare remote
    assert git(remote, "rev-parse", f"refs/heads/{res.branch}") == res.commit and res.pushed
    # the body
    body = res.body
    assert body.startswith("## compile-lint: 1 torch.compile hazard fixed\n")
    assert "1. **CL101** `subprocess.check_output` starts a subprocess inside the compiled region — `pkg/helpers.py:5`" in body
    assert "path: `pkg/model.py:12` torch.compile(f) → `pkg/model.py:7` f → `pkg/helpers.py:5` cuda_version → " \
           "`subprocess.check_output`" in body
    assert "before: **error** (fullgraph=True): Unsupported (GB0007)" in body
    assert "fix: `hoist-load` — read the version once at import time" in body
    remaining = body.split("### Remaining after a re-scan", 1)[1]
    assert "1 error" in remaining and "**CL101** `pkg/helpers.py:15` `subprocess.run`" in remaining
    assert "### Files changed\n\n- `pkg/helpers.py`" in body
    assert res.body_file.read_text() == body and res.body_file.is_relative_to(work / ".git")
    # no gh here: the exact command to open the PR is given
    assert not res.opened
    gh = shlex.split(res.commands[-1])
    assert gh[:3] == ["gh", "pr", "create"] and gh[gh.index("--head") + 1] == res.branch
    assert gh[gh.index("--base") + 1] == "main" and gh[gh.index("--body-file") + 1] == str(res.body_file)


def test_without_push_prints_the_commands(repo):
    work, remote, marker = repo
    res = pr.fix_pr(opts(work), work, hoist_fixer)
    assert not res.pushed and res.commands[0] == f"git push -u origin {res.branch}"
    assert git(remote, "rev-parse", "--verify", "--quiet", f"refs/heads/{res.branch}", check=False) == ""
    with pytest.raises(ScanError, match="exists already"):
        pr.fix_pr(opts(work), work, hoist_fixer)
    assert not marker.exists()


def test_refuses_a_dirty_tree_and_restores_after_a_failing_fixer(repo):
    work, _, _ = repo
    (work / "pkg/model.py").write_text((work / "pkg/model.py").read_text() + "# wip\n")
    with pytest.raises(ScanError, match="uncommitted changes"):
        pr.fix_pr(opts(work), work, hoist_fixer)
    git(work, "checkout", "--", "pkg/model.py")

    def broken(result, options):
        (work / "pkg/helpers.py").write_text("garbage")
        (work / "pkg/new_file.py").write_text("x = 1\n")
        raise RuntimeError("fixer crashed")

    with pytest.raises(RuntimeError):
        pr.fix_pr(opts(work), work, broken)
    assert HAZARD in (work / "pkg/helpers.py").read_text() and not (work / "pkg/new_file.py").exists()
    assert git(work, "branch", "--list", "compile-lint/*") == ""


def test_nothing_to_fix_creates_no_branch(repo):
    work, _, _ = repo
    res = pr.fix_pr(opts(work), work, lambda result, options: [])
    assert res.branch is None and "nothing to fix" in res.message
    assert git(work, "branch", "--list", "compile-lint/*") == ""


def test_not_a_git_checkout(tmp_path):
    make_project(tmp_path)
    with pytest.raises(ScanError, match="not inside a git checkout"):
        pr.fix_pr(opts(tmp_path), tmp_path, hoist_fixer)


def test_default_fixer_speaks_the_fixers_api(monkeypatch, repo):
    """plan_fixes/apply_fixes of compile_lint.fixers, called by argument name (the fixers' FixPlan shape)."""
    import compile_lint.fixers as fx

    work, _, _ = repo
    calls = {}

    class Plan:
        def __init__(self, findings):
            self.fixer, self.description, self.findings = "hoist-load", "hoist it\nmore", findings
            self.touched = [findings[0].path]

    class Planning:
        def __init__(self, plans):
            self.plans, self.unfixable = plans, []

    def plan_fixes(result, options):
        calls["plan"] = options
        return Planning([Plan([f]) for f in result.findings if f.qualname == "cuda_version"])

    def apply_fixes(planning):
        hoist_fixer(type("R", (), {"findings": [p.findings[0] for p in planning.plans]})(), None)
        return type("Report", (), {"applied": planning.plans})()

    monkeypatch.setattr(fx, "fix", None, raising=False)  # the plan/apply pair, not the all-in-one
    monkeypatch.setattr(fx, "plan_fixes", plan_fixes, raising=False)
    monkeypatch.setattr(fx, "apply_fixes", apply_fixes, raising=False)
    res = pr.fix_pr(opts(work), work, pr.default_fixer())
    assert [(a.fixer, a.description) for a in res.applied] == [("hoist-load", "hoist it")]
    assert "fix: `hoist-load` — hoist it" in res.body and calls["plan"] is not None


def test_cli_fix_pr_and_the_doc_examples(monkeypatch, repo):
    work, remote, marker = repo
    monkeypatch.setattr(pr, "default_fixer", lambda **kw: hoist_fixer)
    first, second = doc_commands("fix-pr")
    r = cli(shlex.split(first)[1:] + ["--no-cache"], work)
    assert r.exit_code == 0, r
    head = git(work, "rev-parse", "--short", "HEAD")
    assert r.stdout.startswith("## compile-lint: 1 torch.compile hazard fixed")
    assert f"on branch compile-lint/fix-{head}" in r.stderr and "git push -u origin" in r.stderr
    git(work, "branch", "-D", f"compile-lint/fix-{head}")
    r = cli(shlex.split(second)[1:] + ["--no-cache"], work)
    assert r.exit_code == 0, r
    assert "pushed compile-lint/fix-" in r.stderr and "gh pr create" in r.stderr
    assert git(remote, "rev-parse", f"refs/heads/compile-lint/fix-{head}")
    assert not marker.exists()
    # the scheduled workflow runs the same command
    yaml = pytest.importorskip("yaml", reason="PyYAML (comes with pre-commit)")
    wf = yaml.safe_load(doc_block("fix-pr-workflow"))
    assert "schedule" in wf[True] if True in wf else "schedule" in wf["on"]
    steps = wf["jobs"]["autofix"]["steps"]
    assert steps[-1]["run"] == second.split("  #")[0].strip() and "GH_TOKEN" in steps[-1]["env"]


def test_fix_pr_with_the_real_fixers(tmp_path):
    """The fixers' own safe fix (compiler-disable: no fullgraph region reaches the hazard), end to end."""
    import compile_lint.fixers as fx

    if not callable(getattr(fx, "fix", None)) and not callable(getattr(fx, "plan_fixes", None)):
        pytest.skip("compile_lint.fixers has no fix/plan_fixes")
    work = make_project(tmp_path / "work", **{".gitignore": ".compile_lint_cache/\n"})
    (work / "pkg/model.py").write_text((work / "pkg/model.py").read_text().replace(", fullgraph=True", ""))
    init_repo(work)
    r = cli(["fix", ".", "--pr", "-q"], work)
    assert r.exit_code == 0, r
    branch = f"compile-lint/fix-{git(work, 'rev-parse', '--short', 'HEAD')}"
    assert f"on branch {branch}" in r.stderr
    assert "before: **graph break** (fullgraph=False)" in r.stdout and "fix: `compiler-disable`" in r.stdout
    assert "None: `compile-lint scan` reports no finding on this branch." in r.stdout
    assert "torch.compiler.disable(subprocess.check_output)" in git(work, "show", f"{branch}:pkg/helpers.py")
    assert git(work, "show", "--name-only", "--format=", branch).split() == ["pkg/helpers.py"]
