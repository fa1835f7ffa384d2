"""The pinned environment the real-code suite measures: transformers + diffusers (and their dependencies) from PyPI.

``env_root()`` installs ``requirements.lock`` once with ``pip install --no-deps --target`` into
``<cache>/realcode/env-<hash>/`` (the hash covers the lock file and the Python version, so a changed pin is a
new directory) and returns it.  That directory is both what the static side scans (``--search-path``) and what
the truth harness imports (``PYTHONPATH``), so a measured frame and a finding name the same file.

The cache is ``$COMPILE_LINT_FIXTURE_CACHE`` or ``~/.cache/compile-lint/pypi`` (the same root as
``tests/realworld/pypi_fixtures.py``).  The directory is built beside its final place and published with an
atomic rename, so concurrent runs are safe.  ``COMPILE_LINT_FIXTURE_OFFLINE=1`` forbids the network.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
LOCK = HERE / "requirements.lock"
COMPLETE = ".complete"


class EnvUnavailable(RuntimeError):
    """The pinned environment could not be installed (no network, offline mode, pip failure)."""


def cache_root() -> Path:
    env = os.environ.get("COMPILE_LINT_FIXTURE_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "compile-lint" / "pypi"


def pins() -> dict:
    """{distribution: version} of the lock file."""
    out = {}
    for line in LOCK.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            out[name.strip()] = version.strip()
    return out


def env_key() -> str:
    h = hashlib.sha256(LOCK.read_bytes())
    h.update(f"{sys.version_info.major}.{sys.version_info.minor}".encode())
    return h.hexdigest()[:12]


def env_label() -> str:
    p = pins()
    return f"transformers-{p['transformers']}+diffusers-{p['diffusers']}"


def env_root() -> Path:
    final = cache_root() / "realcode" / f"env-{env_key()}"
    if (final / COMPLETE).is_file():
        return final
    if os.environ.get("COMPILE_LINT_FIXTURE_OFFLINE"):
        raise EnvUnavailable(f"{final} is not installed and COMPILE_LINT_FIXTURE_OFFLINE is set")
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-env-", dir=final.parent))
    try:
        cmd = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-compile", "--disable-pip-version-check",
               "--no-input", "--progress-bar", "off", "--target", str(tmp / "out"), "-r", str(LOCK)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        except (OSError, subprocess.SubprocessError) as e:
            raise EnvUnavailable(f"pip install -r {LOCK.name} failed: {e}") from None
        if proc.returncode != 0:
            tail = [l for l in (proc.stderr or proc.stdout).splitlines() if "is ignored" not in l][-5:]
            raise EnvUnavailable(f"pip install -r {LOCK.name} failed (rc={proc.returncode}): " + " | ".join(tail))
        (tmp / "out" / COMPLETE).write_text(LOCK.read_text())
        try:
            os.rename(tmp / "out", final)
        except OSError:
            if not (final / COMPLETE).is_file():
                raise
        return final
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":  # pragma: no cover
    print(env_root())
