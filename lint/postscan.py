"""What the ``scan`` and ``precommit`` commands do with a ``ScanResult``: baseline, ``--add-ignore``, restrict
to findings touching some files, and render in the chosen format (text / json / sarif / github)."""
from __future__ import annotations

import itertools
import operator
import os
import sys
from pathlib import Path
from typing import Optional

import click

FORMATS = ("text", "json", "sarif", "github")
EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def render(result, fmt: str, color: bool = False, stats: bool = False, show_paths: bool = True,
           show_all_paths: bool = False):
    """The report's text: a str, or for JSON an iterator of its parts, made as write_report writes them."""
    if fmt == "json":
        from .report import json_parts

        return itertools.chain(json_parts(result), ["\n"])
    if fmt == "sarif":
        from .report.sarif import to_sarif

        return to_sarif(result) + "\n"
    if fmt == "github":
        from .report.github import to_github

        return to_github(result)
    from .report import to_text

    return to_text(result, show_paths=show_paths, color=color, stats=stats, show_all_paths=show_all_paths)


def write_report(out, output_file: Optional[str]) -> None:
    """``out``: the text, or an iterable of its parts (render)."""
    parts = [out] if isinstance(out, str) else out
    if output_file:
        from .atomic import write_atomic

        p = Path(output_file)
        if p.parent and not p.parent.exists():
            p.parent.mkdir(parents=True, exist_ok=True)
        # (a report: the next run writes it again)
        write_atomic(p, (part.encode("utf-8") for part in parts), durable=False)
    else:  # one part at a time: joined and encoded whole, the bench site's 67 MB report was two copies more
        for part in parts:  # at the scan's peak
            click.echo(part, nl=False)


_PATH = operator.attrgetter("path")


def touching(findings: list, files, all_paths=None, files_by_hazard=None) -> list:
    """Findings whose path touches one of ``files``: the hazard, the compiled region, or any call on the way.

    ``all_paths``: (rule, path, line) -> the walk's findings for every path reaching that hazard (the report
    keeps the shortest); when only another path touches the files, the finding is reported with that path.
    ``files_by_hazard``: (rule, path, line) -> the files those paths pass through, where the merge gave them
    (ScanResult.files_by_hazard); else gathered here."""
    import dataclasses

    wanted = {os.path.realpath(f) for f in files}
    if not wanted:
        return []
    groups = all_paths or {}
    # every file the findings and their other paths name, each resolved once (realpath asks the file system
    # for every component, and the kept paths of sglang + flashinfer hold 4.9 million frames: a realpath per
    # frame took over 10 minutes); the frames are then matched by their spelling, in C-level loops
    spelled: set = set()
    for f in findings:
        spelled.update((f.path, f.region.path))
        spelled.update(map(_PATH, f.trace))
    # per hazard, the files its other paths name: a hazard none of whose paths touch the files is not searched
    # path by path for one that does (most are not: that search went through every frame again)
    group_files: dict = {}
    given = files_by_hazard or {}
    for key in {(f.rule, f.path, f.line) for f in findings}:  # (findings share hazards: each group once)
        names = given.get(key) if key in groups else None
        if names is None:
            names = set()
            for g in groups.get(key, ()):
                names.add(g.region.path)
                names.update(map(_PATH, g.trace))
        group_files[key] = names
        spelled |= names
    hit = {p for p in spelled if os.path.realpath(p) in wanted}
    if not hit:
        return []

    def hits(f) -> bool:
        return f.path in hit or f.region.path in hit or not hit.isdisjoint(map(_PATH, f.trace))

    out = []
    first_hit: dict = {}  # hazard -> its first path that touches the files (several findings share a hazard)
    for f in findings:
        if hits(f):
            out.append(f)
            continue
        key = (f.rule, f.path, f.line)
        if key not in first_hit:
            first_hit[key] = None if hit.isdisjoint(group_files[key]) else next(
                (g for g in groups.get(key, ()) if hits(g)), None)
        alt = first_hit[key]
        if alt is not None:
            others = tuple(r for r in (f.region,) + tuple(f.other_regions) if r != alt.region)
            out.append(dataclasses.replace(f, region=alt.region, trace=alt.trace, other_regions=others))
    return out


def finish(result, opts, *, fmt: str = "text", output_file=None, stats: bool = False, no_paths: bool = False,
           baseline=None, write_baseline: bool = False, add_ignore: bool = False, files=None,
           all_paths=None, strict: bool = False, show_all_paths: bool = False) -> int:
    """Apply the baseline, ``--add-ignore`` or a ``files`` restriction; print; return the exit code."""
    from .config import setting

    baseline = baseline or setting("baseline")
    if write_baseline:
        if not baseline:
            raise click.UsageError("--write-baseline needs --baseline FILE (or `baseline` in the config)")
        from .baseline import write_baseline as _write

        n = _write(baseline, result.findings)
        click.echo(f"compile-lint: recorded {n} finding(s) in {baseline}", err=True)
        return EXIT_CLEAN
    if files is not None:
        result.findings = touching(result.findings, files, all_paths, getattr(result, "files_by_hazard", None))
        result.stats["findings"] = len(result.findings)
    if baseline:
        from .baseline import new_findings

        result.findings, dropped = new_findings(result.findings, baseline)
        result.stats["baselined"] = dropped
        result.stats["findings"] = len(result.findings)
    if add_ignore:
        from .suppressions import add_ignores

        rep = add_ignores(result.findings, [str(p) for p in opts.paths])
        for path, line, why in rep.skipped:
            click.echo(f"compile-lint: not suppressed: {path}:{line}: {why}", err=True)
        click.echo(f"compile-lint: added {rep.added} suppression(s) in {len(rep.files)} file(s)", err=True)
        return EXIT_CLEAN
    if getattr(opts, "public_api", None):
        return _finish_library_mode(result, fmt, output_file)
    color = output_file is None and fmt == "text" and sys.stdout.isatty()
    write_report(render(result, fmt, color=color, stats=stats, show_paths=not no_paths,
                        show_all_paths=show_all_paths), output_file)
    cov = getattr(result, "coverage", None)
    if strict and cov is not None and cov.unresolved:
        # CI: a region nobody analysed is not a pass
        click.echo(f"compile-lint: error: --strict: {len(cov.unresolved)} compiled region(s) could not be "
                   f"analysed (the report's Coverage section says why)", err=True)
        return EXIT_ERROR
    return EXIT_FINDINGS if result.findings else EXIT_CLEAN


def _finish_library_mode(result, fmt: str, output_file) -> int:
    """`--public-api`: a table of compile-safe / unsafe APIs instead of the finding list."""
    import json

    from . import library
    from .report import dumps_document, to_json

    rows = library.verdicts(result)
    if fmt == "json":
        doc = json.loads(to_json(result))
        doc["public_api"] = [library.to_dict(v, result.roots) for v in rows]
        out = dumps_document(doc) + "\n"
    elif fmt == "text":
        out = library.to_text(result)
    else:
        raise click.UsageError("--public-api prints a table: use --format text or json")
    write_report(out, output_file)
    return EXIT_FINDINGS if any(not v.safe for v in rows) else EXIT_CLEAN
