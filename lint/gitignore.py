"""Files as the user's tools see them: discovery skips what git ignores, as ruff does by default.

The ``.gitignore`` files of the scanned tree, of its parent directories up to the git work tree's root, and
``.git/info/exclude`` are read with pathspec's ``GitIgnoreSpec`` (git's own wildmatch rules, negations
included); a deeper file's verdict wins over a shallower one's, as in git.  A path named on the command line
is always scanned, even if ignored (``git add -f``): a parent's rule that ignores the scanned path itself is
not applied below it (``compile-lint scan .venv/lib/python3.11/site-packages/flashinfer`` in a repo that
ignores ``.venv/``).  Without pathspec, nothing is ignored beyond the built-in directory names.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

try:
    import pathspec
except ImportError:  # pragma: no cover - a declared dependency
    pathspec = None


def _read_spec(path: Path):
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except Exception:  # noqa: BLE001 - a malformed pattern: the file is not used, the scan goes on
        return None


def _verdict(spec, rel: str) -> Optional[bool]:
    """True: ignored, False: re-included (``!pattern``), None: no pattern matched."""
    check = getattr(spec, "check_file", None)
    if check is not None:
        return check(rel).include
    return True if spec.match_file(rel) else None


class GitIgnore:
    """Is a path under a scanned ``target`` ignored?  Specs are read once per directory."""

    def __init__(self, target: Path):
        self.enabled = pathspec is not None
        self.target = Path(target).absolute()
        self._specs: dict = {}  # directory -> spec or None
        self.files_read: list = []  # every ignore file looked for, found or not (discover's kept walks check them)
        self.ancestors: list = []  # [(base dir, spec)] above the target, outermost first
        if not self.enabled:
            return
        start = self.target if self.target.is_dir() else self.target.parent
        chain = []
        for d in (start, *start.parents):
            chain.append(d)
            if (d / ".git").exists():
                break
        else:
            chain = [start]  # not in a git work tree: only the scanned tree's own .gitignore files
        top = chain[-1]
        specs = []
        exclude = top / ".git" / "info" / "exclude"
        self.files_read.append(exclude)
        if exclude.is_file():
            spec = _read_spec(exclude)
            if spec is not None:
                specs.append((top, spec))
        for d in reversed(chain[1:] if start == self.target else chain):
            spec = self.spec_of(d)
            if spec is not None:
                specs.append((d, spec))
        # a rule that ignores the scanned path itself was overridden by naming it
        self.ancestors = [(b, s) for b, s in specs if not _verdict(s, self._rel(self.target, b, True))]

    @staticmethod
    def _rel(p: Path, base: Path, is_dir: bool) -> str:
        rel = p.relative_to(base).as_posix()
        return rel + "/" if is_dir and rel != "." else rel

    def spec_of(self, d: Path):
        if d not in self._specs:
            f = d / ".gitignore"
            self.files_read.append(f)
            self._specs[d] = _read_spec(f) if f.is_file() else None
        return self._specs[d]

    def ignored(self, p: Path, is_dir: bool) -> bool:
        """``p`` lies under the target; the .gitignore files of the directories between are read here."""
        if not self.enabled:
            return False
        rules, d = tuple(self.ancestors), self.target
        for part in p.relative_to(self.target).parts[:-1] if p != self.target else ():
            rules = self.rules_in(d, rules)
            d = d / part
        return self.judge(self.rules_in(d, rules), p, is_dir)

    def rules_in(self, d: Path, outer: tuple) -> tuple:
        """The (base directory, spec) pairs that judge the entries of directory ``d``, outermost first: those
        of its parent (``outer``) and its own .gitignore.  A walk carries them down, so that a file costs
        nothing where no .gitignore applies."""
        if not self.enabled:
            return ()
        spec = self.spec_of(d)
        return tuple(outer) if spec is None else (*outer, (d, spec))

    def judge(self, rules: tuple, p: Path, is_dir: bool) -> bool:
        """Is ``p``, an entry of the directory ``rules`` belong to, ignored?  The deepest verdict wins."""
        verdict = None
        for base, spec in rules:
            v = _verdict(spec, self._rel(p, base, is_dir))
            if v is not None:
                verdict = v
        return bool(verdict)
