"""Where modules are: the locator and the mention index.

- ``ModuleLocator`` maps a dotted module name to a file: first the scanned files, then the search path (the
  target interpreter's ``sys.path`` plus ``--search-path``).  The standard library and the packages Dynamo
  classifies by itself (torch, triton...) stay external: they are referred to by dotted name.
- ``_MentionIndex`` answers "which files mention this identifier?" by a byte search, without parsing: the
  subclass search (``classes.py``) parses only the files it names.
- ``split_id`` / ``dotted``: the ``module:qualname`` ids every value carries, and their dotted spelling.
"""
from __future__ import annotations

import builtins
import os
import re
import sys
import time
from bisect import insort
from pathlib import Path
from typing import Optional

from ..cache import file_stat
from ..dynamo import model


STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) | frozenset(sys.builtin_module_names) | {"__future__"}
BUILTIN_NAMES = frozenset(dir(builtins))


def split_id(fid: str):
    mod, _, qual = fid.partition(":")
    return mod, qual


def dotted(fid: str) -> str:
    mod, qual = split_id(fid)
    return f"{mod}.{qual}" if mod else qual


class ModuleLocator:
    def __init__(self, scanned: dict, search_path: list, opaque: frozenset = model.OPAQUE_PACKAGES):
        self.scanned = scanned  # module name -> (Path, is_package)
        self.search_path = [Path(p) for p in search_path if p and Path(p).is_dir()]
        self.opaque = opaque
        self._memo: dict = {}
        # the package directories package_files listed, in order: the incremental state keeps them, and a warm
        # process lists them again after answering from a result (warm_package_listing)
        self.listed_dirs: list = []

    def is_external_top(self, name: str) -> bool:
        top = name.split(".")[0]
        return top in STDLIB or top in self.opaque

    def package_files(self, top: str) -> list:
        """(module, path, is_package) of every .py file of a top-level package (scanned or on the path)."""
        if ("files", top) in self._memo:
            return self._memo[("files", top)]
        out = [(m, p, pkg) for m, (p, pkg) in self.scanned.items() if m == top or m.startswith(top + ".")]
        scanned_paths = {str(p) for _, p, _ in out}
        # the scanned files may be a few modules of a package that lives on the search path: list it all
        loc = self.find(top)
        pkg_dir = None
        if loc is not None and loc[0] is not None and loc[1]:
            pkg_dir = Path(loc[0]).parent
        elif loc is not None and loc[0] is None:
            pkg_dir = next((r / top for r in self.search_path if (r / top).is_dir()), None)
        if pkg_dir is not None:
            self.listed_dirs.append(str(pkg_dir))
            out += [e for e in _package_dir_files(pkg_dir) if str(e[1]) not in scanned_paths]
        self._memo[("files", top)] = out
        return out

    def find(self, name: str):
        """(path or None for a namespace package, is_package) or None when the module is external/unknown."""
        if name in self._memo:
            return self._memo[name]
        res = None
        if name in self.scanned:
            res = self.scanned[name]
        elif not self.is_external_top(name):
            parts = name.split(".")
            for root in self.search_path:
                base = root.joinpath(*parts)
                f = base.with_suffix(".py") if parts else None
                if (base / "__init__.py").is_file():
                    res = (base / "__init__.py", True)
                    break
                if f is not None and f.is_file():
                    res = (f, False)
                    break
                if base.is_dir() and any(base.glob("*.py")) or base.is_dir() and any(p.is_dir() for p in base.iterdir()):
                    res = (None, True)  # namespace package
                    break
        self._memo[name] = res
        return res


IDENT_RE = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
# a class header's base list: from `class Name(` to the `)` that ends the header (the first one followed by
# `:`), across lines; nested calls and subscripts in the bases are inside the match
_CLASS_BASES_RE = re.compile(rb"^[ \t]*class[ \t]+[A-Za-z_][A-Za-z0-9_]*[ \t]*\((.*?)\)[ \t]*:", re.M | re.S)
# a capitalised name called (`Attention(`, `attention_processor.Attention(`): where a class is constructed
# (``\b`` before a capital is "no identifier character before it": the same matches as a lookbehind, in half
# the time over every scanned file's text)
_CALLED_RE = re.compile(rb"\b([A-Z]\w*)\(")


class _MentionIndex:
    """Which of some files (in their given order) mention an identifier: in a class header's base list
    (``class A(pkg.Base, Mixin):``, where a subclass must name its base), called (``A(``), or anywhere in the text.

    The base-list and called-name indexes (identifier -> files) are built on the first such query: the subclass
    search and the constructions search ask for hundreds of names.  Whole-text queries are few (a framework's
    model registry name), so each is a byte search over the files, kept: an index of every identifier of 11,000
    files cost 3.5 s to build."""

    def __init__(self, files: list, tables: Optional[list] = None):
        self.files = files
        # [base-list index, called-name index (each built on first use), whole-text answers: needle -> indices
        # of the files]; ``tables``: those of an index of the same files, unchanged since (package_index)
        self.tables = tables if tables is not None else [None, None, {}]

    def _texts(self):
        for i, (_, path, _) in enumerate(self.files):
            try:
                yield i, Path(path).read_bytes() if path else b""
            except OSError:
                continue

    def files_with(self, needle: bytes, in_bases: bool = False, called: bool = False) -> list:
        """The files that mention ``needle``: in a class's base list (``in_bases``), followed by ``(`` (``called``:
        a class name -- capitalised, as classes are named -- where the class is constructed or called; one index
        of such names, built on the first query), or anywhere."""
        tables = self.tables
        if in_bases:
            if tables[0] is None:
                bases: dict = {}
                for i, data in self._texts():
                    for word in _base_words(data):
                        bases.setdefault(word, []).append(i)
                tables[0] = bases
            return [self.files[i] for i in tables[0].get(needle, ())]
        if called:
            if tables[1] is None:
                called_in: dict = {}
                for i, data in self._texts():
                    for word in _called_words(data):
                        called_in.setdefault(word, []).append(i)
                tables[1] = called_in
            return [self.files[i] for i in tables[1].get(needle, ())]
        hit = tables[2].get(needle)
        if hit is None:
            hit = tables[2][needle] = [i for i, data in self._texts() if _mentions_word(data, needle)]
        return [self.files[i] for i in hit]

    # ------------------------------------------------------------------ kept between scans (incremental)
    def parts(self) -> tuple:
        """What this index has built (file indices per identifier), to be ``restore``d by the next scan."""
        return tuple(self.tables)

    def restore(self, parts: tuple, texts: dict) -> None:
        """Take over ``parts`` of an index of the same files, where the files whose path (str) is in ``texts``
        now hold those bytes and the others are unchanged: their entries are worked out again from the new
        text, so the answers are what building the index again gives (building the base-list index read
        every scanned file: 1.5 s of a one-file edit's scan of the benchmark site)."""
        bases, called, anywhere = parts
        changed = {i: texts[str(path)] for i, (_, path, _) in enumerate(self.files) if str(path) in texts}

        def patched(index: dict, words_of) -> dict:
            out = {w: [i for i in ids if i not in changed] for w, ids in index.items()}
            for i, data in changed.items():
                for w in words_of(data):
                    insort(out.setdefault(w, []), i)
            return {w: ids for w, ids in out.items() if ids}

        if bases is not None:
            self.tables[0] = patched(bases, _base_words)
        if called is not None:
            self.tables[1] = patched(called, _called_words)
        for needle, ids in anywhere.items():
            hit = [i for i in ids if i not in changed]
            for i, data in changed.items():
                if _mentions_word(data, needle):
                    insort(hit, i)
            self.tables[2][needle] = hit


# The indexes of search-path packages (not scanned: read, not edited between two runs as a rule), kept by a
# warm process (the daemon: keep_package_indexes) from one scan to the next: (the files' paths) -> (each one's
# (size, mtime_ns), as the result cache checks files; the index's tables).  Building a package's base-list
# index read and searched each of its files: flashinfer's 3,237 were a sixth of a pre-commit run's answer in
# the daemon.
_PACKAGE_TABLES: Optional[dict] = None


def keep_package_indexes() -> None:
    """A warm process keeps search-path packages' listings and mention indexes from one scan to the next."""
    global _PACKAGE_TABLES, _PACKAGE_LISTINGS
    if _PACKAGE_TABLES is None:
        _PACKAGE_TABLES = {}
    if _PACKAGE_LISTINGS is None:
        _PACKAGE_LISTINGS = {}


def package_index(files: list) -> _MentionIndex:
    """An index of a search-path package's ``files``; in a warm process, with the tables of the previous
    scan's while none of the files changed."""
    if _PACKAGE_TABLES is None:
        return _MentionIndex(files)
    key = tuple(str(p) for _, p, _ in files)
    stats = tuple(file_stat(p) for p in key)
    kept = _PACKAGE_TABLES.get(key)
    index = _MentionIndex(files, kept[1] if kept is not None and kept[0] == stats else None)
    _PACKAGE_TABLES[key] = (stats, index.tables)
    return index


def package_index_use(index: _MentionIndex) -> tuple:
    """What a scan asked of a package's index (the incremental state keeps it: ``warm_package_index``):
    (its files, whether the base-list and called-name indexes were built, the whole-text needles)."""
    tables = index.tables
    return (tuple((m, str(p), pkg) for m, p, pkg in index.files), tables[0] is not None, tables[1] is not None,
            tuple(tables[2]))


def warm_package_index(use: tuple) -> None:
    """In a warm process, build what a scan asked of a package's index (``package_index_use``) while nobody
    waits: a daemon that answered from a result builds no program, and the first edit after it then built
    flashinfer's base-list index (0.6 s of the pre-commit hook's 3.2 s answer)."""
    if _PACKAGE_TABLES is None:
        return
    files, bases, called, needles = use
    index = package_index(list(files))
    if bases:
        index.files_with(b"", in_bases=True)
    if called:
        index.files_with(b"", called=True)
    for needle in needles:
        index.files_with(needle)


# A package's listing (package_files), kept by a warm process (keep_package_indexes) from one scan to the
# next while none of its directories changed (a directory's mtime changes when an entry is added, removed or
# renamed in it): str(directory) -> ([(each directory listed, its signature)], the listing).  Walking
# flashinfer's directories was 0.26 s of each pre-commit answer in the daemon.
_PACKAGE_LISTINGS: Optional[dict] = None
MAX_KEPT_LISTINGS = 256


def warm_package_listing(pkg_dir: str) -> None:
    """In a warm process, list a package directory a scan listed (``IncState.package_dirs``) while nobody
    waits: a daemon that answered from a result builds no program, and its first edit then walked the bench
    site's package directories (0.17 s of its answer)."""
    if _PACKAGE_LISTINGS is not None and Path(pkg_dir).is_dir():
        _package_dir_files(Path(pkg_dir))


def _package_dir_files(pkg_dir: Path) -> list:
    """(module, path, is_package) of every .py file under ``pkg_dir``, in its directories' sorted order."""
    from ..discover import RACY_NS, _signature

    kept = _PACKAGE_LISTINGS.get(str(pkg_dir)) if _PACKAGE_LISTINGS is not None else None
    if kept is not None and all(_signature(d) == sig for d, sig in kept[0]):
        return kept[1]
    started = time.time_ns()
    out, listed = [], []
    for dirpath, dirnames, filenames in os.walk(pkg_dir):
        listed.append(dirpath)
        dirnames[:] = sorted(d for d in dirnames if d.isidentifier())
        rel = Path(dirpath).relative_to(pkg_dir.parent)
        for fn in sorted(filenames):
            if not fn.endswith(".py"):
                continue
            parts = list(rel.parts) + ([] if fn == "__init__.py" else [fn[:-3]])
            if all(p.isidentifier() for p in parts):
                out.append((".".join(parts), Path(dirpath) / fn, fn == "__init__.py"))
    if _PACKAGE_LISTINGS is not None:
        _PACKAGE_LISTINGS.pop(str(pkg_dir), None)
        sigs = [(d, _signature(d)) for d in listed]
        # (not kept where a directory changed during the walk or just before it: discover.py's RACY_NS)
        if all(sig is not None and max(sig[0], sig[1]) < started - RACY_NS for _, sig in sigs):
            while len(_PACKAGE_LISTINGS) >= MAX_KEPT_LISTINGS:
                del _PACKAGE_LISTINGS[next(iter(_PACKAGE_LISTINGS))]
            _PACKAGE_LISTINGS[str(pkg_dir)] = (sigs, out)
    return out


def _base_words(data: bytes) -> set:
    """The identifiers in the base lists of a file's class headers."""
    if b"class" not in data:
        return set()
    return {w for header in _CLASS_BASES_RE.findall(data) for w in IDENT_RE.findall(header)}


def _called_words(data: bytes) -> set:
    """The capitalised names a file's text calls (``Attention(``)."""
    return set(_CALLED_RE.findall(data))


def _mentions_word(data: bytes, needle: bytes) -> bool:
    """Whether ``needle`` occurs in a file's text as a whole identifier (not inside a longer one)."""
    if needle not in data:
        return False
    return re.search(rb"(?<![A-Za-z0-9_])" + re.escape(needle) + rb"(?![A-Za-z0-9_])", data) is not None
