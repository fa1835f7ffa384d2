"""Checking a library fix the way the library's maintainers would: the fixed package still imports.

A fix inside a library (``--fix-in PKG``) that the library's own import rejects is worse than none (issue [E]:
flashinfer 0.7.2.post1, fixed in place by an earlier release, no longer imported -- a hoisted probe closed an
import cycle in ``compilation_context.py``, a hoisted loader JIT-built CUDA code at ``import flashinfer.norm``).
So before a plan that edits a ``--fix-in`` package is written, the package is imported twice, each time in a
fresh interpreter with no GPU visible (``CUDA_VISIBLE_DEVICES=""``): once as it is on disk, once with the plan's
files served in place of theirs (a meta-path finder in that process; nothing is written).  The plan is withdrawn,
and the reason reported, when

- a module that imported before no longer does (the exception is the reason), or
- the import now does work the original import did not: starts a process, loads a shared library, creates a
  directory or opens a file for writing (the interpreter's audit events, compared between the two imports).

Both imports run the library's own code, in its own process -- the analyzer itself never imports what it scans.
All library plans are checked together first (one process); only when that fails is each checked alone, and
the survivors together again.
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Optional

# the audit events that count as work at import (an import reads files: plain opens for reading do not count)
WORK_EVENTS = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
               "ctypes.dlopen", "os.mkdir")

RUNNER = r'''
import importlib, importlib.abc, importlib.util, json, os, sys
job = json.load(open(sys.argv[1]))
served = job["files"]  # module -> [path, source, is_package]
work = set(job["work_events"])
seen = []

def audit(event, args):
    if event in work or event.startswith("os.exec") or (event == "open" and len(args) > 1 and isinstance(args[1], str)
                                                        and any(c in args[1] for c in "wax+")):
        seen.append([event, str(args[0])[:200] if args else ""])

class Served(importlib.abc.SourceLoader):
    def __init__(self, path, source):
        self.path, self.source = path, source
    def get_filename(self, fullname):
        return self.path
    def get_data(self, path):  # no path_stats: the edited text is compiled, never a stale .pyc
        if path == self.path:
            return self.source.encode("utf-8")
        with open(path, "rb") as f:
            return f.read()

class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name not in served:
            return None
        p, source, is_pkg = served[name]
        return importlib.util.spec_from_file_location(
            name, p, loader=Served(p, source), submodule_search_locations=[os.path.dirname(p)] if is_pkg else None)

sys.meta_path.insert(0, Finder())
sys.path[:0] = job["roots"]
sys.dont_write_bytecode = True
sys.addaudithook(audit)
out = {}
for m in job["modules"]:
    before = len(seen)
    try:
        importlib.import_module(m)
        out[m] = {"ok": True}
    except BaseException as e:  # noqa: BLE001 -- whatever the import raised is the answer
        out[m] = {"ok": False, "error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
    out[m]["work"] = seen[before:]
print("@@IMPORTS@@" + json.dumps(out))
'''


def _module_of(path: str) -> Optional[tuple]:
    """(module name, import root, is package) of ``path``, from the packages on disk: the directories above it
    that hold an ``__init__.py`` (a generated module not yet written is named the same way)."""
    p = Path(os.path.realpath(path))
    is_pkg = p.name == "__init__.py"
    parts = [] if is_pkg else [p.stem]
    d = p.parent
    while (d / "__init__.py").exists():
        parts.insert(0, d.name)
        d = d.parent
    if not parts:
        return None
    return ".".join(parts), str(d), is_pkg


def _library_files(plan, fix_in: tuple) -> dict:
    """{path: module info} of the files ``plan`` edits inside a --fix-in package."""
    out = {}
    for path in plan.files:
        info = _module_of(path)
        if info and any(info[0] == pkg or info[0].startswith(pkg + ".") for pkg in fix_in):
            out[path] = info
    return out


def _run(python: str, served: dict, roots: list, modules: list, timeout: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="compile-lint-verify-") as tmp:
        job = Path(tmp) / "job.json"
        job.write_text(json.dumps({"files": served, "roots": roots, "modules": modules,
                                   "work_events": list(WORK_EVENTS)}))
        script = Path(tmp) / "runner.py"
        script.write_text(RUNNER)
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONDONTWRITEBYTECODE="1")
        try:
            proc = subprocess.run([python, str(script), str(job)], capture_output=True, text=True, timeout=timeout,
                                  env=env, cwd=tmp)
        except subprocess.TimeoutExpired:
            return {m: {"ok": False, "error": f"the import did not finish in {timeout:.0f} s", "work": []}
                    for m in modules}
        except OSError as e:
            return {m: {"ok": False, "error": f"cannot start {python}: {e}", "work": []} for m in modules}
    line = next((x for x in proc.stdout.splitlines() if x.startswith("@@IMPORTS@@")), None)
    if line is None:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return {m: {"ok": False, "error": f"the interpreter exited with {proc.returncode}: {tail[0]}", "work": []}
                for m in modules}
    return json.loads(line[len("@@IMPORTS@@"):])


class ImportCheck:
    """The original package's import outcome, measured once; each candidate set of plans compared with it."""

    def __init__(self, python: str, fix_in: tuple, timeout: float = 300.0):
        self.python, self.fix_in, self.timeout = python, fix_in, timeout
        self._original: dict = {}

    def library_plans(self, plans: list) -> list:
        return [p for p in plans if _library_files(p, self.fix_in)]

    def problem(self, plans: list) -> Optional[str]:
        """Why the package, with ``plans`` applied, does not import as the original does; None when it does."""
        served, roots, modules = {}, [], []
        for p in plans:
            for path, (name, root, is_pkg) in _library_files(p, self.fix_in).items():
                served[name] = [path, p.files[path], is_pkg]
                if root not in roots:
                    roots.append(root)
        for name in served:
            top = name.split(".")[0]
            for m in (top, name):
                if m not in modules:
                    modules.append(m)
        missing = [m for m in modules if m not in self._original]
        if missing:
            self._original.update(_run(self.python, {}, roots, missing, self.timeout))
        fixed = _run(self.python, served, roots, modules, self.timeout)
        for m in modules:
            before, after = self._original.get(m, {}), fixed.get(m, {})
            if before.get("ok") and not after.get("ok"):
                return f"the fixed package no longer imports: `import {m}` raises {after.get('error')}"
            new_work = [w for w in after.get("work", []) if w not in before.get("work", [])]
            if new_work:
                event, arg = new_work[0]
                return f"the fixed package does work at `import {m}` that the original does not ({event} {arg})"
        return None


def withdraw_breaking(plans: list, check: ImportCheck) -> tuple:
    """(the plans kept, [(plan, reason)] withdrawn): the library plans whose fixed package does not import as
    the original does.  Plans outside the --fix-in packages pass through unchecked."""
    library = check.library_plans(plans)
    if not library or check.problem(library) is None:
        return plans, []
    withdrawn = []
    for p in library:
        why = check.problem([p])
        if why is not None:
            withdrawn.append((p, "withdrawn: " + why))
    survivors = [p for p in library if all(p is not w for w, _ in withdrawn)]
    if survivors:
        why = check.problem(survivors)
        if why is not None:  # each imports alone, not together
            withdrawn += [(p, "withdrawn: together with the other library fixes, " + why) for p in survivors]
    gone = {id(p) for p, _ in withdrawn}
    return [p for p in plans if id(p) not in gone], withdrawn
