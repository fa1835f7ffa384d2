"""``compile-lint precommit FILES...``: the pre-commit hook.

Reachability needs the whole project (a staged helper is only hazardous because some compiled region far
away calls it), so the hook scans the whole work tree (with the summary cache, so unchanged files are not
re-parsed, and the result cache, so only the regions that read an edited file are walked again) and reports only the findings whose path touches one of FILES: the hazard's file, the compiled
region's file, or any function on the call path between them.  Exit code 1 when one does.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import click

from .config import remember_config_path
from .daemon import HELP as DAEMON_HELP
from .postscan import FORMATS, finish


def work_tree(cwd=None) -> Path:
    try:
        out = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, cwd=cwd,
                             timeout=30)
        if out.returncode == 0 and out.stdout.strip():
            return Path(out.stdout.strip())
    except (OSError, subprocess.SubprocessError):
        pass
    return Path(cwd or ".").absolute()


def _split(values) -> list:
    out = []
    for v in values or ():
        out += [x.strip() for x in v.split(",") if x.strip()]
    return out


@click.command("precommit")
@click.argument("files", nargs=-1, type=click.Path(path_type=str))
@click.option("--root", "roots", multiple=True, metavar="PATH",
              help="What to scan for regions and paths (default: the git work tree).")
@click.option("--config", "config", type=click.Path(dir_okay=False), expose_value=False, is_eager=True,
              callback=remember_config_path,
              help="Read settings from this file instead of the nearest pyproject.toml.")
@click.option("--python", "python", metavar="PATH", help="Interpreter whose sys.path is followed into libraries "
              "(the project's venv; the hook's own env does not have your dependencies).")
@click.option("--search-path", "search_path", multiple=True, metavar="DIR",
              help="Also resolve imports here (repeatable), as `scan --search-path`.")
@click.option("--select", multiple=True, metavar="CODES")
@click.option("--ignore", multiple=True, metavar="CODES")
@click.option("--cache-dir", metavar="DIR", help="Put every cache here (default: as `scan`).")
@click.option("--no-cache", is_flag=True)
@click.option("--incremental", is_flag=True, help="After an edit, walk again only the regions whose reads changed.")
@click.option("--baseline", type=click.Path(dir_okay=False), help="Report only findings not in this baseline.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("--no-paths", is_flag=True, help="One line per finding, without the call path.")
@click.option("--debug", is_flag=True, hidden=True)
@click.option("--daemon", "daemon", is_flag=True, expose_value=False, help=DAEMON_HELP)
def precommit_cmd(files, roots, python, search_path, select, ignore, cache_dir, no_cache, incremental, baseline, fmt,
                  no_paths, debug):
    """Scan the project; report the findings whose call path touches FILES (what pre-commit passes)."""
    from .config import configure
    from .engine import ScanOptions

    roots = [Path(r) for r in roots] or [work_tree()]
    opts = ScanOptions(paths=roots, python=python, search_path=[Path(p) for p in search_path],
                       select=[c.upper() for c in _split(select)], ignore=[c.upper() for c in _split(ignore)],
                       cache_dir=None)
    if not no_cache:
        from .cli import cache_dirs

        opts.cache_dir, opts.shared_cache_dir = cache_dirs(roots, cache_dir)
        # an unchanged tree is answered from the result cache; after an edit, with --incremental, only the
        # regions that read what changed are walked again (lint/incremental.py)
        opts.use_result_cache = True
        opts.incremental = incremental
    opts = configure(opts)
    result, all_paths = scan_keeping_all_paths(opts)
    return finish(result, opts, fmt=fmt, no_paths=no_paths, baseline=baseline,
                  files=[str(Path(f).absolute()) for f in files] if files else None, all_paths=all_paths)


def scan_keeping_all_paths(opts):
    """``scan`` plus, for each reported hazard (rule, file, line), the walk's findings for *every* path that
    reaches it from any region: the report keeps only the shortest path, but a staged file in the middle of another one
    must still select the finding."""
    from . import engine

    opts.keep_paths_by_hazard = True
    result = engine.scan(opts)
    return result, result.paths_by_hazard or {}
