"""Helpers for the ecosystem tests: a small hazardous project, the CLI in-process and as a subprocess, and the
examples of README.md (found by their ``<!-- example: NAME -->`` marker)."""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "README.md"
BIN = Path(sys.executable).parent
COMPILE_LINT = str(BIN / "compile-lint") if (BIN / "compile-lint").exists() else shutil.which("compile-lint")

HELPERS = '''\
import subprocess


def cuda_version():
    return subprocess.check_output(["nvcc", "--version"])


def pure(x):
    return x
'''

MODEL = '''\
import torch

from pkg.helpers import cuda_version, pure


def f(x):
    cuda_version()
    return pure(x) + 1


f_c = torch.compile(f, fullgraph=True)
'''


def write(root: Path, files: dict) -> Path:
    for rel, text in files.items():
        p = Path(root) / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text) if text.startswith("\n") else text)
    return Path(root)


def make_project(root: Path, **extra) -> Path:
    """pkg/model.py compiles f (fullgraph); f calls pkg/helpers.py:cuda_version -> subprocess (CL101, line 5)."""
    files = {"pkg/__init__.py": "", "pkg/helpers.py": HELPERS, "pkg/model.py": MODEL}
    files.update(extra)
    return write(root, files)


@contextmanager
def chdir(path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


class Run:
    def __init__(self, code, out, err):
        self.exit_code, self.stdout, self.stderr = code, out, err

    def __repr__(self):
        return f"Run(exit={self.exit_code}, stdout={self.stdout[-2000:]!r}, stderr={self.stderr[-2000:]!r})"


def cli(args, cwd) -> Run:
    """The CLI in-process (click's runner), run from ``cwd``."""
    from click.testing import CliRunner

    from compile_lint.cli import main

    with chdir(cwd):
        r = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return Run(r.exit_code, r.stdout, r.stderr)


def sh(cmd: str, cwd, env=None, timeout=600) -> Run:
    """A shell line as a user would type it, with ``compile-lint`` / ``pre-commit`` from this interpreter's
    environment first on PATH."""
    e = dict(os.environ)
    e["PATH"] = f"{BIN}{os.pathsep}{e.get('PATH', '')}"
    e.update(env or {})
    p = subprocess.run(cmd, shell=True, cwd=str(cwd), capture_output=True, text=True, env=e, timeout=timeout)
    return Run(p.returncode, p.stdout, p.stderr)


def doc_block(name: str) -> str:
    """The fenced code block right after ``<!-- example: NAME -->`` in README.md."""
    text = DOC.read_text()
    m = re.search(r"<!-- example: " + re.escape(name) + r" -->\s*\n```[a-z]*\n(.*?)\n```", text, re.S)
    assert m, f"README.md has no example {name!r}"
    return m.group(1) + "\n"


def doc_commands(name: str) -> list:
    """The command lines of a shell example (comments stripped)."""
    out = []
    for line in doc_block(name).splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        out.append(shlex.join(shlex.split(line, comments=True)))
    return out


def git(cwd, *args, check=True) -> str:
    p = subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "-c", "user.name=t", "-c", "user.email=t@example.com",
                        "-c", "init.defaultBranch=main",
                        "-c", "commit.gpgsign=false", *args], cwd=str(cwd), capture_output=True, text=True)
    if check and p.returncode:
        raise AssertionError(f"git {' '.join(args)}: {p.stderr}")
    return p.stdout.strip()


def init_repo(root: Path) -> Path:
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root
