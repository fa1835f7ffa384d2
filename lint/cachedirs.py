"""Where the caches live, as pip, pre-commit and ruff keep theirs.

- What depends only on the environment -- the trace rules of a torch install, the summaries of files outside
  the scanned paths (keyed by content) -- goes in the user cache directory: ``$COMPILE_LINT_CACHE_DIR`` if set,
  else ``$XDG_CACHE_HOME/compile-lint``, else the platform's (``~/.cache/compile-lint``,
  ``~/Library/Caches/compile-lint``, ``%LOCALAPPDATA%\\compile-lint\\Cache``).  A new working directory then
  does not pay for dumping the trace rules again (12-16 s on a loaded 2-core machine).
- The project's results and the summaries of its own files go in ``.compile_lint_cache/`` at the project
  root (the nearest directory above the first scanned path holding ``pyproject.toml``, ``setup.py``,
  ``setup.cfg`` or ``.git``; else the working directory), with a ``.gitignore`` of ``*`` inside, as ruff's
  ``.ruff_cache`` has, so that ``git status`` stays clean.
- ``--cache-dir DIR`` (or ``cache-dir`` in the config) puts every cache in DIR: one place for CI to keep
  between runs, or for an isolated run.  ``$COMPILE_LINT_CACHE_DIR`` moves the user cache directory only.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

ENV_VAR = "COMPILE_LINT_CACHE_DIR"
PROJECT_CACHE = ".compile_lint_cache"
PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
GITIGNORE = "# Created by compile-lint: this cache is never to be committed.\n*\n"


def env_cache_dir() -> Optional[Path]:
    """``$COMPILE_LINT_CACHE_DIR``, when set: the user cache directory."""
    v = os.environ.get(ENV_VAR)
    return Path(v).expanduser() if v else None


def user_cache_dir() -> Path:
    """The per-user cache directory for what depends only on the environment."""
    explicit = env_cache_dir()
    if explicit is not None:
        return explicit
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "compile-lint"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "compile-lint"
    if os.name == "nt":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "compile-lint" / "Cache"
    return Path.home() / ".cache" / "compile-lint"


def project_root(paths: list) -> Path:
    """The nearest directory above the first scanned path that holds a project marker, else the cwd."""
    start = Path(paths[0]).absolute() if paths else Path.cwd()
    if not start.is_dir():
        start = start.parent
    for d in (start, *start.parents):
        if any((d / m).exists() for m in PROJECT_MARKERS):
            return d
    return Path.cwd()


def ensure_gitignore(cache_dir: Optional[Path]) -> None:
    """A ``.gitignore`` of ``*`` in a cache directory we write to (if there is none yet): a cache at a
    project's root never shows in ``git status``.  Never fails a scan."""
    if cache_dir is None:
        return
    p = Path(cache_dir) / ".gitignore"
    if p.exists():
        return
    try:
        Path(cache_dir).mkdir(parents=True, exist_ok=True)
        with open(p, "x", encoding="utf-8") as fh:
            fh.write(GITIGNORE)
    except OSError:  # another run wrote it, or the directory is read-only: the scan goes on
        pass
