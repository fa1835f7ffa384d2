"""Security: scanning a hostile checkout runs nothing of it, reads nothing outside it, trusts no planted cache.

- every command (scan in all formats, graph, --diff, fix, fix --pr, pre-commit, library mode, --entry) on a
  tree whose every file would leave a marker if imported or executed: ``__init__.py``, ``setup.py``,
  ``conftest.py``, ``sitecustomize.py``, ``usercustomize.py``, a ``torch/`` and a ``subprocess.py`` that
  shadow the real ones, module ``__getattr__``, metaclasses, decorators, default arguments;
- a planted ``.compile_lint_cache`` entry that would run code when unpickled: refused, rebuilt;
- symlinks to ``/etc``, to a private directory and to ``/etc/passwd``: never opened, never reported;
- ``fix --pr``: no hook (``.git/hooks``, ``core.hooksPath``), no ``core.fsmonitor`` command, no pre-commit
  config of the repo runs.
"""
from __future__ import annotations

import builtins
import io
import json
import os
import pickle
import subprocess
from pathlib import Path

import pytest

from compile_lint.engine import ScanOptions, scan
from ecosystem_util import BIN, COMPILE_LINT, git, init_repo, make_project
from test_faults import warm_cache_dir


def _plant(root: Path, marker: Path) -> Path:
    """A package whose every file, when executed, appends its name to ``marker``."""
    def side(name):
        return f"open({str(marker)!r}, 'a').write({name!r} + '\\n')\n"

    files = {
        "pkg/__init__.py": "import os\n" + side("pkg/__init__"),
        "pkg/helpers.py": side("helpers") + (
            "import subprocess\n\n\n"
            "def __getattr__(name):\n    " + side("module __getattr__") +
            "\n\nclass Meta(type):\n    def __new__(mcs, *a):\n        " + side("metaclass") +
            "        return super().__new__(mcs, *a)\n\n\n"
            "class Cfg(metaclass=Meta):\n    @property\n    def path(self):\n        " + side("property") +
            "        return '/tmp'\n\n\n"
            "def deco(f):\n    " + side("decorator") + "    return f\n\n\n"
            f"@deco\ndef cuda_version(flag=open({str(marker)!r}, 'a').write('default arg\\n')):\n"
            "    return subprocess.check_output(['nvcc', '--version'])\n"),
        "pkg/model.py": side("model") + (
            "import torch\n\nfrom pkg.helpers import Cfg, cuda_version\n\n\n"
            "def f(x):\n    cuda_version()\n    Cfg().path\n    return x + 1\n\n\n"
            "f_c = torch.compile(f, fullgraph=True)\n"),
        "setup.py": side("setup.py") + "from setuptools import setup\nsetup(name='evil')\n",
        "conftest.py": side("conftest.py"),
        "sitecustomize.py": side("sitecustomize.py"),
        "usercustomize.py": side("usercustomize.py"),
        "noxfile.py": side("noxfile.py"),
        "subprocess.py": side("shadow subprocess"),
        "torch/__init__.py": side("shadow torch") + "def compile(f=None, **kw):\n    return f\n",
        "pyproject.toml": "[build-system]\nrequires = ['setuptools']\nbuild-backend = 'evil_backend'\n",
        "evil_backend.py": side("build backend"),
        "pkg.pth": f"import os; open({str(marker)!r}, 'a').write('pth\\n')\n",
    }
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def _run(args, cwd, env=None):
    e = dict(os.environ)
    e["PATH"] = f"{BIN}{os.pathsep}{e.get('PATH', '')}"
    e.update(env or {})
    return subprocess.run([COMPILE_LINT, *args], cwd=cwd, capture_output=True, text=True, timeout=300, env=e)


def test_no_command_imports_or_runs_scanned_code(tmp_path):
    marker = tmp_path / "EXECUTED"
    tree = _plant(tmp_path / "evil", marker)
    (tree / ".gitignore").write_text(".compile_lint_cache/\n")
    init_repo(tree)
    warm_cache_dir(tree / ".compile_lint_cache")
    commands = [
        ["scan", "."],
        ["scan", ".", "--format", "json", "--stats"],
        ["scan", ".", "--format", "sarif"],
        ["scan", ".", "--entry", "pkg.helpers:cuda_version", "--target-arch", "sm90"],
        ["scan", ".", "--public-api", "pkg"],
        ["scan", ".", "--diff"],
        ["graph", ".", "--from", "f", "--to", "subprocess.check_output"],
        ["precommit", "pkg/model.py"],
    ]
    # (run from inside the tree; PYTHONPATH=tree is out of scope: then Python itself imports the tree's
    # subprocess.py in place of the standard library's, before compile-lint starts)
    results = [_run(c, tree) for c in commands]
    for c, r in zip(commands, results):
        assert r.returncode in (0, 1), (c, r.stderr[-2000:])
        assert "Traceback" not in r.stderr, (c, r.stderr[-2000:])
    assert "subprocess.check_output" in results[0].stdout  # the hazard is still found, statically
    assert not marker.exists(), f"scanned code ran: {marker.read_text()}"


def test_fix_and_fix_pr_run_nothing_of_the_repo(tmp_path):
    marker = tmp_path / "EXECUTED"
    work = _plant(tmp_path / "work", marker)
    (work / "pkg/model.py").write_text((work / "pkg/model.py").read_text().replace(", fullgraph=True", ""))
    (work / ".gitignore").write_text(".compile_lint_cache/\n")
    (work / ".pre-commit-config.yaml").write_text(
        "repos:\n- repo: local\n  hooks:\n  - id: evil\n    name: evil\n    language: system\n"
        f"    entry: sh -c 'echo pre-commit-framework >> {marker}'\n    always_run: true\n")
    init_repo(work)
    warm_cache_dir(work / ".compile_lint_cache")
    hooks_ran = tmp_path / "HOOK-RAN"
    for d in (work / ".git" / "hooks", work / "evil-hooks"):
        d.mkdir(exist_ok=True)
        for name in ("pre-commit", "commit-msg", "post-commit", "pre-push", "prepare-commit-msg", "post-checkout",
                     "post-index-change", "reference-transaction"):
            h = d / name
            h.write_text(f"#!/bin/sh\necho {name} >> {hooks_ran}\nexit 1\n")
            h.chmod(0o755)
    git(work, "config", "core.hooksPath", str(work / "evil-hooks"))
    git(work, "config", "core.fsmonitor", f"echo fsmonitor >> {hooks_ran}; true")
    r = _run(["fix", ".", "--pr", "-q"], work)
    assert r.returncode == 0, r.stderr[-3000:]
    head = git(work, "rev-parse", "--short", "main")
    branch = f"compile-lint/fix-{head}"
    assert branch in git(work, "branch", "--list", branch)
    assert "torch.compiler.disable" in git(work, "show", f"{branch}:pkg/helpers.py")
    assert not hooks_ran.exists(), f"a hook of the repo ran: {hooks_ran.read_text()}"
    assert not marker.exists(), f"scanned code ran: {marker.read_text()}"


def _malicious_pickle(marker: Path) -> bytes:
    class Evil:
        def __reduce__(self):
            return (os.system, (f"echo pickle >> {marker}",))

    return pickle.dumps(Evil(), protocol=pickle.HIGHEST_PROTOCOL)


def test_planted_cache_entries_are_never_unpickled_into_code(tmp_path):
    """The default cache (``.compile_lint_cache`` in the working directory, or the repo root for the
    pre-commit hook) may come with the checkout: a planted entry at the right key is refused and rebuilt."""
    marker = tmp_path / "EXECUTED"
    work = make_project(tmp_path / "work")
    warm_cache_dir(work / ".compile_lint_cache")
    first = _run(["scan", ".", "-q", "--format", "json"], work)
    entries = sorted((work / ".compile_lint_cache").rglob("*.pkl"))
    assert entries, first.stderr
    evil = _malicious_pickle(marker)
    for e in entries:
        e.write_bytes(evil)
    again = _run(["scan", ".", "-q", "--format", "json"], work)
    assert not marker.exists(), "a planted cache entry ran code"
    a, b = json.loads(first.stdout), json.loads(again.stdout)
    assert [f["fingerprint"] for f in b["findings"]] == [f["fingerprint"] for f in a["findings"]]
    assert b["stats"]["cache_hits"] == 0
    reasons = [s["reason"] for s in b["skipped_files"]]
    assert reasons and all("corrupt cache entry, rebuilt" in r or "corrupt result cache entry, rescanned" in r
                           for r in reasons), reasons
    # the result cache's entry (lint/resultcache.py) was planted too, and refused the same way
    assert any("result cache" in r for r in reasons), reasons
    assert b["stats"]["result_cache"] == "miss"
    from compile_lint.cache import SummaryCache, _SummaryUnpickler
    from compile_lint.summary import ModuleSummary

    from compile_lint.resultcache import Manifest, loads_result

    for e in entries:  # rebuilt: real summaries (and a real result) again
        if e.parent.name == "results":
            manifest, result = loads_result(e.read_bytes())
            assert isinstance(manifest, Manifest) and result.findings is not None
            continue
        with open(e, "rb") as fh:
            assert isinstance(_SummaryUnpickler(fh).load(), ModuleSummary)
    assert SummaryCache  # the class that reads them


@pytest.mark.parametrize("payload", ["os.system", "builtins.eval", "subprocess.Popen", "compile_lint.engine.scan",
                                     "compile_lint.engine.ScanOptions", "compile_lint.engine.SummaryLoader"])
@pytest.mark.parametrize("which", ["summaries", "results"])
def test_the_cache_unpicklers_refuse_every_other_global(payload, which):
    from compile_lint.cache import _SummaryUnpickler
    from compile_lint.resultcache import loads_result

    mod, name = payload.rsplit(".", 1)
    data = b"\x80\x04c" + mod.encode() + b"\n" + name.encode() + b"\n."  # PROTO 4, GLOBAL mod name, STOP
    with pytest.raises(pickle.UnpicklingError, match="refused global"):
        _SummaryUnpickler(io.BytesIO(data)).load() if which == "summaries" else loads_result(data)


# ------------------------------------------------------------------------------------------- symlinks out
def test_symlinks_out_of_the_tree_are_not_followed(tmp_path, monkeypatch):
    private = tmp_path / "private"  # not a package: someone's home directory, say
    private.mkdir()
    (private / "secret.py").write_text("import torch, subprocess\n\n@torch.compile\ndef s(x):\n"
                                       "    subprocess.run(['x'])\n    return x\n")
    work = make_project(tmp_path / "work")
    (work / "pkg" / "etc").symlink_to("/etc")
    (work / "pkg" / "home").symlink_to(private)
    (work / "pkg" / "passwd.py").symlink_to("/etc/passwd")
    (work / "pkg" / "shadow.py").symlink_to("/etc/shadow")

    opened, listed = [], []
    real_open, real_scandir = io.open, os.scandir

    def rec_open(file, *a, **kw):
        if isinstance(file, (str, os.PathLike)):
            opened.append(os.path.realpath(file))
        return real_open(file, *a, **kw)

    def rec_scandir(path="."):
        listed.append(os.path.realpath(path))
        return real_scandir(path)

    monkeypatch.setattr(io, "open", rec_open)
    monkeypatch.setattr(builtins, "open", rec_open)
    monkeypatch.setattr(os, "scandir", rec_scandir)
    r = scan(ScanOptions(paths=[work], cache_dir=None, use_environment=False, use_installed_torch=False))
    monkeypatch.undo()

    assert [f.callee for f in r.findings] == ["subprocess.check_output"]
    outside = [p for p in opened + listed if p.startswith("/etc") or p.startswith(str(private))]
    assert not outside, outside
    for f in r.findings:
        for p in [f.path, f.region.path] + [fr.path for fr in f.trace]:
            assert Path(p).is_relative_to(work), p
    why = dict(r.problems)
    for name in ("etc", "home", "passwd.py", "shadow.py"):
        assert "not followed" in why[str(work / "pkg" / name)], r.problems


def test_a_symlinked_package_outside_the_tree_is_followed_by_its_link_path(tmp_path):
    """The exception that keeps a site-packages assembled from links working: a link to a Python package (or
    a .py file) is followed, and reported under the link's path, inside the scanned root."""
    lib = make_project(tmp_path / "store")
    site = tmp_path / "site"
    site.mkdir()
    (site / "pkg").symlink_to(lib / "pkg")
    r = scan(ScanOptions(paths=[site], cache_dir=None, use_environment=False, use_installed_torch=False))
    assert [f.callee for f in r.findings] == ["subprocess.check_output"]
    assert r.findings[0].path == str(site / "pkg" / "helpers.py")
