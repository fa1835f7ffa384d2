"""``compile-lint fix --pr``: apply the safe fixes on a branch, commit, and describe them for a pull request.

The flow, on a git checkout whose tracked files are clean:

1. scan (the "before" findings, with their predicted Dynamo outcome);
2. let a *fixer* edit the work tree (``Fixer``: by default ``compile_lint.fixers``' ``plan_fixes`` /
   ``apply_fixes``, see ``default_fixer``);
3. re-scan: a finding of "before" that is gone (by fingerprint) is fixed; what is left is listed;
4. create branch ``compile-lint/fix-<short HEAD>``, commit the changed files with hooks disabled
   (``git -c core.hooksPath=/dev/null commit --no-verify``: nothing of the scanned repo runs);
5. write the pull-request body (Markdown) and, with ``push``, push the branch; with ``open_pr`` and the
   ``gh`` CLI, open the pull request, else print the exact commands;
6. switch back to the branch it started on (the fixes stay on the new branch).

The fixer interface (what ``compile_lint.fixers`` can provide, or a test can pass)::

    Fixer = Callable[[ScanResult, ScanOptions], list[AppliedFix]]  # edits files in place

It is called with the "before" result; it returns what it applied (used for the descriptions; the changed
files are read from git, the fixed hazards from the re-scan).
"""
from __future__ import annotations

import inspect
import os
import shlex
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from .engine import ScanError, ScanOptions, ScanResult, scan

BRANCH_PREFIX = "compile-lint/fix-"
# nothing of the scanned repo runs: no hooks, no fsmonitor command (`git status` would start it)
NO_HOOKS = ("-c", "core.hooksPath=/dev/null", "-c", "commit.gpgsign=false", "-c", "core.fsmonitor=false")
FALLBACK_IDENTITY = ("compile-lint", "compile-lint@users.noreply.github.com")


@dataclass
class AppliedFix:
    finding: object  # the Finding it addresses (or None)
    fixer: str  # fixer id: "op-boundary", "hoist-load", ...
    description: str = ""
    paths: tuple = ()  # files it changed (informational; git is asked too)


Fixer = Callable[[ScanResult, ScanOptions], list]


@dataclass
class PRResult:
    branch: Optional[str]
    base: Optional[str]
    commit: Optional[str]
    body: str
    body_file: Optional[Path]
    title: str
    fixed: list = field(default_factory=list)  # Findings of "before" that the re-scan no longer reports
    remaining: list = field(default_factory=list)  # Findings of the re-scan
    changed_files: list = field(default_factory=list)  # repo-relative
    applied: list = field(default_factory=list)  # AppliedFix
    pushed: bool = False
    opened: bool = False
    commands: list = field(default_factory=list)  # what to run to push / open the PR by hand
    message: str = ""


class GitError(ScanError):
    pass


def git(repo, *args, check: bool = True, env=None, strip: bool = True) -> str:
    cmd = ["git", *NO_HOOKS, *args]
    try:
        p = subprocess.run(cmd, cwd=str(repo), capture_output=True, text=True, timeout=300,
                           env={**os.environ, "GIT_TERMINAL_PROMPT": "0", **(env or {})})
    except (OSError, subprocess.SubprocessError) as e:
        raise GitError(f"git {' '.join(args)}: {e}") from None
    if check and p.returncode != 0:
        raise GitError(f"git {' '.join(args)} failed: {(p.stderr or p.stdout).strip()}")
    out = p.stdout.strip() if strip else p.stdout
    return out if check or p.returncode == 0 else None


# ------------------------------------------------------------------------------------------- the fixer
def _call_flex(fn, **available):
    """Call ``fn`` with the keyword arguments its signature names (positional-only ones in order)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return fn(*available.values())
    args, kwargs = [], {}
    for name, p in sig.parameters.items():
        if name in available:
            if p.kind == p.POSITIONAL_ONLY:
                args.append(available[name])
            else:
                kwargs[name] = available[name]
    return fn(*args, **kwargs)


def _get(obj, *names, default=None):
    for n in names:
        if isinstance(obj, dict) and n in obj:
            return obj[n]
        if not isinstance(obj, dict) and hasattr(obj, n):
            return getattr(obj, n)
    return default


def _fix_options(unsafe: bool, fix_in, op_namespace, start):
    """``compile_lint.fixers.model.FixOptions`` (with ``[tool.compile-lint.fix]`` merged) when it exists."""
    try:
        from compile_lint.fixers.model import FixOptions
    except ImportError:
        return None
    fo = FixOptions(unsafe=unsafe)
    if fix_in:
        fo.fix_in = tuple(fix_in)
    if op_namespace:
        fo.op_namespace = op_namespace
    try:
        from compile_lint.fixers.config import options_from_config

        fo = options_from_config(start, fo)
    except ImportError:
        pass
    return fo


def default_fixer(unsafe: bool = False, fix_in=None, op_namespace=None) -> Fixer:
    """A Fixer over ``compile_lint.fixers``: ``plan_fixes(...)`` then ``apply_fixes(plan)``.  Arguments are passed
    by the names the functions take: ``result``, ``findings``, ``scan_options``, ``options``/``fix_options``
    (a ``FixOptions`` when the fixers define it, else the ScanOptions), ``unsafe``, ``fix_in``,
    ``op_namespace``, ``program``; ``apply_fixes`` gets ``plan``/``planning``/``plans``.  What was applied is
    read from the returned report's ``applied`` (else from the plan): items with ``fixer``, ``description``
    and ``findings`` (or ``finding``)."""

    def run(result: ScanResult, options: ScanOptions) -> list:
        try:
            import compile_lint.fixers as fx
        except ImportError as e:  # pragma: no cover
            raise ScanError(f"compile_lint.fixers is not available: {e}") from None
        plan_fn, apply_fn = getattr(fx, "plan_fixes", None), getattr(fx, "apply_fixes", None)
        fix_fn = getattr(fx, "fix", None)
        if (plan_fn is None or apply_fn is None) and fix_fn is None:
            raise ScanError("compile_lint.fixers has no plan_fixes/apply_fixes yet: `fix --pr` cannot apply fixes")
        fo = _fix_options(unsafe, fix_in, op_namespace, options.paths[0] if options.paths else ".")
        plan = None
        if callable(fix_fn) and fo is not None:  # fix(scan_options, FixOptions, result=...): rounds until stable
            report_ = _call_flex(fix_fn, scan_options=options, options=fo, result=result, write=True)
        else:
            avail = dict(result=result, findings=result.findings, scan_options=options,
                         options=fo if fo is not None else options, fix_options=fo,
                         opts=fo if fo is not None else options, unsafe=unsafe, fix_in=fix_in,
                         op_namespace=op_namespace, program=result.program)
            plan = _call_flex(plan_fn, **avail)
            report_ = _call_flex(apply_fn, plan=plan, planning=plan, plans=_get(plan, "plans", default=plan),
                                 result=result, options=avail["options"], fix_options=fo, scan_options=options,
                                 unsafe=unsafe)
        items = _get(report_, "applied", default=None)
        if items is None and plan is not None:
            items = plan if isinstance(plan, (list, tuple)) else (
                _get(plan, "plans", "fixes", "items", default=[]) or [])
        out = []
        for it in items or ():
            fixer = str(_get(it, "fixer", "fixer_id", "id", "kind", default="fix"))
            desc = str(_get(it, "description", "title", "message", default="")).strip().splitlines()
            paths = _get(it, "touched", "paths", default=None) or ([_get(it, "path")] if _get(it, "path") else [])
            found = _get(it, "findings", default=None) or [_get(it, "finding")]
            for f in found:
                out.append(AppliedFix(finding=f, fixer=fixer, description=desc[0] if desc else "",
                                      paths=tuple(str(p) for p in paths)))
        return out

    return run


# ------------------------------------------------------------------------------------------- helpers
def _rel(path: str, root: Path) -> str:
    try:
        rel = os.path.relpath(path, root)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel.replace(os.sep, "/")


def _fps(findings: list, root: Path) -> list:
    from .baseline import fingerprint

    return [fingerprint(f, str(root)) for f in findings]


def _changed(repo: Path) -> tuple:
    """(modified tracked files, untracked files), repo-relative."""
    out = git(repo, "status", "--porcelain", "-z", "--untracked-files=all", strip=False)
    mod, new = [], []
    entries = out.split("\0") if out else []
    i = 0
    while i < len(entries):
        e = entries[i]
        i += 1
        if not e:
            continue
        code, path = e[:2], e[3:]
        if code.startswith("R") or code.startswith("C"):
            i += 1  # the original name follows
        (new if code == "??" else mod).append(path)
    return mod, new


def outcome_before(f) -> str:
    fg = f.region.fullgraph
    if f.severity == "note":
        return f"note: {f.dynamo}"
    if f.rule.startswith("CL2"):
        return f"compiles, but behaves differently from eager: {f.dynamo}"
    where = {True: "**error** (fullgraph=True)", False: "**graph break** (fullgraph=False)",
             None: "**error** under fullgraph=True, a graph break otherwise"}[fg]
    if f.conditions:
        only = "; ".join(f"`{c.text}` ({Path(c.path).name}:{c.line})" for c in f.conditions)
        return f"may stop Dynamo, only if {only}: {f.dynamo}"
    return f"{where}: {f.dynamo}"


def _path_md(f, root: Path) -> str:
    r = f.region
    hops = [f"`{_rel(r.path, root)}:{r.line}` {r.kind}({r.qualname})"]
    hops += [f"`{_rel(fr.path, root)}:{fr.line}` {fr.qualname}" for fr in f.trace]
    if f.callee:
        hops[-1] += f" → `{f.callee}`"
    return " → ".join(hops)


def pr_body(fixed: list, remaining: list, applied: list, changed: list, root: Path, head: str,
            trace_rules: str = "", unsafe: bool = False) -> str:
    from compile_lint import __version__

    by_loc = {}
    for a in applied:
        if a.finding is not None:
            by_loc.setdefault((a.finding.rule, a.finding.path, a.finding.line), []).append(a)
    n = len(fixed)
    lines = [f"## compile-lint: {n} torch.compile hazard{'s' if n != 1 else ''} fixed", "",
             f"Automated by `compile-lint fix --pr` (compile-lint {__version__}) on top of `{head}`. "
             + ("Safe **and unsafe** fixes (`--unsafe-fixes`) were applied: an unsafe fix changes when code runs; "
                "review each one." if unsafe else
                "Only safe fixes were applied; review the diff like any other change."), ""]
    if trace_rules:
        lines += [f"Dynamo model: {trace_rules}.", ""]
    lines += ["### Fixed", ""]
    if not fixed:
        lines += ["_No finding disappeared in the re-scan._", ""]
    for i, f in enumerate(fixed, 1):
        lines.append(f"{i}. **{f.rule}** {f.message} — `{_rel(f.path, root)}:{f.line}`")
        lines.append(f"   - path: {_path_md(f, root)}")
        lines.append(f"   - before: {outcome_before(f)}")
        for a in by_loc.get((f.rule, f.path, f.line), ()):
            lines.append(f"   - fix: `{a.fixer}`" + (f" — {a.description}" if a.description else ""))
    lines.append("")
    if applied and not any(a.finding is not None for a in applied):
        lines += ["### Fixes applied", ""] + [f"- `{a.fixer}`" + (f" — {a.description}" if a.description else "")
                                             for a in applied] + [""]
    lines += ["### Remaining after a re-scan", ""]
    if not remaining:
        lines += ["None: `compile-lint scan` reports no finding on this branch.", ""]
    else:
        counts = Counter(f.severity for f in remaining)
        lines.append(", ".join(f"{counts[s]} {s}{'s' if counts[s] != 1 else ''}" for s in ("error", "warning", "note")
                               if counts[s]) + " (not fixed automatically: they need a person or `--unsafe-fixes`).")
        lines.append("")
        for f in remaining[:50]:
            lines.append(f"- **{f.rule}** `{_rel(f.path, root)}:{f.line}` {f.message}")
        if len(remaining) > 50:
            lines.append(f"- … and {len(remaining) - 50} more (`compile-lint scan .`)")
        lines.append("")
    lines += ["### Files changed", ""] + [f"- `{c}`" for c in changed] + [""]
    lines += ["<sub>Re-run locally: `compile-lint scan .` (findings) · `compile-lint fix --diff` (the fixes).</sub>",
              ""]
    return "\n".join(lines)


def _identity_args(repo: Path) -> tuple:
    name = git(repo, "config", "user.name", check=False)
    email = git(repo, "config", "user.email", check=False)
    out = ()
    if not name:
        out += ("-c", f"user.name={FALLBACK_IDENTITY[0]}")
    if not email:
        out += ("-c", f"user.email={FALLBACK_IDENTITY[1]}")
    return out


def _default_remote(repo: Path, base: Optional[str]) -> Optional[str]:
    if base:
        r = git(repo, "config", f"branch.{base}.remote", check=False)
        if r:
            return r
    remotes = (git(repo, "remote", check=False) or "").split()
    return "origin" if "origin" in remotes else (remotes[0] if remotes else None)


# ------------------------------------------------------------------------------------------- the flow
def fix_pr(options: ScanOptions, repo=None, fixer: Optional[Fixer] = None, *, push: bool = False,
           open_pr: bool = False, remote: Optional[str] = None, base: Optional[str] = None,
           body_file=None, return_to_base: bool = True, unsafe: bool = False) -> PRResult:
    repo_in = Path(repo or (options.paths[0] if options.paths else ".")).absolute()
    repo_in = repo_in if repo_in.is_dir() else repo_in.parent
    top = git(repo_in, "rev-parse", "--show-toplevel", check=False)
    if not top:
        raise GitError(f"{repo_in} is not inside a git checkout: `fix --pr` needs one")
    root = Path(top)
    dirty, _ = _changed(root)
    if dirty:
        raise GitError(f"the work tree has uncommitted changes ({', '.join(dirty[:3])}"
                       f"{', ...' if len(dirty) > 3 else ''}): commit or stash them first")
    start = git(root, "rev-parse", "--abbrev-ref", "HEAD")
    start = None if start == "HEAD" else start
    head = git(root, "rev-parse", "--short", "HEAD")
    branch = BRANCH_PREFIX + head
    if git(root, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", check=False):
        raise GitError(f"branch {branch} exists already (a previous run on this commit): delete it with "
                       f"`git branch -D {branch}` to redo")
    base = base or start
    before = scan(options)
    _, untracked_before = _changed(root)  # after the scan: its cache directory is not a fix
    fixer = fixer or default_fixer()
    try:
        applied = list(fixer(before, options) or [])
    except BaseException:
        _restore(root, untracked_before)
        raise
    mod, new = _changed(root)
    cache = Path(options.cache_dir).absolute() if options.cache_dir else None
    new = [p for p in new if p not in set(untracked_before) and not _is_cache(root / p, cache)]
    changed = sorted(set(mod) | set(new))
    if not changed:
        return PRResult(None, base, None, "", None, "", applied=applied, remaining=before.findings,
                        message="nothing to fix: no safe fix changed a file")
    after = scan(options)
    after_fps = Counter(_fps(after.findings, root))
    fixed = []
    for f, fp in zip(before.findings, _fps(before.findings, root)):
        if after_fps[fp] > 0:
            after_fps[fp] -= 1
        else:
            fixed.append(f)
    n = len(fixed)
    title = f"compile-lint: fix {n} torch.compile hazard{'s' if n != 1 else ''}"
    body = pr_body(fixed, after.findings, applied, changed, root, head, before.trace_rules_source, unsafe)
    msg_lines = [title, "", f"Applied by `compile-lint fix --pr` on top of {head}.", ""]
    msg_lines += [f"- {f.rule} {_rel(f.path, root)}:{f.line} {f.callee or f.qualname}" for f in fixed[:50]]
    msg_lines += ["", f"Remaining after a re-scan: {len(after.findings)} finding(s)."]
    try:
        git(root, "checkout", "-q", "-b", branch)
        git(root, "add", "--", *changed)
        git(root, *_identity_args(root), "commit", "-q", "--no-verify", "-m", "\n".join(msg_lines))
    except GitError:
        if start:
            git(root, "checkout", "-q", "-f", start, check=False)
            git(root, "branch", "-D", branch, check=False)
        _restore(root, untracked_before)
        raise
    commit = git(root, "rev-parse", "HEAD")
    gitdir = Path(git(root, "rev-parse", "--absolute-git-dir"))
    bf = Path(body_file).absolute() if body_file else gitdir / "compile-lint" / f"pr-body-{head}.md"
    bf.parent.mkdir(parents=True, exist_ok=True)
    bf.write_text(body)
    res = PRResult(branch, base, commit, body, bf, title, fixed, after.findings, changed, applied)
    remote = remote or _default_remote(root, base)
    push_cmd = ["git", "push", "-u", remote or "origin", branch]
    gh_cmd = ["gh", "pr", "create", "--head", branch, "--title", title, "--body-file", str(bf)]
    if base:
        gh_cmd[3:3] = ["--base", base]
    if push:
        if remote is None:
            raise GitError("--push: this checkout has no remote (add one with `git remote add origin URL`)")
        git(root, "push", "--no-verify", "-q", "-u", remote, branch)
        res.pushed = True
    else:
        res.commands.append(shlex.join(push_cmd))
    if open_pr and res.pushed and shutil.which("gh"):
        p = subprocess.run(gh_cmd, cwd=str(root), capture_output=True, text=True, timeout=300)
        if p.returncode == 0:
            res.opened = True
            res.message = p.stdout.strip()
        else:
            res.commands.append(shlex.join(gh_cmd))
            res.message = f"gh pr create failed: {(p.stderr or p.stdout).strip()}"
    else:
        res.commands.append(shlex.join(gh_cmd))
    if return_to_base and start:
        git(root, "checkout", "-q", start)
    return res


def _is_cache(path: Path, cache: Optional[Path]) -> bool:
    if ".compile_lint_cache" in path.parts:
        return True
    if cache is None:
        return False
    try:
        path.absolute().relative_to(cache)
        return True
    except ValueError:
        return False


def _restore(root: Path, untracked_before: list) -> None:
    """Undo a fixer's edits in the work tree (tracked files back to HEAD, new files removed)."""
    git(root, "checkout", "-q", "--", ".", check=False)
    _, new = _changed(root)
    keep = set(untracked_before)
    for p in new:
        if p not in keep:
            try:
                os.unlink(root / p)
            except OSError:
                pass


def report(res: PRResult, echo=print) -> None:
    """What the command prints."""
    if res.branch is None:
        echo(f"compile-lint: {res.message}")
        return
    echo(f"compile-lint: committed {len(res.changed_files)} file(s) on branch {res.branch} "
         f"({len(res.fixed)} hazard(s) fixed, {len(res.remaining)} remaining); PR body: {res.body_file}")
    if res.pushed:
        echo(f"compile-lint: pushed {res.branch}")
    if res.opened:
        echo(f"compile-lint: opened {res.message}")
    elif res.commands:
        if res.message:
            echo(f"compile-lint: {res.message}")
        echo("compile-lint: to open the pull request:" if res.pushed or len(res.commands) > 1 else
             "compile-lint: next:")
        for c in res.commands:
            echo(f"  {c}")


# ------------------------------------------------------------------------------------------- command line
def run_pr_command(options: ScanOptions, *, push: bool = False, open_pr: bool = False, remote=None, base=None,
                   body_file=None, unsafe: bool = False, fix_in=None, op_namespace=None,
                   fixer: Optional[Fixer] = None) -> int:
    """What ``compile-lint fix --pr`` runs; prints the PR body and the result; returns the exit code."""
    import click

    from .config import setting

    if open_pr and not push:
        push = True  # a PR needs the branch on the remote
    fixer = fixer or default_fixer(unsafe=unsafe, fix_in=fix_in or setting("fix_in") or None,
                                   op_namespace=op_namespace or setting("op_namespace"))
    res = fix_pr(options, fixer=fixer, push=push, open_pr=open_pr, remote=remote, base=base, body_file=body_file,
                 unsafe=unsafe)
    if res.branch is not None:
        click.echo(res.body)
    report(res, echo=lambda m: click.echo(m, err=True))
    return 0
