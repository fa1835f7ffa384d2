"""The ``compile-lint`` command line.

Exit codes follow ruff: 0 no findings, 1 findings, 2 bad usage, bad configuration or an internal error.
"""
from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path

import click

from . import __version__
from .config import remember_config_path, setting
from .daemon import HELP as DAEMON_HELP
from .engine import ScanError, ScanOptions, scan
from .program.facts import parse_assumption, parse_env, parse_module_name

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class _Group(click.Group):
    """Turn click's usage errors and any internal error into one line and exit code 2."""

    def main(self, *args, **kwargs):
        kwargs.setdefault("standalone_mode", False)
        try:
            rv = super().main(*args, **kwargs)
        except click.exceptions.Exit as e:
            sys.exit(e.exit_code)
        except click.ClickException as e:
            click.echo(f"compile-lint: error: {e.format_message()}", err=True)
            sys.exit(EXIT_ERROR)
        except click.exceptions.Abort:
            click.echo("compile-lint: aborted", err=True)
            sys.exit(EXIT_ERROR)
        except ScanError as e:
            click.echo(f"compile-lint: error: {e}", err=True)
            sys.exit(EXIT_ERROR)
        except KeyboardInterrupt:
            click.echo("compile-lint: interrupted", err=True)
            sys.exit(130)
        except Exception as e:  # an internal error: say so in one line, keep the traceback for --debug
            if "--debug" in sys.argv:
                traceback.print_exc()
            click.echo(f"compile-lint: internal error: {type(e).__name__}: {e} (run with --debug for details)",
                       err=True)
            sys.exit(EXIT_ERROR)
        sys.exit(rv if isinstance(rv, int) else EXIT_CLEAN)


def _split(values) -> list:
    out = []
    for v in values or ():
        out += [x.strip() for x in v.split(",") if x.strip()]
    return out


def _codes(flag: str, values) -> list:
    """--select / --ignore: rule codes or prefixes, checked like the config file's (a typo is exit 2)."""
    from .config import CODE_RE

    out = [c.upper() for c in _split(values)]
    for c in out:
        if not CODE_RE.match(c):
            raise click.UsageError(f"{flag}: {c!r} is not a rule code or prefix (CL101, CL1, ...)")
    return out


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="compile-lint")
def main():
    """Find the code torch.compile will trip over, before anyone runs a model."""


def cache_dirs(paths, cache_dir) -> tuple:
    """(the project's cache, the shared one) as lint/cachedirs.py describes: ``--cache-dir`` holds every
    cache; by default the project's results go in its ``.compile_lint_cache/`` and what depends only on the
    environment in the user cache directory (``$COMPILE_LINT_CACHE_DIR`` moves it)."""
    from .cachedirs import PROJECT_CACHE, project_root, user_cache_dir

    if cache_dir:
        return Path(cache_dir), None
    return project_root([Path(p) for p in paths]) / PROJECT_CACHE, user_cache_dir()


def _scan_options(paths, python, search_path, no_env, entry, select, ignore, cache_dir, no_cache, target_arch,
                  cuda_version, exclude, quiet) -> ScanOptions:
    from .progress import Progress

    opts = ScanOptions(
        paths=[Path(p) for p in paths],
        python=python,
        search_path=list(search_path),
        use_environment=not no_env,
        entries=list(entry),
        select=_codes("--select", select),
        ignore=_codes("--ignore", ignore),
        cache_dir=None,
        target_arch=target_arch,
        cuda_version=cuda_version,
        exclude=list(exclude),
        progress=None if quiet else Progress.for_terminal(),
        models=list(click.get_current_context().meta.get("compile_lint.models", [])),
        public_api=list(click.get_current_context().meta.get("compile_lint.public_api", [])),
        jobs=click.get_current_context().meta.get("compile_lint.jobs"),
        respect_gitignore=not click.get_current_context().meta.get("compile_lint.no_gitignore", False),
        assume=list(click.get_current_context().meta.get("compile_lint.assume", [])),
        env=list(click.get_current_context().meta.get("compile_lint.env", [])),
        env_complete=click.get_current_context().meta.get("compile_lint.env_complete", False),
        not_installed=list(click.get_current_context().meta.get("compile_lint.not_installed", [])),
        torch_version=click.get_current_context().meta.get("compile_lint.torch_version"),
        show_disabled=click.get_current_context().meta.get("compile_lint.show_disabled", False),
        incremental=click.get_current_context().meta.get("compile_lint.incremental", False),
    )
    if not no_cache:
        opts.cache_dir, opts.shared_cache_dir = cache_dirs(paths, cache_dir)
    from .config import configure  # [tool.compile-lint] / --config: fills what the command line did not set

    return configure(opts)


def _facts(param, values, parse) -> list:
    """--assume / --env values parsed, or a usage error (exit 2) that names the bad one."""
    from .program.facts import FactError

    try:
        return [parse(v) for v in values]
    except FactError as e:
        raise click.BadParameter(str(e), param=param) from None


_scan_params = [
    click.argument("paths", nargs=-1, type=click.Path(path_type=str), required=True),
    click.option("--python", "python", metavar="PATH", help="Interpreter whose sys.path is followed into libraries "
                 "(default: the one running compile-lint)."),
    click.option("--search-path", multiple=True, metavar="DIR", help="Extra import root to follow imports into."),
    click.option("--no-environment", "no_env", is_flag=True, help="Do not follow imports into the interpreter's "
                 "sys.path."),
    click.option("--entry", multiple=True, metavar="MODULE:QUALNAME", help="Extra compiled region (fullgraph)."),
    click.option("--select", multiple=True, metavar="CODES", help="Only these rule codes / prefixes (CL1,CL201)."),
    click.option("--ignore", multiple=True, metavar="CODES", help="Skip these rule codes / prefixes."),
    click.option("--cache-dir", metavar="DIR", help="Put every cache here (default: the project's results in "
                 "<project root>/.compile_lint_cache, the environment's in the user cache directory, "
                 "$COMPILE_LINT_CACHE_DIR if set)."),
    click.option("--no-cache", is_flag=True, help="Do not read or write the cache."),
    click.option("--model", "models", multiple=True, metavar="CLASS", expose_value=False,
                 callback=lambda ctx, _p, v: ctx.meta.__setitem__("compile_lint.models", list(v)),
                 help="Only these model classes when a framework compiles a model chosen at run time "
                      "(e.g. DeepseekV2ForCausalLM)."),
    click.option("--public-api", "public_api", multiple=True, metavar="PACKAGE", expose_value=False,
                 callback=lambda ctx, _p, v: ctx.meta.__setitem__("compile_lint.public_api", list(v)),
                 help="Library mode: treat every public function of PACKAGE as a fullgraph region and print "
                      "which APIs are compile-safe."),
    click.option("--jobs", "-j", "jobs", type=click.IntRange(min=1), metavar="N", expose_value=False,
                 callback=lambda ctx, _p, v: ctx.meta.__setitem__("compile_lint.jobs", v),
                 help="Processes that parse files before the walk (default: one per core)."),
    click.option("--assume", "assume", multiple=True, metavar="EXPR=VALUE", expose_value=False,
                 callback=lambda ctx, p, v: ctx.meta.__setitem__("compile_lint.assume", _facts(p, v, parse_assumption)),
                 help="A fact about the deployment: EXPR (a name or attribute path, matched as a dotted suffix) "
                      "has VALUE (a literal, a word, or the class of the objects it holds), e.g. "
                      "server_args.quantization=modelopt_fp4, self.quant_method=ModelOptFp4LinearMethod."),
    click.option("--env", "env", multiple=True, metavar="NAME=VALUE", expose_value=False,
                 callback=lambda ctx, p, v: ctx.meta.__setitem__("compile_lint.env", _facts(p, v, parse_env)),
                 help="An environment variable the deployment sets (Dynamo reads it at trace time)."),
    click.option("--env-complete", is_flag=True, expose_value=False,
                 callback=lambda ctx, _p, v: ctx.meta.__setitem__("compile_lint.env_complete", v),
                 help="The --env variables are the deployment's whole environment: any other is unset."),
    click.option("--incremental", is_flag=True, expose_value=False,
                 callback=lambda ctx, _p, v: ctx.meta.__setitem__("compile_lint.incremental", v),
                 help="After an edit, walk again only the compiled regions whose reads changed, reusing the "
                      "cached results of the others (the findings equal a full scan's)."),
    click.option("--show-disabled", is_flag=True, expose_value=False,
                 callback=lambda ctx, _p, v: ctx.meta.__setitem__("compile_lint.show_disabled", v),
                 help="Also report, as notes, the hazards inside torch.compiler.disable'd functions: what "
                      "removing the disable would expose (Dynamo never traces them; the call is the stop, CL116)."),
    click.option("--not-installed", "not_installed", multiple=True, metavar="MODULE", expose_value=False,
                 callback=lambda ctx, p, v: ctx.meta.__setitem__("compile_lint.not_installed",
                                                                 _facts(p, v, parse_module_name)),
                 help="A package the deployment does not have: its imports fail, and the `except ImportError:` "
                      "fallbacks run (e.g. cutlass, flash_attn)."),
    click.option("--torch-version", metavar="X.Y", expose_value=False,
                 callback=lambda ctx, _p, v: ctx.meta.__setitem__("compile_lint.torch_version", v),
                 help="The deployment's torch: read the Dynamo verdicts measured on it (bundled: 2.11, 2.13; "
                      "default: the installed torch's)."),
    click.option("--target-arch", metavar="smXY", help="Prune branches that cannot run on this GPU (sm90, sm120)."),
    click.option("--cuda-version", metavar="X.Y", help="CUDA version assumed with --target-arch (default 12.9)."),
    click.option("--exclude", multiple=True, metavar="PATH", help="Skip files under this path."),
    click.option("--no-respect-gitignore", is_flag=True, expose_value=False,
                 callback=lambda ctx, _p, v: ctx.meta.__setitem__("compile_lint.no_gitignore", v),
                 help="Also scan the files that .gitignore files ignore."),
    click.option("-q", "--quiet", is_flag=True, help="No progress output."),
    click.option("--debug", is_flag=True, hidden=True),
    click.option("--config", type=click.Path(dir_okay=False), expose_value=False, is_eager=True,
                 callback=remember_config_path,
                 help="Settings file (default: the nearest pyproject.toml with [tool.compile-lint])."),
]


def _apply(params):
    def deco(f):
        for p in reversed(params):
            f = p(f)
        return f

    return deco


# Fixers (compile_lint.fixers): scan --diff / --fix / --unsafe-fixes / --fix-in / --op-namespace, and `fix`.
_fix_params = [
    click.option("--diff", "show_diff", is_flag=True, help="Print the fixes --fix would apply as a unified diff; "
                 "change nothing."),
    click.option("--fix", "apply_fix", is_flag=True, help="Apply the safe fixes, re-scan, report what remains."),
    click.option("--unsafe-fixes", is_flag=True, help="With --fix/--diff: apply the unsafe fixes too."),
    click.option("--fix-in", multiple=True, metavar="PACKAGE", help="Fix inside this package (a library) instead "
                 "of the scanned code."),
    click.option("--op-namespace", metavar="NAME", help="torch.library namespace of generated ops "
                 "(default: compile_lint)."),
]


def _run_fixers(opts, result, paths, show_diff, apply_fix, unsafe_fixes, fix_in, op_namespace):
    """(exit code, result) for --diff; (None, re-scanned result) for --fix."""
    from compile_lint.fixers.cli import apply_and_rescan, fix_options
    from compile_lint.fixers.cli import show_diff as _show_diff

    try:
        fo = fix_options(paths, unsafe_fixes, fix_in, op_namespace)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    if show_diff:  # like ruff: --diff never writes, even with --fix
        return _show_diff(result, fo), result
    _report, last = apply_and_rescan(opts, result, fo)
    return None, last


@main.command("scan")
@_apply(_scan_params)
@_apply(_fix_params)
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif", "github"]), default="text",
              show_default=True)
@click.option("--output-file", "-o", type=click.Path(dir_okay=False, writable=True), help="Write the report here.")
@click.option("--stats", is_flag=True, help="Print scan statistics (unresolved calls, cache hits, skipped files).")
@click.option("--no-paths", is_flag=True, help="Text format: one line per finding, without the call path.")
@click.option("--baseline", type=click.Path(dir_okay=False), help="Report only findings not recorded in this file.")
@click.option("--write-baseline", is_flag=True, help="Record the current findings in the --baseline file.")
@click.option("--add-ignore", is_flag=True, help="Append `# compile-lint: ignore[CODE]` to each finding's line.")
@click.option("--strict", is_flag=True, help="Exit 2 when a compiled region could not be analysed (for CI).")
@click.option("--show-all-paths", is_flag=True, help="Text format: print every path to a hazard, not only the "
              "shortest.")
@click.option("--daemon", "daemon", is_flag=True, expose_value=False, help=DAEMON_HELP)  # (entry() sends it)
def scan_cmd(paths, python, search_path, no_env, entry, select, ignore, cache_dir, no_cache, target_arch,
             cuda_version, exclude, quiet, debug, fmt, output_file, stats, no_paths, baseline=None,
             write_baseline=False, add_ignore=False, show_diff=False, apply_fix=False, unsafe_fixes=False, fix_in=(),
             op_namespace=None, strict=False, show_all_paths=False):
    """Scan PATHS (files, packages, repos or a site-packages) for code Dynamo cannot trace."""
    opts = _scan_options(paths, python, search_path, no_env, entry, select, ignore, cache_dir, no_cache, target_arch,
                         cuda_version, exclude, quiet)
    if not (show_diff or apply_fix):
        opts.use_result_cache = True  # the fixers need the program a cached result does not keep
    result = scan(opts)
    if not result.stats.get("files_discovered") and not result.stats.get("files_opaque"):
        click.echo("compile-lint: warning: no Python files under the given path(s): nothing to scan", err=True)
    if show_diff or apply_fix:
        rc, result = _run_fixers(opts, result, paths, show_diff, apply_fix, unsafe_fixes, fix_in, op_namespace)
        if rc is not None:
            return rc
    from .postscan import finish  # baseline, --add-ignore, text/json/sarif/github

    # The report needs the findings, not the resolver: its memo tables go before the report is built (on a
    # whole site-packages they were 150 MB, and the JSON document another 200 MB on top: the peak RSS)
    result.program = None
    return finish(result, opts, fmt=fmt, output_file=output_file, stats=stats, no_paths=no_paths,
                  baseline=baseline, write_baseline=write_baseline, add_ignore=add_ignore,
                  strict=strict or setting("strict"),
                  show_all_paths=show_all_paths)


@main.command("graph")
@_apply(_scan_params)
@click.option("--from", "src", metavar="QUALNAME", help="Print the call paths starting at this function.")
@click.option("--to", "dst", metavar="QUALNAME", help="... and ending at this function (or callee).")
@click.option("--all", "everything", is_flag=True, help="The whole program's call graph: every function, method, "
              "closure and lambda of the scanned files, and each module's top-level code, not only what the "
              "compiled regions reach.")
def graph_cmd(paths, python, search_path, no_env, entry, select, ignore, cache_dir, no_cache, target_arch,
              cuda_version, exclude, quiet, debug, src, dst, everything=False):
    """Print the resolved call graph as JSON (adjacency list), or the paths between two functions."""
    from .graph import build_graph, paths_between, unknown_name

    opts = _scan_options(paths, python, search_path, no_env, entry, select, ignore, cache_dir, no_cache, target_arch,
                         cuda_version, exclude, quiet)
    if (src or dst) and not (src and dst):
        raise click.UsageError("--from and --to go together")
    g = build_graph(opts, everything)
    if src or dst:
        for flag, name in (("--from", src), ("--to", dst)):
            close = unknown_name(g, name)
            if close is not None:  # a typo is an error, not "no path"
                hint = f"; did you mean {', '.join(close)}?" if close else ""
                where = "the program" if everything else "the regions"
                raise click.UsageError(f"{flag} {name}: no such function in the call graph of {where}{hint}")
        found = paths_between(g, src, dst)
        for p in found:
            click.echo(" -> ".join(p))
        if not found:
            click.echo(f"no path from {src} to {dst}", err=True)
            return EXIT_FINDINGS
        return EXIT_CLEAN
    click.echo(json.dumps(g, indent=1, sort_keys=True))
    return EXIT_CLEAN


@main.command("rules")
def rules_cmd():
    """List the rules."""
    from compile_lint.rules import ALL_RULES

    for code, r in ALL_RULES.items():
        click.echo(f"{code}  {r.kind:<6}  {r.family:<15} {r.name}")
    return EXIT_CLEAN


@main.command("rule")
@click.argument("code")
def rule_cmd(code):
    """Print one rule's documentation (what / why / example / fix / Dynamo outcome)."""
    from compile_lint.rules import ALL_RULES

    r = ALL_RULES.get(code.upper())
    if r is None:
        raise click.UsageError(f"unknown rule {code!r}; `compile-lint rules` lists them")
    click.echo(r.documentation())
    return EXIT_CLEAN


@main.command("fix")
@_apply(_scan_params)
@_apply([p for p in _fix_params if p is not _fix_params[1]])
@click.option("--pr", "pr", is_flag=True, help="Apply the safe fixes on a new branch compile-lint/fix-<short HEAD>, "
              "commit them and write a pull-request body.")
@click.option("--push", is_flag=True, help="With --pr: push the branch to the remote.")
@click.option("--open", "open_pr", is_flag=True, help="With --pr --push: open the pull request with the gh CLI.")
@click.option("--remote", metavar="NAME", help="With --push: the remote (default: the branch's, or origin).")
@click.option("--base", metavar="BRANCH", help="The pull request's base (default: the current branch).")
@click.option("--body-file", type=click.Path(dir_okay=False), help="Write the pull-request body here.")
def fix_cmd(paths, python, search_path, no_env, entry, select, ignore, cache_dir, no_cache, target_arch,
            cuda_version, exclude, quiet, debug, show_diff=False, unsafe_fixes=False, fix_in=(), op_namespace=None,
            pr=False, push=False, open_pr=False, remote=None, base=None, body_file=None):
    """Apply the safe fixes to PATHS (the same as `scan --fix`), then re-scan and report what remains."""
    opts = _scan_options(paths, python, search_path, no_env, entry, select, ignore, cache_dir, no_cache, target_arch,
                         cuda_version, exclude, quiet)
    if pr:
        from .pr import run_pr_command

        return run_pr_command(opts, push=push, open_pr=open_pr, remote=remote, base=base, body_file=body_file,
                              unsafe=unsafe_fixes, fix_in=list(fix_in) or None, op_namespace=op_namespace)
    result = scan(opts)
    rc, result = _run_fixers(opts, result, paths, show_diff, not show_diff, unsafe_fixes, fix_in, op_namespace)
    if rc is not None:
        return rc
    from .postscan import finish

    return finish(result, opts)


@main.group("daemon")
def daemon_cmd():
    """A warm process that answers `scan --daemon` and `precommit --daemon` (lint/daemon.py)."""


def _daemon_module():
    from . import daemon

    if not daemon.available():
        raise click.UsageError("the daemon needs Unix sockets: run the commands without --daemon")
    return daemon


@daemon_cmd.command("start")
@click.option("--idle-timeout", type=click.FloatRange(min=0), default=3 * 3600, show_default=True, metavar="S",
              help="Stop after S seconds without a request (0: never).")
def daemon_start_cmd(idle_timeout):
    """Start the daemon (one per user, environment and compile-lint version), unless one is running."""
    daemon = _daemon_module()
    try:
        pid, sock, running = daemon.start(idle_timeout)
    except RuntimeError as e:
        raise click.ClickException(str(e)) from None
    state = "already running" if running else "started"
    click.echo(f"compile-lint daemon {state}: pid {pid or '(busy)'}, socket {sock}, log {daemon.log_path(sock)}")
    return EXIT_CLEAN


@daemon_cmd.command("stop")
def daemon_stop_cmd():
    """Stop the daemon (after the request it is answering, if any)."""
    pid = _daemon_module().stop()
    click.echo(f"compile-lint daemon stopped: pid {pid}" if pid else "compile-lint daemon: none running")
    return EXIT_CLEAN


@daemon_cmd.command("status")
def daemon_status_cmd():
    """Whether the daemon runs (exit 0) or not (exit 1), its pid, uptime, requests served and memory."""
    try:
        got = _daemon_module().status()
    except TimeoutError:
        click.echo("compile-lint daemon: running, busy with a request for more than 10 minutes")
        return EXIT_CLEAN
    if got is None:
        click.echo("compile-lint daemon: none running")
        return EXIT_FINDINGS
    click.echo(f"compile-lint daemon: pid {got['pid']}, up {got['uptime_s']:.0f} s, {got['served']} requests "
               f"served, {got['states_kept']} incremental states in memory, peak RSS {got['rss_mb']} MB")
    return EXIT_CLEAN


def _add_ecosystem_commands():
    from .precommit import precommit_cmd

    main.add_command(precommit_cmd)


_add_ecosystem_commands()

def entry():  # pragma: no cover - the console script; tests call `main` in-process or `python -m`
    """The `compile-lint` command: ``main`` in a process whose string hashing is pinned.

    The resolver's memo tables meet recursion (a function that reaches itself) in evaluation order: when
    value sets were iterated in hash order, two hash seeds gave 3,280 and 3,312 findings on a whole
    site-packages.  The resolver now iterates them in a fixed order (program._fixed: the same findings and
    statistics under seeds 1 and 2); the command still re-executes itself once with PYTHONHASHSEED=0, so any
    order left unfixed cannot make a cached result differ from a fresh one.

    The console script (lint/console.py) has tried the daemon first, for ``--daemon``.
    """
    if os.name == "posix" and os.environ.get("PYTHONHASHSEED") != "0" and not os.environ.get(
            "COMPILE_LINT_NO_REEXEC"):
        env = dict(os.environ, PYTHONHASHSEED="0")
        # `-c` puts the working directory -- the scanned repo -- first on sys.path; it is dropped before
        # anything is imported, or a repo's own `subprocess.py` would shadow the standard library's
        boot = "import sys; del sys.path[0]; from compile_lint.cli import entry; entry()"
        try:
            os.execve(sys.executable, [sys.executable, "-c", boot, *sys.argv[1:]], env)
        except OSError:
            pass  # no re-exec possible: run as we are
    import gc

    gc.disable()  # a short-lived process; scan() pauses it anyway, and the report walks the same objects
    behind = _writes_behind(sys.argv[1:])
    if behind:
        from . import keptstates

        keptstates.defer_writes()
    try:
        main(prog_name="compile-lint")
    except SystemExit as e:
        code = e.code
    else:
        code = EXIT_CLEAN
    if behind:
        _write_behind()
    _leave(code)


def _writes_behind(args: list) -> bool:
    """Does this command write its result cache entry and incremental state after it exits (a child process
    writes them)?  A scan's: a site-packages' state is some 280 MB pickled, 4 s of an edit's 14 s, which the
    user (a pre-commit hook) waited for.  Linux only (macOS forks without exec badly once a system framework
    is loaded; Windows has no fork); not where ``COMPILE_LINT_WRITE_BEHIND=0`` (the test suite: its tests
    read the cache a command wrote)."""
    return bool(args) and args[0] in ("scan", "precommit") and sys.platform.startswith("linux") and \
        os.environ.get("COMPILE_LINT_WRITE_BEHIND", "1") != "0"


def _write_behind() -> None:
    """Write what this command deferred (keptstates.defer_writes) in a child of its own, so that the command
    exits now.  Its output is written by then; the child holds the directories it writes locked, so that the
    next scan waits for its entries rather than read the previous ones (keptstates.hold_for_writing)."""
    import threading

    from . import keptstates

    dirs = keptstates.pending_dirs()
    if not dirs:
        return
    held = keptstates.hold_for_writing(dirs)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    pid = -1
    if threading.active_count() == 1:  # (a fork copies only this thread: a lock another one held stays held)
        try:
            pid = os.fork()
        except OSError:
            pid = -1
    if pid > 0:
        return  # this process exits: its copies of the locks close, the child's hold them
    if pid == 0:
        try:
            os.setsid()  # not stopped by the terminal's Ctrl-C meant for the next command
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):  # the caller's pipes close when the command exits, not when the child does
                os.dup2(null, fd)
            keptstates.write_kept_states()
        finally:
            os._exit(0)
    keptstates.write_kept_states()  # no fork: written here, as before
    for fd in held:
        os.close(fd)


def _leave(code) -> None:
    """Exit with ``code`` without freeing the process's objects one by one: everything is written by now
    (reports; the cache, by atomic renames, or by the child writing behind) and the workers are gone, and
    after a whole site-packages that teardown took ~2 s."""
    if isinstance(code, str):
        click.echo(code, err=True)
        code = EXIT_ERROR
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe: nothing more to say
        pass
    os._exit(code if isinstance(code, int) else EXIT_CLEAN)


if __name__ == "__main__":  # pragma: no cover - `python -m compile_lint.cli`, as the console script
    from compile_lint.console import entry as _console_entry

    _console_entry()
