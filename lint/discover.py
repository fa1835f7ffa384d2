"""Discover: which files to scan, and each file's dotted module name.

A scanned directory is either a package (it has ``__init__.py``: module names start with its own name) or
an import root (a repo, a ``src/`` layout, a ``site-packages/``): module names are relative to it, and
directories without ``__init__.py`` are namespace packages.  The same rule maps a file found on the search
path (see ``program.ModuleLocator``).
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable, Iterator, Optional

SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "__pycache__", ".tox", ".nox", ".venv", "venv", ".mypy_cache", ".pytest_cache",
     ".compile_lint_cache", "node_modules", ".eggs", "build", "dist"}
)


@dataclass(frozen=True)
class SourceFile:
    path: Path  # absolute
    module: str
    is_package: bool  # an __init__.py
    root: Path  # the scanned path it came from (for relative report paths)


@dataclass
class Discovery:
    files: list
    import_roots: list  # directories that act as sys.path entries for the scanned code
    problems: list  # (path, message): unreadable directories, symlink loops, ...


def module_name(path: Path, import_root: Path) -> Optional[str]:
    parts = _parts_under(path, import_root)
    if not parts or not parts[-1].endswith(".py"):
        return None
    last = parts[-1][:-3]
    if last == "__init__":
        parts = parts[:-1]
    else:
        parts[-1] = last
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


def _parts_under(p: Path, root: Path) -> Optional[list]:
    """The parts of absolute ``p`` below absolute ``root`` ([] for root itself), None if it is not under it:
    ``Path.relative_to``'s answer at a tenth of its cost (it runs for each of a site-packages' 13,000 files)."""
    if os.sep != "/" or os.altsep:  # Windows: drive letters and case, as pathlib compares them
        try:
            return list(p.relative_to(root).parts)
        except ValueError:
            return None
    ps, rs = str(p), str(root)
    if ps == rs:
        return []
    prefix = rs if rs.endswith("/") else rs + "/"
    return ps[len(prefix):].split("/") if ps.startswith(prefix) else None


def import_root_for(target: Path, known_roots=()) -> Path:
    """The sys.path-like directory that a scanned path's module names are relative to.

    A known import root (``--search-path``, the interpreter's ``sys.path``) that contains the target wins:
    namespace packages have no ``__init__.py`` to climb (``sglang/srt/model_executor/`` is one)."""
    for root in sorted((Path(r) for r in known_roots), key=lambda r: -len(r.parts)):
        try:
            rel = target.relative_to(root)
        except ValueError:
            continue
        if rel.parts and all(p.isidentifier() for p in (rel.parts[:-1] if target.is_file() else rel.parts)):
            return root
    if target.is_file():
        d = target.parent
    else:
        d = target
    # climb out of regular packages: `scan repo/pkg/sub` still names modules pkg.sub.x
    while (d / "__init__.py").exists() and d.parent != d:
        d = d.parent
    if target.is_dir() and d == target and (d / "src").is_dir() and not (d / "src" / "__init__.py").exists():
        # a src/ layout scanned from the repo root: src/ is the import root for what lives there
        return d
    return d


def _outside_link(p: Path, bound: Optional[Path]) -> Optional[str]:
    """Why a symlink is not followed, or None.  A link that resolves inside the scanned path is followed; one
    that leaves it is followed only to a Python package (a directory with ``__init__.py``) or a ``.py`` file (a
    site-packages assembled from links); anything else (``/etc``, a home directory) is never read."""
    try:
        target = p.resolve()
    except (OSError, RuntimeError) as e:
        return f"cannot resolve symlink: {e}"
    if not target.exists():
        return f"broken symlink to {target}, skipped"
    if bound is not None and _is_under(target, bound):
        return None
    if target.is_dir() and (target / "__init__.py").is_file():
        return None
    if target.is_file() and target.name.endswith(".py"):
        return None
    return f"symlink to {target} leaves the scanned path and is not a Python package or module: not followed"


def _skipped_dir(name: str) -> bool:
    return name in SKIP_DIRS or name.endswith(".egg-info") or name.endswith(".dist-info")


def _walk(root: Path, problems: list, exclude, gitignore=None, listed: Optional[list] = None) -> Iterator[Path]:
    """``listed``: each directory listed is appended to it, and None where the walk met a symlink."""
    seen_dirs: set = set()  # their real paths
    # each directory with the .gitignore rules that judge its entries (GitIgnore.rules_in), and its real path
    # where it is known: a subdirectory that is no symlink is its parent's real path and its name (resolving
    # every directory asked the file system for each component: a site-packages' 2,600 were a fifth of a
    # warm scan's discovery)
    stack = [(root, gitignore.ancestors if gitignore is not None else (), None)]
    try:
        bound = root.resolve()
    except (OSError, RuntimeError):
        bound = None
    while stack:
        d, outer, real = stack.pop()
        if real is None:
            try:
                real = str(d.resolve())
            except (OSError, RuntimeError) as e:
                problems.append((str(d), f"cannot resolve: {e}"))
                continue
        if real in seen_dirs:
            problems.append((str(d), "symlink loop or repeated directory, skipped"))
            continue
        seen_dirs.add(real)
        if listed is not None:
            listed.append(str(d))
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError as e:
            problems.append((str(d), f"cannot list directory: {e.strerror or e}"))
            continue
        rules = gitignore.rules_in(d, outer) if gitignore is not None else ()
        subdirs = []
        for e in entries:
            try:
                if not e.name.endswith(".py") and not e.is_dir():
                    continue  # (neither scanned nor walked: no Path made for a package's data files)
            except OSError as err:
                problems.append((e.path, f"cannot stat: {err.strerror or err}"))
                continue
            p = Path(e.path)
            if exclude(p):
                continue
            try:
                link = e.is_symlink()
                if link and (e.name.endswith(".py") or e.is_dir() and not _skipped_dir(e.name)):
                    if listed is not None:
                        listed.append(None)
                    why = _outside_link(p, bound)
                    if why is not None:
                        problems.append((str(p), why))
                        continue
                if e.is_dir():
                    if _skipped_dir(e.name) or (rules and gitignore.judge(rules, p, True)):
                        continue
                    subdirs.append((p, None if link else os.path.join(real, e.name)))
                elif e.name.endswith(".py") and e.is_file():
                    if rules and gitignore.judge(rules, p, False):
                        continue
                    yield p
            except OSError as err:
                problems.append((str(p), f"cannot stat: {err.strerror or err}"))
        stack.extend((sub, rules, sub_real) for sub, sub_real in reversed(subdirs))


def discover(paths: Iterable[Path], exclude=lambda p: False, known_roots=(), respect_gitignore: bool = True,
             exclude_key=None) -> Discovery:
    """``respect_gitignore``: skip what the tree's .gitignore files ignore (lint/gitignore.py); a path named
    here is scanned even if ignored.  ``exclude_key``: what ``exclude`` decides by (its patterns); given, a
    warm process answers from its previous walk of the same paths while none of their directories changed
    (keep_discoveries)."""
    paths = [Path(p).absolute() for p in paths]
    key = None
    if _KEPT is not None and exclude_key is not None:
        key = (tuple(map(str, paths)), tuple(map(str, known_roots)), respect_gitignore, exclude_key, os.getcwd())
        kept = _KEPT.get(key)
        if kept is not None and all(_signature(p) == sig for p, sig in kept[0]) and all(
                os.path.lexists(p) == there for p, there in kept[1]):
            d = kept[2]
            return Discovery(list(d.files), list(d.import_roots), list(d.problems))
    started = time.time_ns()
    listed: Optional[list] = [] if key is not None else None
    ignores: list = []
    disc = _discover(paths, exclude, known_roots, respect_gitignore, listed, ignores)
    if key is not None:
        _keep(key, disc, paths, listed, ignores, started)
    return disc


def _discover(paths: list, exclude, known_roots, respect_gitignore: bool, listed: Optional[list],
              ignores: list) -> Discovery:
    files: dict = {}
    roots: list = []
    problems: list = []
    for target in paths:
        if not target.exists():
            problems.append((str(target), "no such file or directory"))
            continue
        iroot = import_root_for(target, known_roots)
        src = iroot / "src"
        extra_roots = [iroot]
        if target.is_dir() and src.is_dir() and not (src / "__init__.py").exists():
            extra_roots.insert(0, src)
        for r in extra_roots:
            if r not in roots:
                roots.append(r)
        is_file = target.is_file()
        home = target if target.is_dir() else target.parent  # (each file's SourceFile.root: asked once)
        if is_file:
            candidates = [target]
        else:
            from .gitignore import GitIgnore

            gitignore = GitIgnore(target) if respect_gitignore else None
            if gitignore is not None:
                ignores.append(gitignore)
            candidates = _walk(target, problems, exclude, gitignore, listed)
        for p in candidates:
            r = next((x for x in extra_roots if _is_under(p, x)), iroot)
            name = module_name(p, r)
            if name is None:
                if is_file:
                    name = p.stem if p.stem.isidentifier() else None
                if name is None:
                    continue
            if p not in files:
                files[p] = SourceFile(p, name, p.name == "__init__.py", home)
    return Discovery(sorted(files.values(), key=lambda f: str(f.path)), roots, problems)


def _is_under(p: Path, root: Path) -> bool:
    return _parts_under(p, root) is not None


# ------------------------------------------------------------------ a warm process (lint/daemon.py)
# Walking a site-packages' 2,600 directories took 0.3-0.4 s of each answer.  A directory's mtime changes when
# an entry is added, removed or renamed in it (an edit in place changes only the file's): a warm process
# keeps the previous walk of the same paths, with the signature of every directory it listed, of the scanned
# paths themselves and of every ignore file it looked for, and whether each entry of the scanned paths'
# ancestors that names modules is there (an __init__.py, .git, src/: they move the import root), and answers
# from it while all of them are as they were.  Not the ancestors' own signatures: /tmp or a home directory
# changes whenever anything writes a file there, and .git whenever git touches its index.  Not kept: a walk
# that met a symlink (its target may change without any of these), or one where a signature changed during
# the walk or less than RACY_NS before it (a filesystem's clock may not tell a second change in the same tick
# from the first).
_KEPT: Optional[dict] = None  # key -> ([(path, signature)], [(path, whether it is there)], Discovery)
RACY_NS = 2_000_000_000
MAX_KEPT = 8  # walks of other paths or options: a daemon serves a few projects


def keep_discoveries() -> None:
    global _KEPT
    if _KEPT is None:
        _KEPT = {}


def _signature(path: str) -> Optional[tuple]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_size, st.st_mode


def _keep(key: tuple, disc: Discovery, paths: list, listed: list, ignores: list, started: int) -> None:
    _KEPT.pop(key, None)
    if None in listed:
        return
    watched = set(listed)
    probed = set()
    for target in paths:  # (os.stat follows links: a link above retargeted shows as another inode)
        watched.add(str(target))
        probed.update((os.path.join(target, "src"), os.path.join(target, "src", "__init__.py")))
        for a in target.parents:  # (what import_root_for and GitIgnore look for there)
            probed.update(os.path.join(a, n) for n in ("__init__.py", ".git"))
    for g in ignores:
        watched.update(map(str, g.files_read))
    sigs = [(p, _signature(p)) for p in sorted(watched)]
    recent = started - RACY_NS
    if any(sig is not None and max(sig[0], sig[1]) >= recent for _, sig in sigs):
        return
    while len(_KEPT) >= MAX_KEPT:
        del _KEPT[next(iter(_KEPT))]
    _KEPT[key] = (sigs, [(p, os.path.lexists(p)) for p in sorted(probed)],
                  replace(disc, files=list(disc.files), import_roots=list(disc.import_roots),
                          problems=list(disc.problems)))
