"""Report: findings -> text / json (and sarif / github, see the sibling modules)."""
from __future__ import annotations

import json
import os
from typing import Iterator, Optional

from compile_lint import __version__

from ..engine import ScanResult
from ..findings import SEVERITY_ORDER, Condition, Finding, RegionRef
from ..postwalk import relpath

JSON_SCHEMA_VERSION = "1"


class FindingEncoder:
    """Findings as JSON objects, the text ``json.dumps`` writes for each.  A site-packages' findings name a few
    hundred regions and a few thousand frames over and over (4,237 findings, 250,000 region entries: 53 MB of
    a 67 MB report), so each region, frame and condition is encoded once per report and a finding's text is
    joined from those pieces."""

    def __init__(self, roots: list):
        self.rp = lambda p: relpath(p, roots)  # noqa: E731
        self._texts: dict = {}  # Frame | RegionRef | Condition -> its JSON text
        self._roots = (tuple(map(str, roots)), os.getcwd())
        self._kept: dict = {}  # the texts this report used (keep_encoded_findings)

    def encode(self, f: Finding) -> str:
        if _KEPT_TEXTS is None:
            return self._encode(f)
        fixes = json.dumps(list(f.fixes))  # (a list of dicts: compared by its text)
        seen = (f.rule, f.severity, f.path, f.line, f.col, f.qualname, f.message, f.dynamo, f.callee, f.region,
                f.trace, f.regions_reaching, f.other_regions, f.fix_point, f.conditions, fixes, self._roots)
        got = _KEPT_TEXTS.get(id(f))
        if got is None or got[0] is not f or got[1] != seen:
            got = (f, seen, self._encode(f))
        self._kept[id(f)] = got
        return got[2]

    def keep(self) -> None:
        """In a warm process: the texts of this report's findings are the next report's to take."""
        if _KEPT_TEXTS is not None:
            _KEPT_TEXTS.clear()
            _KEPT_TEXTS.update(self._kept)

    def _encode(self, f: Finding) -> str:
        fields = (
            ("rule", json.dumps(f.rule)),
            ("severity", json.dumps(f.severity)),
            ("path", json.dumps(self.rp(f.path))),
            ("line", json.dumps(f.line)),
            ("col", json.dumps(f.col)),
            ("qualname", json.dumps(f.qualname)),
            ("message", json.dumps(f.message)),
            ("dynamo", json.dumps(f.dynamo)),
            ("callee", json.dumps(f.callee)),
            ("region", self._text(f.region)),
            ("trace", self._list(f.trace)),
            ("regions_reaching", json.dumps(f.regions_reaching)),
            ("other_regions", self._list(f.other_regions)),
            ("fix_point", json.dumps(f.fix_point)),
            # undecided branches on the path: the hazard is met only if each holds (empty: on every trace)
            ("certain", json.dumps(f.certain)),
            ("conditions", self._list(f.conditions)),
            ("fingerprint", json.dumps(f.fingerprint())),
            ("fixes", json.dumps(list(f.fixes))),
        )
        return "{" + ", ".join(f'"{key}": {text}' for key, text in fields) + "}"

    def _list(self, items) -> str:
        return "[" + ", ".join(self._text(x) for x in items) + "]"

    def _text(self, x) -> str:
        text = self._texts.get(x)
        if text is None:
            d = {"path": self.rp(x.path), "line": x.line}
            if isinstance(x, Condition):
                d["text"] = x.text
            else:
                d["qualname"] = x.qualname
                if isinstance(x, RegionRef):
                    d.update(fullgraph=x.fullgraph, kind=x.kind)
            text = self._texts[x] = json.dumps(d)
        return text


def entry_call(f: Finding, scanned: frozenset, rp) -> str:
    """Where the user's code leads into the hazard: the one place a user can act on.

    - the path starts outside the scanned files (``torch.compile(pipe.unet)`` compiles a library's forward):
      the compile call itself;
    - it leaves the scanned files somewhere: the last call in them that leads into the library;
    - it never leaves them (the hazard is in the user's code): the function that owns the hazard
      (``fix_point``: the outermost cached loader or function on the path outside the region's own file).
    Without the scanned file set (a result built by hand) the fix point is used."""
    if scanned and f.trace:
        if f.trace[0].path not in scanned:
            r = f.region
            return f"{rp(r.path)}:{r.line} {r.kind}({r.qualname})"
        for here, nxt in zip(f.trace, f.trace[1:]):
            if here.path in scanned and nxt.path not in scanned:
                return f"{rp(here.path)}:{here.line} in {here.qualname} (calls {nxt.qualname})"
    return f.fix_point or f.qualname


def fix_points(findings: list, scanned: frozenset = frozenset(), rp=lambda p: p) -> list:
    """[(where the user's code leads into the hazards, hazards at warning level or above, regions reaching
    them)], most hazards first."""
    groups: dict = {}
    for f in findings:
        if f.severity == "note" or not (f.fix_point or scanned):
            continue
        hazards, regions = groups.setdefault(entry_call(f, scanned, rp), (set(), set()))
        hazards.add((f.path, f.line, f.rule))
        for r in (f.region,) + tuple(f.other_regions):
            regions.add((r.path, r.line, r.qualname))
    rows = [(name, len(h), len(r)) for name, (h, r) in groups.items()]
    return sorted(rows, key=lambda x: (-x[1], x[0]))


def by_hazard(findings: list) -> list:
    """[(the finding to print, [the other findings of the same hazard])]: one entry per (rule, file, line).

    The walk keeps one finding per hazard *and fix point* (two cached loaders reaching one ``Path.exists``
    are two fixes, and the JSON keeps both); a reader needs the hazard once, with the shortest path."""
    groups: dict = {}
    for f in findings:
        groups.setdefault((f.rule, f.path, f.line), []).append(f)
    out = []
    for fs in groups.values():
        best = min(fs, key=lambda f: (SEVERITY_ORDER[f.severity], len(f.trace), f.col))
        out.append((best, [f for f in fs if f is not best]))
    return sorted(out, key=lambda x: Finding.sort_key(x[0]))


def to_json(result: ScanResult) -> str:
    return "".join(json_parts(result))


def json_parts(result: ScanResult) -> Iterator[str]:
    """``to_json``'s text in parts (one a finding), made as a writer takes them: joining the bench site's 67 MB
    report and encoding it whole copied it six times (0.3 s of an edit's answer), and the findings' texts
    held all at once were the tracked cold scan's peak after its walks (some 60 MB over the walks' own).  The
    result cache entry written after the report encodes them again (texts_of), unless a warm process kept
    them (FindingEncoder.keep)."""
    enc = FindingEncoder(result.roots)
    stored = getattr(result, "json_texts", None)
    if _KEPT_TEXTS is None and stored is not None and stored[1] is result.findings and stored[0] == enc._roots:
        texts = stored[2]  # (a hit in a process of its own: the texts written with the entry, of these findings)
        _LAST_TEXTS[:] = [(result.findings, enc._roots, texts)]
    else:
        texts = map(enc.encode, result.findings)
        _LAST_TEXTS[:] = [(result.findings, enc._roots, enc)]
    doc = {
        "version": __version__,
        "schema": JSON_SCHEMA_VERSION,
        "trace_rules": result.trace_rules_source,
        "findings": _Encoded(texts, len(result.findings)),
        "stats": result.stats,
        "coverage": result.coverage.to_dict(lambda p: relpath(p, result.roots)) if result.coverage else None,
        "skipped_files": [{"path": p, "reason": r} for p, r in result.problems],
    }
    yield from document_parts(doc)
    enc.keep()  # (every text made by now)


# A warm process (lint/daemon.py) keeps each finding's JSON text from one report to the next, with the values
# it was made of: after an edit most findings are the previous scan's objects, unchanged (their regions were
# reused), and encoding the bench site's 4,237 findings again was 0.3 s of each answer.  A finding is taken
# only if it is the same object with the same values (its fields are reassigned, never changed in place: the
# merge sets ``regions_reaching`` and ``other_regions``, the fix candidates ``fixes``).
_KEPT_TEXTS: Optional[dict] = None  # id(finding) -> (finding, the values encoded, its text)


# The findings' texts of the last JSON report, for the result cache entry written after it (keptstates): a hit
# in a process of its own encoded the bench site's 4,239 findings again, 0.32 s of its 1.25 s.  Kept with the
# entry as (how paths are written: the roots and working directory, the findings list, its texts); the list
# is pickled with the entry's findings, so a hit takes the texts only for that very list (not a filtered one).
# The report does not keep its texts (json_parts): what is kept is its encoder, which makes them again when
# the entry is written -- behind the answer (a command's child, a warm process after answering).
_LAST_TEXTS: list = []  # [(findings list, roots key, its texts or the FindingEncoder that made them)]


def texts_of(findings: list) -> Optional[tuple]:
    """``ScanResult.json_texts`` for a result whose findings are ``findings``: (roots key, the list, its
    texts) if the last JSON report was of that very list, else None."""
    if not _LAST_TEXTS or _LAST_TEXTS[0][0] is not findings:
        return None
    _, roots, texts = _LAST_TEXTS[0]
    if isinstance(texts, FindingEncoder):
        texts = [texts.encode(f) for f in findings]
        _LAST_TEXTS[:] = [(findings, roots, texts)]
    return roots, findings, texts


def warm_encoded_findings(findings: list, roots_key: tuple) -> None:
    """A warm process, after answering from a result (a hit) with a JSON report whose paths were written so
    (``roots_key``: FindingEncoder's roots and working directory): the texts of ``findings`` -- the merged
    findings of the result's state, which the next edit's merge starts from (postwalk.merge_of_state) --
    with their fix candidates, as that report will encode them, so that it encodes only what the edit
    changed (the bench site's first edit after a hit encoded all 4,240 again: 0.45 s of its answer).  A text
    is taken only where its finding's values are still those (FindingEncoder.encode)."""
    if _KEPT_TEXTS is None:
        return
    from ..postwalk import attach_fix_candidates

    roots, cwd = roots_key
    attach_fix_candidates(findings)  # (what the next report's findings carry: postwalk)
    here = os.getcwd()
    try:
        os.chdir(cwd)
        enc = FindingEncoder(list(roots))
        if enc._roots != roots_key:
            return
        for f in findings:
            enc.encode(f)
    except OSError:
        return  # (the directory is gone: the next report encodes them)
    finally:
        os.chdir(here)
    _KEPT_TEXTS.update(enc._kept)


def keep_encoded_findings() -> None:
    global _KEPT_TEXTS
    if _KEPT_TEXTS is None:
        _KEPT_TEXTS = {}


class _Encoded:
    """The elements of a list already in JSON text (findings from ``FindingEncoder``): ``texts``, an iterable
    of ``n`` of them, taken once."""

    def __init__(self, texts, n: int):
        self.texts, self.n = texts, n


def dumps_document(doc: dict) -> str:
    """JSON with one line per list element (one finding per line): readable, greppable and diffable, and
    written by the C encoder -- ``indent=2`` goes through the pure-Python one, 2 s for 3,000 findings."""
    return "".join(document_parts(doc))


def document_parts(doc: dict) -> Iterator[str]:
    """``dumps_document``'s text in parts: each list element one, the separators between them parts of their
    own (joined to each, the findings' texts were copied: 67 MB more at the bench site's scan's peak)."""
    yield "{" if doc else "{\n"
    for i, (key, value) in enumerate(doc.items()):
        yield f"{',' if i else ''}\n {json.dumps(key)}: "
        encoded = isinstance(value, _Encoded)
        if (encoded and value.n) or (isinstance(value, list) and value):
            texts = value.texts if encoded else (json.dumps(x) for x in value)
            yield "[\n  "
            for j, text in enumerate(texts):
                if j:
                    yield ",\n  "
                yield text
            yield "\n ]"
        else:
            yield "[]" if encoded else json.dumps(value)
    yield "\n}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def to_text(result: ScanResult, show_paths: bool = True, color: bool = False, stats: bool = False,
            show_all_paths: bool = False) -> str:
    def c(code: str, s: str) -> str:
        return f"\x1b[{code}m{s}\x1b[0m" if color else s

    rp = lambda p: relpath(p, result.roots)  # noqa: E731
    sev_color = {"error": "31;1", "warning": "33;1", "note": "36"}
    lines = []

    def path_lines(f: Finding, extra: str = "") -> None:
        r = f.region
        fg = {True: "fullgraph=True", False: "fullgraph=False", None: "fullgraph unknown"}[r.fullgraph]
        lines.append(f"  region: {rp(r.path)}:{r.line} {r.kind} {r.qualname} [{fg}]{extra}")
        for i, fr in enumerate(f.trace):
            arrow = "└─" if i == len(f.trace) - 1 else "├─"
            tail = f"  ← {f.callee}" if i == len(f.trace) - 1 and f.callee else ""
            lines.append(f"    {arrow} {rp(fr.path)}:{fr.line} in {fr.qualname}{tail}")

    hazards = by_hazard(result.findings)
    for f, others in hazards:
        head = f"{rp(f.path)}:{f.line}:{f.col}: {c('1', f.rule)} {c(sev_color[f.severity], f.severity)}: {f.message}"
        lines.append(head)
        if f.severity != "note":
            lines.append(f"  dynamo: {'may stop: ' if f.conditions and f.dynamo else ''}{f.dynamo}")
        for cond in f.conditions:
            lines.append(f"  only if: {cond.text}  ({rp(cond.path)}:{cond.line})")
        if show_paths and f.trace:  # (CL302 notes have no call path)
            path_lines(f)
            if show_all_paths:
                for g in others:
                    path_lines(g, "  (another path)")
            regions = [f.region] + [r for g in [f] + others for r in (g.region,) + tuple(g.other_regions)]
            seen = []
            for r in regions:
                key = (r.path, r.line, r.qualname)
                if key not in seen:
                    seen.append(key)
            also = [f"{rp(p)}:{ln} {q}" for p, ln, q in seen[1:]]
            if also:
                shown = ", ".join(also[:5]) + (f" and {len(also) - 5} more" if len(also) > 5 else "")
                hint = "" if show_all_paths else " (--show-all-paths prints each)"
                lines.append(f"  also reached from: {shown}{hint}")
            elif others and not show_all_paths:
                lines.append(f"  also reached by {_plural(len(others), 'other path')} (--show-all-paths prints each)")
        lines.append("")
    points = fix_points(result.findings, result.scanned_files, rp)
    if len(points) > 1:
        lines.append("By fix point (where your code leads into the hazards):")
        for name, n_hazards, n_regions in points[:20]:
            lines.append(f"  {name}: {n_hazards} hazard(s), reached from {n_regions} region(s)")
        if len(points) > 20:
            lines.append(f"  ... and {len(points) - 20} more")
        lines.append("")
    if result.stats.get("facts"):
        lines.append("Facts assumed (--assume, --env, [tool.compile-lint] assume/env):")
        lines += [f"  {line}" for line in result.stats["facts"]]
        lines.append("")
    cov = result.coverage
    if cov is not None:
        from ..coverage import text_lines

        lines += text_lines(cov, rp)
    counts = {}
    for f, _ in hazards:
        counts[f.severity] = counts.get(f.severity, 0) + 1
    summary = ", ".join(_plural(counts[s], s) for s in ("error", "warning", "note") if s in counts)
    where = f"{result.stats['files_discovered']} files scanned; trace rules: {result.trace_rules_source}."
    analysed = result.stats["regions"]
    missed = len(cov.unresolved) if cov is not None else 0
    if missed:
        found = f"Found {summary}" if summary else "No findings"
        lines.append(f"{found} in the {_plural(analysed, 'region')} analysed; {_plural(missed, 'region')} could "
                     f"not be analysed (above). {where}")
    elif not analysed:
        lines.append(f"No compiled region found: nothing was analysed. {where}")
    elif summary:
        lines.append(f"Found {summary} in {_plural(analysed, 'compiled region')}. {where}")
    else:
        lines.append(f"No findings in {_plural(analysed, 'compiled region')}. {where}")
    if result.stats.get("suppressed"):
        lines.append(f"{result.stats['suppressed']} finding(s) suppressed inline.")
    if stats:
        lines.append("")
        lines.append("Statistics:")
        for k, v in result.stats.items():
            lines.append(f"  {k}: {v}")
        for p, why in result.problems[:50]:
            lines.append(f"  skipped {p}: {why}")
    return "\n".join(lines) + "\n"
