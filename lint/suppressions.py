"""Suppression comments beyond parsing (``index.parse_suppressions`` parses them):

- ``unused_suppressions``: the CL302 notes, one per comment in a scanned file that suppressed nothing;
- ``add_ignores``: ``--add-ignore``, appending ``# compile-lint: ignore[CODE]`` to each finding's line.

A finding is suppressed by a comment on its hazard line, on any line of its call path, or by a file-level
``ignore-file`` comment in the hazard's file (see ``postwalk.is_suppressed``).
"""
from __future__ import annotations

import ast
import io
import os
import re
import tokenize
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from .atomic import write_atomic
from .findings import Finding, RegionRef
from .index import decode_source, scan_suppression_comments

UNUSED_CODE = "CL302"


@dataclass(frozen=True)
class Comment:
    path: str
    line: int
    col: int  # 1-based column of the '#'
    file_level: bool
    codes: tuple  # ("*",) for a bare ignore
    text: str


def suppression_comments(source: str, path: str = "") -> list:
    """Every suppression comment of a file, with its position (what ``parse_suppressions`` reads)."""
    return [Comment(path, line, col, file_level, codes, text)
            for line, col, file_level, codes, text in scan_suppression_comments(source)]

def _matches(code: str, rule: str) -> bool:
    return code == "*" or rule.startswith(code)


def _used(suppressed: list, comments_by_path: dict) -> set:
    """(path, line, code) of every comment code that suppressed at least one finding."""
    used = set()
    for f in suppressed:
        spots = [(f.path, f.line, False)] + [(fr.path, fr.line, False) for fr in f.trace] + [(f.path, 0, True)]
        for path, line, file_level in spots:
            for c in comments_by_path.get(path, ()):
                if c.file_level != file_level or (not file_level and c.line != line):
                    continue
                for code in c.codes:
                    if _matches(code, f.rule):
                        used.add((c.path, c.line, code))
    return used


def _scanned_sources(program) -> dict:
    """path -> source for every scanned file that may hold a suppression comment."""
    out = {}
    loaded = {m.path: m for m in program.modules.values() if m is not None}
    for _name, (path, _pkg) in sorted(program.locator.scanned.items(), key=lambda kv: str(kv[1][0])):
        path = str(path)
        m = loaded.get(path)
        if m is not None and not m.suppressions and not m.file_suppressions and not getattr(m, "error", None):
            continue  # indexed: no comment there
        src = _source_with_comments(path)
        if src is not None:
            out[path] = src
    return out


# A warm process (lint/daemon.py) keeps, per scanned file not loaded, whether it spells a suppression comment
# and its text if so, with the file's (size, mtime_ns) as the result cache checks files: reading the bench
# site's 13,000 files again for the two words was 0.15 s of each answer.
_KEPT_SOURCES: Optional[dict] = None  # path -> ((size, mtime_ns), its source, or None: no comment there)


def keep_scanned_sources() -> None:
    global _KEPT_SOURCES
    if _KEPT_SOURCES is None:
        _KEPT_SOURCES = {}


def warm_scanned_sources(paths) -> None:
    """A warm process, after answering from a result (a hit): which of its scanned files spell a suppression
    comment, read while nobody waits -- the next edit's report asks (_scanned_sources), and on the bench site
    reading its 13,000 files was 0.28 s of the daemon's first edit."""
    if _KEPT_SOURCES is not None:
        for path in paths:
            _source_with_comments(path)


def _source_with_comments(path: str) -> Optional[str]:
    """The file's source if it may hold a suppression comment, else None (also where it cannot be read)."""
    if _KEPT_SOURCES is not None:
        from .cache import file_stat

        sig = file_stat(path)
        got = _KEPT_SOURCES.get(path)
        if sig is not None and got is not None and got[0] == sig:
            return got[1]
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    src = decode_source(data) if b"compile-lint:" in data or b"noqa" in data else None
    if _KEPT_SOURCES is not None and sig is not None and sig[0] == len(data):
        _KEPT_SOURCES[path] = (sig, src)
    return src


def unused_suppressions(suppressed: list, options, program) -> list:
    """CL302 notes for the suppression comments in the scanned files that suppressed nothing in this scan."""
    from compile_lint.rules import ALL_RULES

    rule = ALL_RULES[UNUSED_CODE]
    comments_by_path = {p: suppression_comments(src, p) for p, src in _scanned_sources(program).items()}
    comments_by_path = {p: cs for p, cs in comments_by_path.items() if cs}
    if not comments_by_path:
        return []
    used = _used(suppressed, comments_by_path)
    select, ignore = list(options.select or ()), list(options.ignore or ())

    def ran(code: str) -> bool:
        """Whether this scan could have produced a finding that the code suppresses."""
        if code == "*":
            return not select
        if select and not any(code.startswith(s) or s.startswith(code) for s in select):
            return False
        return not any(code.startswith(i) for i in ignore)

    out = []
    for path, comments in comments_by_path.items():
        if any(c.file_level and any(code != "*" and _matches(code, UNUSED_CODE) for code in c.codes)
               for c in comments):
            continue  # `ignore-file[CL302]`
        for c in comments:
            if any(_matches(code, UNUSED_CODE) and code != "*" for code in c.codes):
                continue  # `ignore[CL302]` keeps a comment on purpose
            unused = [code for code in c.codes if (c.path, c.line, code) not in used and ran(code)]
            if not unused:
                continue
            unknown = [code for code in unused if code != "*" and not any(r.startswith(code) for r in ALL_RULES)]
            if len(unused) == len(c.codes):
                what = "nothing matched it in this scan"
            else:
                what = f"{', '.join(unused)} matched nothing in this scan"
            if unknown:
                what += f" ({', '.join(unknown)}: no such rule)"
            msg = rule.message.format(callee=c.text) + f": {what}"
            out.append(Finding(
                rule=UNUSED_CODE, severity="note", path=path, line=c.line, col=c.col, qualname="<module>",
                message=msg, dynamo=rule.dynamo.describe(),
                region=RegionRef(path, c.line, "<module>", None, "suppression"), trace=(),
                callee=",".join(unused), fix_point="",
            ))
    return out


# ----------------------------------------------------------------------------------------------- --add-ignore
@dataclass
class AddIgnoreReport:
    added: int = 0  # codes added
    files: list = field(default_factory=list)  # files changed
    skipped: list = field(default_factory=list)  # (path, line, why)


def _under(path: str, roots: list) -> bool:
    p = os.path.abspath(path)
    for r in roots:
        r = os.path.abspath(r)
        if p == r or p.startswith(r.rstrip(os.sep) + os.sep):
            return True
    return False


def _target_line(f: Finding, roots: list) -> Optional[tuple]:
    """Where to put the comment: the hazard line when it is in a scanned file, else the last call site on the
    path that is (suppression on any line of the call path counts)."""
    if _under(f.path, roots):
        return f.path, f.line
    for fr in reversed(f.trace):
        if _under(fr.path, roots):
            return fr.path, fr.line
    return None


_IGNORE_RE = re.compile(r"#\s*compile-lint:\s*ignore\[(?P<codes>[A-Z0-9, ]+)\]")
_NOQA_RE = re.compile(r"#\s*noqa:\s*(?P<codes>CL[0-9]*(?:\s*,\s*CL[0-9]*)*)")
_BARE_RE = re.compile(r"#\s*(compile-lint:\s*ignore(?![\[-])|noqa(?!:))")


def _line_blockers(source: str) -> dict:
    """line -> why a comment cannot be appended there (inside a multi-line string, or a backslash
    continuation)."""
    out = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
                for ln in range(tok.start[0], tok.end[0]):
                    out[ln] = "the line ends inside a multi-line string"
            if sys_version_fstring(tok):
                for ln in range(tok.start[0], tok.end[0]):
                    out.setdefault(ln, "the line ends inside a multi-line f-string")
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return {0: "the file does not tokenize"}
    return out


def sys_version_fstring(tok) -> bool:
    # Python 3.12 tokenizes f-strings into FSTRING_START/MIDDLE/END: a multi-line middle blocks those lines too
    return tokenize.tok_name.get(tok.type) == "FSTRING_MIDDLE" and tok.end[0] > tok.start[0]


def _add_code(line_text: str, code: str) -> Optional[str]:
    """The line with ``code`` added to its ``# compile-lint: ignore[...]`` comment (or a new comment)."""
    body = line_text.rstrip("\r\n")
    eol = line_text[len(body):]
    m = _IGNORE_RE.search(body)
    if m:
        codes = [c.strip() for c in m.group("codes").split(",") if c.strip()]
        if any(code.startswith(c) for c in codes):
            return None
        new = f"# compile-lint: ignore[{', '.join(codes + [code])}]"
        return body[:m.start()] + new + body[m.end():] + eol
    if _BARE_RE.search(body):
        return None  # a bare ignore already suppresses everything
    m = _NOQA_RE.search(body)
    if m:  # only the first suppression of a comment is read: extend `# noqa: CL...` instead
        codes = [c.strip() for c in m.group("codes").split(",") if c.strip()]
        if any(code.startswith(c) for c in codes):
            return None
        return body[:m.start()] + f"# noqa: {', '.join(codes + [code])}" + body[m.end():] + eol
    stripped = body.rstrip()
    return f"{stripped}  # compile-lint: ignore[{code}]{eol}"


def add_ignores(findings: list, roots: list) -> AddIgnoreReport:
    """Append ``# compile-lint: ignore[CODE]`` for each finding (CL302 excluded), one file write each.

    Idempotent: a code already suppressed on the line is not added again.  A file whose edited text no longer
    parses is left untouched (reported in ``skipped``)."""
    rep = AddIgnoreReport()
    wanted: dict = {}
    for f in findings:
        if f.rule == UNUSED_CODE:
            continue
        t = _target_line(f, roots)
        if t is None:
            rep.skipped.append((f.path, f.line, "no line of its call path is in the scanned files"))
            continue
        path, line = t
        codes = wanted.setdefault(path, {}).setdefault(line, [])
        if f.rule not in codes:
            codes.append(f.rule)
    for path in sorted(wanted):
        try:
            raw = Path(path).read_bytes()
        except OSError as e:
            rep.skipped.append((path, 0, f"cannot read: {e.strerror or e}"))
            continue
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
            text = raw.decode(encoding)
        except (SyntaxError, UnicodeDecodeError, LookupError):
            rep.skipped.append((path, 0, "cannot decode the file"))
            continue
        bom = encoding == "utf-8-sig"
        src = decode_source(raw)
        blockers = _line_blockers(src)
        lines = text.splitlines(keepends=True)
        changed = 0
        for line, codes in sorted(wanted[path].items()):
            if 0 in blockers or line in blockers:
                rep.skipped.append((path, line, blockers.get(line) or blockers.get(0)))
                continue
            if not 1 <= line <= len(lines):
                rep.skipped.append((path, line, "no such line"))
                continue
            cur = lines[line - 1]
            if cur.rstrip("\r\n").endswith("\\"):
                rep.skipped.append((path, line, "the line ends with a backslash continuation"))
                continue
            for code in codes:
                new = _add_code(cur, code)
                if new is not None:
                    cur = new
                    changed += 1
            lines[line - 1] = cur
        if not changed:
            continue
        new_text = "".join(lines)
        try:
            ast.parse(new_text.lstrip("\ufeff") if bom else new_text)
        except SyntaxError as e:
            rep.skipped.append((path, e.lineno or 0, "the edited file would not parse; left unchanged"))
            continue
        data = new_text.encode(encoding)
        write_atomic(path, data)
        rep.added += changed
        rep.files.append(path)
    return rep
