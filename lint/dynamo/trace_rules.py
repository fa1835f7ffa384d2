"""Dynamo's inline/skip decision data, applied without importing torch.

``torch._dynamo.trace_rules`` decides, per callee, whether Dynamo inlines it or
skips it (``check_file``), and which torch functions go straight into the FX
graph (``get_torch_obj_rule_map``).  Those rules are private and change between
torch releases, so this module:

* holds :data:`DUMP_SOURCE`, a self-contained program that, run by an
  interpreter that has torch (``python -c DUMP_SOURCE``), prints the decision
  data as plain JSON (module names, path prefixes, dotted function names);
* applies that data to dotted module names or file paths
  (:class:`TraceRules`) mirroring ``check_file``'s order;
* finds the data for a given interpreter (:func:`load_trace_rules`): a live
  dump from its installed torch (cached on disk), or the bundled snapshot
  ``data/trace_rules_snapshot.json`` when torch is missing or the dump fails.

Nothing here imports torch in the calling process; stdlib only.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping

__all__ = [
    "DUMP_SOURCE",
    "PROBE_SOURCE",
    "JSON_MARKER",
    "SNAPSHOT_PATH",
    "SkipDecision",
    "TraceRules",
    "load_trace_rules",
    "load_snapshot",
    "clear_memo",
]

SNAPSHOT_PATH = Path(__file__).parent / "data" / "trace_rules_snapshot.json"

#: Prefix of the stdout line that carries the JSON (importing torch may print).
JSON_MARKER = "@@COMPILE_LINT_JSON@@"

#: Bumped when the dump's layout changes (part of the cache key).
DUMP_FORMAT = 1

DUMP_TIMEOUT_S = 120.0
PROBE_TIMEOUT_S = 30.0

# ---------------------------------------------------------------------------
# Code that runs inside the interpreter that has torch.
#
# Self-contained: only `sys` at top level; everything else is imported inside
# the function, after '' (the subprocess's cwd) is dropped from sys.path, so a
# stray logging.py / torch/ in the working directory can't shadow anything.
# Must stay valid on every Python torch supports (3.9+): no match, no `X | Y`
# at runtime.  Every torch attribute is feature-detected; absent ones are
# listed under "missing" instead of failing.
# ---------------------------------------------------------------------------
DUMP_SOURCE = r'''
import sys

JSON_MARKER = "@@COMPILE_LINT_JSON@@"
DUMP_FORMAT = 1


def dump_trace_rules():
    """Return torch._dynamo.trace_rules' decision data as a JSON-able dict."""
    import importlib.util
    import os
    import sysconfig
    from pathlib import Path

    def as_posix(path):
        # torch._dynamo.trace_rules._as_posix_path
        p = Path(os.path.normpath(path)).as_posix()
        if path.endswith((os.path.sep, "/")):
            p += "/"
        return p

    def module_dir(m):
        # torch._dynamo.trace_rules._module_dir (+ _strip_init_py)
        f = getattr(m, "__file__", None)
        if not f:
            return None
        if f.endswith("__init__.py"):
            f = f[: -len("__init__.py")]
        return as_posix(f)

    def rel_of(module_name, path):
        # "re" + ".../re/" -> "re/"; "abc" + ".../abc.py" -> "abc.py"
        base = module_name.replace(".", "/")
        if path.endswith("/"):
            return base + "/"
        return base + os.path.splitext(path)[1]

    out = {
        "format": DUMP_FORMAT,
        "python": "%d.%d.%d" % tuple(sys.version_info[:3]),
        "python_executable": sys.executable,
        "platform": sys.platform,
        "missing": [],
    }
    missing = out["missing"]

    import torch

    out["torch_version"] = str(getattr(torch, "__version__", "unknown"))
    import torch._dynamo.trace_rules as tr

    torch_dir = module_dir(torch)
    out["torch_dir"] = torch_dir
    out["trace_rules_file"] = as_posix(tr.__file__)
    try:
        out["trace_rules_mtime"] = os.stat(tr.__file__).st_mtime
    except OSError:
        out["trace_rules_mtime"] = None
    paths = sysconfig.get_paths()
    out["stdlib_dir"] = as_posix(paths.get("stdlib") or os.path.dirname(os.__file__)) + "/"
    out["site_dirs"] = sorted(
        {as_posix(p) + "/" for p in (paths.get("purelib"), paths.get("platlib")) if p}
    )
    out["sys_path"] = [as_posix(p) + "/" for p in sys.path if p]

    def get(name, default=None):
        if hasattr(tr, name):
            return getattr(tr, name)
        missing.append(name)
        return default

    def names(v):
        if v is None:
            return []
        if callable(v) and not isinstance(v, (list, tuple, set, frozenset, dict)):
            v = v()
        return sorted({x if isinstance(x, str) else getattr(x, "__name__", str(x)) for x in v})

    # -- module lists -------------------------------------------------------
    builtin_mods = list(get("BUILTIN_SKIPLIST", ()) or ())
    out["builtin_skiplist"] = names(builtin_mods)
    out["thirdparty_skiplist"] = names(get("THIRDPARTY_SKIPLIST", ()))
    out["mod_inlinelist"] = names(get("MOD_INLINELIST", ()))
    out["legacy_mod_inlinelist"] = names(get("LEGACY_MOD_INLINELIST", ()))
    out["mod_skiplist"] = names(get("MOD_SKIPLIST", ()))

    # -- SKIP_DIRS, classified back into module terms -----------------------
    by_dir = {}
    for m in builtin_mods:
        if isinstance(m, str):
            try:
                m = __import__(m)
            except Exception:
                continue
        d = module_dir(m)
        if d:
            by_dir[as_posix(d)] = ("builtin", m.__name__)
    thirdparty_dirs = []
    for name in out["thirdparty_skiplist"]:
        # what trace_rules.add(name) does: find_spec, strip __init__.py
        try:
            spec = importlib.util.find_spec(name)
        except Exception:
            spec = None
        origin = getattr(spec, "origin", None) if spec else None
        if not origin or origin in ("built-in", "frozen", "namespace"):
            continue
        d = origin[: -len("__init__.py")] if origin.endswith("__init__.py") else origin
        d = as_posix(d)
        by_dir.setdefault(d, ("thirdparty", name))
        thirdparty_dirs.append({"module": name, "rel": rel_of(name, d), "path": d})
    out["thirdparty_skip_dirs"] = thirdparty_dirs

    skip_dirs = []
    for d in list(get("SKIP_DIRS", ()) or ()):
        d = str(d)
        entry = {"raw": d}
        kind = by_dir.get(d)
        if kind:
            entry.update(kind=kind[0], module=kind[1], rel=rel_of(kind[1], d))
        elif torch_dir and d.startswith(torch_dir):
            rel = "torch/" + d[len(torch_dir):]
            mod = os.path.splitext(rel.rstrip("/"))[0].replace("/", ".")
            entry.update(kind="torch", module=mod, rel=rel)
        elif os.path.isabs(d):
            entry.update(kind="abs")
        else:
            entry.update(kind="raw")
        skip_dirs.append(entry)
    out["skip_dirs"] = skip_dirs

    biwc = []
    for d in sorted(get("BUILTIN_INLINE_WHEN_CALLED", ()) or ()):
        d = str(d)
        kind = by_dir.get(as_posix(d))
        if kind:
            biwc.append({"raw": d, "module": kind[1], "rel": rel_of(kind[1], d)})
        else:
            biwc.append({"raw": d, "module": None, "rel": None})
    out["builtin_inline_when_called"] = biwc

    force = []
    for f in sorted(get("FORCE_SKIP_FILES", ()) or ()):
        f = str(f)
        if torch_dir and f.startswith(torch_dir):
            force.append("torch/" + f[len(torch_dir):])
        else:
            force.append(f)
    out["force_skip_files"] = force

    import unittest

    out["unittest_dir"] = module_dir(unittest)
    try:
        from torch._dynamo import config

        out["enable_trace_unittest"] = bool(getattr(config, "enable_trace_unittest", False))
        out["skip_torchrec"] = bool(getattr(config, "skip_torchrec", False))
        out["dont_skip_tracing"] = bool(getattr(config, "dont_skip_tracing", False))
    except Exception:
        missing.append("config")
    try:
        from torch._environment import is_fbcode

        out["is_fbcode"] = bool(is_fbcode())
    except Exception:
        out["is_fbcode"] = False
    try:
        out["distributed_available"] = bool(torch.distributed.is_available())
    except Exception:
        out["distributed_available"] = None
    out["fbcode_skip_dirs"] = names(getattr(tr, "FBCODE_SKIP_DIRS", ()))
    out["fbcode_skip_torchrec_dirs"] = names(getattr(tr, "FBCODE_SKIP_TORCHREC_DIRS", ()))

    # -- the torch function rule maps (names only; no objects loaded) -------
    try:
        from torch._dynamo.variables import SkipFunctionVariable, TorchInGraphFunctionVariable
    except Exception:
        SkipFunctionVariable = TorchInGraphFunctionVariable = None
        missing.append("variables")
    maps = []
    for mname in (
        "manual_torch_name_rule_map",
        "torch_c_binding_in_graph_functions",
        "torch_non_c_binding_in_graph_functions",
    ):
        m = getattr(tr, mname, None)
        if isinstance(m, dict):
            maps.append((mname, m))
        else:
            missing.append(mname)
    if not maps:
        for i, m in enumerate(getattr(tr, "torch_name_rule_map", None) or ()):
            if isinstance(m, dict):
                maps.append(("torch_name_rule_map[%d]" % i, m))

    def is_sub(v, base):
        try:
            return base is not None and isinstance(v, type) and issubclass(v, base)
        except Exception:
            return False

    in_graph, skip_fns, manual, file_rules = set(), set(), {}, {}
    for mname, m in maps:
        for k, v in m.items():
            k = str(k)
            cls = getattr(v, "__name__", str(v))
            if ".py#" in k:
                file_rules[k] = cls
                continue
            name = k.replace("#", ".")
            if is_sub(v, TorchInGraphFunctionVariable):
                in_graph.add(name)
            elif is_sub(v, SkipFunctionVariable):
                skip_fns.add(name)
            if mname.startswith("manual"):
                manual[name] = cls
    out["in_graph_functions"] = sorted(in_graph)
    out["skip_functions"] = sorted(skip_fns)
    out["manual_rules"] = dict(sorted(manual.items()))
    out["file_rules"] = dict(sorted(file_rules.items()))
    return out


if __name__ == "__main__":
    sys.path[:] = [p for p in sys.path if p not in ("", ".")]
    import json

    print(JSON_MARKER + json.dumps(dump_trace_rules(), sort_keys=True))
'''

# Cheap: where is torch, which version, when did trace_rules.py change.
# Never imports torch.
PROBE_SOURCE = r'''
import sys


def probe_torch():
    import importlib.util
    import os
    import re

    res = {"executable": sys.executable, "python": "%d.%d.%d" % tuple(sys.version_info[:3])}
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if p not in ("", ".")]
    try:
        spec = importlib.util.find_spec("torch")
    except Exception as e:
        spec = None
        res["error"] = "%s: %s" % (type(e).__name__, e)
    finally:
        sys.path[:] = saved
    origin = getattr(spec, "origin", None) if spec else None
    if not origin or not os.path.isfile(origin):
        return res
    tdir = os.path.dirname(origin)
    res["torch_dir"] = tdir
    try:
        with open(os.path.join(tdir, "version.py"), encoding="utf-8") as f:
            m = re.search(r"^__version__\s*(?::[^=]*)?=\s*['\"]([^'\"]+)['\"]", f.read(), re.M)
        res["torch_version"] = m.group(1) if m else None
    except OSError:
        res["torch_version"] = None
    try:
        res["trace_rules_mtime"] = os.stat(os.path.join(tdir, "_dynamo", "trace_rules.py")).st_mtime
    except OSError:
        res["trace_rules_mtime"] = None
    return res


if __name__ == "__main__":
    import json

    print("@@COMPILE_LINT_JSON@@" + json.dumps(probe_torch()))
'''


# ---------------------------------------------------------------------------
# Applying the data
# ---------------------------------------------------------------------------


def _as_posix_path(path: str) -> str:
    """torch._dynamo.trace_rules._as_posix_path."""
    p = Path(os.path.normpath(path)).as_posix()
    if path.endswith((os.path.sep, "/")):
        p += "/"
    return p


@dataclass(frozen=True)
class SkipDecision:
    skipped: bool
    reason: str


_STDLIB_RE = re.compile(r"/lib/python\d+(?:\.\d+)?t?/")
_SITE_MARKERS = ("/site-packages/", "/dist-packages/")


@dataclass(frozen=True)
class TraceRules:
    torch_version: str
    source: str
    origin: str  # "installed" | "cache" | "snapshot"
    python_version: str
    builtin_skiplist: tuple[str, ...]
    thirdparty_skiplist: tuple[str, ...]
    mod_inlinelist: tuple[str, ...]
    legacy_mod_inlinelist: tuple[str, ...]
    mod_skiplist: tuple[str, ...]
    force_skip_files: tuple[str, ...]
    in_graph_functions: frozenset[str]
    skip_functions: frozenset[str]
    manual_rules: Mapping[str, str] = field(default_factory=dict, hash=False, compare=False, repr=False)
    data: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False, repr=False)

    # -- construction -------------------------------------------------------

    @classmethod
    def from_dump(cls, data: Mapping[str, Any], source: str, origin: str) -> "TraceRules":
        def t(key: str) -> tuple[str, ...]:
            return tuple(sorted(str(x) for x in (data.get(key) or ())))

        return cls(
            torch_version=str(data.get("torch_version", "unknown")),
            source=source,
            origin=origin,
            python_version=str(data.get("python", "")),
            builtin_skiplist=t("builtin_skiplist"),
            thirdparty_skiplist=t("thirdparty_skiplist"),
            mod_inlinelist=t("mod_inlinelist"),
            legacy_mod_inlinelist=t("legacy_mod_inlinelist"),
            mod_skiplist=t("mod_skiplist"),
            force_skip_files=t("force_skip_files"),
            in_graph_functions=frozenset(data.get("in_graph_functions") or ()),
            skip_functions=frozenset(data.get("skip_functions") or ()),
            manual_rules=dict(data.get("manual_rules") or {}),
            data=dict(data),
        )

    # -- derived tables (cached_property writes __dict__ directly: OK when frozen)

    @property
    def paths_valid(self) -> bool:
        """Absolute paths in the data describe this machine (live dump / cache)."""
        return self.origin in ("installed", "cache")

    @cached_property
    def _torch_root(self) -> str | None:
        td = self.data.get("torch_dir") if self.paths_valid else None
        if not td:
            return None
        return td.rstrip("/").rsplit("/", 1)[0] + "/"

    @cached_property
    def _roots(self) -> tuple[str, ...]:
        """Import roots (sys.path-like dirs), longest first."""
        if not self.paths_valid:
            return ()
        roots = set()
        for key in ("sys_path", "site_dirs"):
            roots.update(self.data.get(key) or ())
        if self.data.get("stdlib_dir"):
            roots.add(self.data["stdlib_dir"])
        if self._torch_root:
            roots.add(self._torch_root)
        roots = {r if r.endswith("/") else r + "/" for r in roots if r and r != "/"}
        return tuple(sorted(roots, key=len, reverse=True))

    @cached_property
    def _stdlib_roots(self) -> tuple[str, ...]:
        if not self.paths_valid or not self.data.get("stdlib_dir"):
            return ()
        return (self.data["stdlib_dir"],)

    @staticmethod
    def _torch_prefix(dotted: str) -> str:
        # trace_rules.get_mod_skiplist & co: torch_dir + m[len("torch."):].replace(".", "/")
        return "torch/" + dotted[len("torch.") :].replace(".", "/") if dotted.startswith("torch.") else dotted.replace(".", "/")

    @cached_property
    def _legacy_prefixes(self) -> tuple[tuple[str, str], ...]:
        return tuple((self._torch_prefix(m), m) for m in self.legacy_mod_inlinelist)

    @cached_property
    def _inline_prefixes(self) -> tuple[tuple[str, str], ...]:
        return tuple((self._torch_prefix(m), m) for m in self.mod_inlinelist)

    @cached_property
    def _skiplist_prefixes(self) -> tuple[tuple[str, str], ...]:
        return tuple((self._torch_prefix(m), m) for m in self.mod_skiplist)

    @cached_property
    def _inline_when_called(self) -> tuple[tuple[str, str], ...]:
        out = []
        for e in self.data.get("builtin_inline_when_called") or ():
            if e.get("rel"):
                out.append((e["rel"], e.get("module") or e["rel"]))
        return tuple(out)

    @cached_property
    def _skip_dir_rels(self) -> tuple[tuple[str, str, str | None], ...]:
        """(relative prefix, display name, absolute dir or None) for SKIP_DIRS entries
        that correspond to a module: builtins, third-party (by name, installed or
        not), torch files."""
        out: list[tuple[str, str, str | None]] = []
        seen = set()
        valid = self.paths_valid
        for e in self.data.get("skip_dirs") or ():
            if e.get("rel"):
                out.append((e["rel"], e.get("module") or e["rel"], e["raw"] if valid else None))
                seen.add(e.get("module"))
        for name in self.builtin_skiplist:
            if name not in seen:  # entry absent from SKIP_DIRS (e.g. frozen): by name
                out.append((name.replace(".", "/") + "/", name, None))
                out.append((name.replace(".", "/") + ".py", name, None))
                seen.add(name)
        for name in self.thirdparty_skiplist:
            if name not in seen:  # not installed where dumped: it'd be skipped once installed
                out.append((name.replace(".", "/") + "/", name, None))
                out.append((name.replace(".", "/") + ".py", name, None))
        return tuple(out)

    @cached_property
    def _skip_dirs_re(self) -> re.Pattern[str] | None:
        """SKIP_DIRS_RE over the entries that aren't module dirs ('<frozen importlib',
        'triton/backends', ...) plus, when the data is from this machine, all
        absolute entries exactly as Dynamo has them."""
        pats = []
        for e in self.data.get("skip_dirs") or ():
            kind = e.get("kind")
            if kind == "raw" or (self.paths_valid and kind != "raw"):
                pats.append(e["raw"])
        if not pats:
            return None
        return re.compile(r"^[^\s<]*(" + "|".join(re.escape(p) for p in pats) + ")")

    @cached_property
    def _skip_dirs_raw(self) -> tuple[str, ...]:
        return tuple(e["raw"] for e in self.data.get("skip_dirs") or ())

    # -- path -> import-relative path -----------------------------------------

    def _relativize(self, filename: str) -> tuple[str, str, bool] | None:
        """(root, rel, is_stdlib) for a posix path, or None if we can't place it."""
        for root in self._roots:
            if filename.startswith(root):
                return root, filename[len(root) :], root in self._stdlib_roots
        # Heuristics for paths of another machine/interpreter (snapshot mode).
        for marker in _SITE_MARKERS:
            i = filename.rfind(marker)
            if i >= 0:
                root = filename[: i + len(marker)]
                return root, filename[len(root) :], False
        m = None
        for m in _STDLIB_RE.finditer(filename):
            pass
        if m is not None:
            root = filename[: m.end()]
            return root, filename[len(root) :], True
        return None

    # -- the decision -------------------------------------------------------

    def check_file(self, path: str | None, is_inlined_call: bool = True) -> SkipDecision:
        """Mirror of torch._dynamo.trace_rules.check_file on plain data."""
        if path is None:
            return SkipDecision(True, "cannot determine source file (likely a C extension or builtin)")
        filename = _as_posix_path(path)
        placed = self._relativize(filename)
        root, rel, is_stdlib = placed if placed else ("", None, False)

        def shown(prefix: str) -> str:
            return root + prefix if placed else prefix

        if rel is not None and rel in self.force_skip_files:
            return SkipDecision(True, f"file is force-skipped ({filename})")
        if rel is not None:
            for p, _ in self._legacy_prefixes:
                if rel.startswith(p):
                    return SkipDecision(False, f"file matches LEGACY_MOD_INLINELIST ({shown(p)})")
            if is_inlined_call and any(rel.startswith(p) for p, _ in self._inline_prefixes):
                return SkipDecision(False, f"file matches MOD_INLINELIST ({filename})")
            if is_inlined_call and is_stdlib and any(rel.startswith(p) for p, _ in self._inline_when_called):
                return SkipDecision(False, f"file matches BUILTIN_INLINE_WHEN_CALLED ({filename})")
            if is_stdlib and rel.startswith("unittest/") and not self.data.get("enable_trace_unittest"):
                return SkipDecision(True, "file is in unittest directory")
        rx = self._skip_dirs_re
        if rx is not None and rx.match(filename):
            matched = next((d for d in self._skip_dirs_raw if filename.startswith(d)), filename)
            return SkipDecision(True, f"file is under skip directory ({matched})")
        if rel is not None:
            for p, name, absdir in self._skip_dir_rels:
                if not rel.startswith(p):
                    continue
                # builtin entries only apply to the stdlib; third-party/torch ones
                # only outside it
                kind_is_builtin = name in self.builtin_skiplist
                if kind_is_builtin != is_stdlib:
                    continue
                shown_dir = absdir if absdir and filename.startswith(absdir) else shown(p)
                return SkipDecision(True, f"file is under skip directory ({shown_dir})")
            for p, _ in self._skiplist_prefixes:
                if rel.startswith(p):
                    return SkipDecision(True, f"file matches MOD_SKIPLIST ({shown(p)})")
        return SkipDecision(False, "inlined by default")

    def check_module(self, module: str, is_inlined_call: bool = True) -> SkipDecision:
        """check_file for a dotted module name, whatever file it lives in.

        The module is tried both as a package (``a/b/__init__.py``) and as a
        plain module (``a/b.py``); Dynamo's prefix rules are plain string
        prefixes of the path, and this reproduces them for either layout.
        Stdlib rules (BUILTIN_SKIPLIST, unittest) apply to the stdlib's own
        names; a project module literally named ``re`` would be misjudged."""
        module = module.strip().strip(".")
        if not module:
            return SkipDecision(False, "inlined by default")
        base = module.replace(".", "/")
        forms = (base + "/__init__.py", base + ".py")

        def hit(prefixes: tuple[tuple[str, str], ...]) -> str | None:
            for p, name in prefixes:
                if any(f.startswith(p) for f in forms):
                    return name
            return None

        if any(f in self.force_skip_files for f in forms):
            return SkipDecision(True, f"file is force-skipped ({module})")
        name = hit(self._legacy_prefixes)
        if name:
            return SkipDecision(False, f"file matches LEGACY_MOD_INLINELIST ({name})")
        if is_inlined_call:
            name = hit(self._inline_prefixes)
            if name:
                return SkipDecision(False, f"file matches MOD_INLINELIST ({module})")
            name = hit(self._inline_when_called)
            if name:
                return SkipDecision(False, f"file matches BUILTIN_INLINE_WHEN_CALLED ({name})")
        if (module == "unittest" or module.startswith("unittest.")) and not self.data.get("enable_trace_unittest"):
            return SkipDecision(True, "file is in unittest directory")
        for p, name, _ in self._skip_dir_rels:
            if any(f.startswith(p) for f in forms):
                return SkipDecision(True, f"file is under skip directory ({name})")
        if module == "triton.backends" or module.startswith("triton.backends."):
            return SkipDecision(True, "file is under skip directory (triton/backends)")
        name = hit(self._skiplist_prefixes)
        if name:
            return SkipDecision(True, f"file matches MOD_SKIPLIST ({name})")
        return SkipDecision(False, "inlined by default")

    def module_skip_reason(self, module: str, is_inlined_call: bool = True) -> str | None:
        """None if Dynamo inlines functions defined in `module`, else its reason."""
        d = self.check_module(module, is_inlined_call)
        return d.reason if d.skipped else None

    def file_skip_reason(self, path: str, is_inlined_call: bool = True) -> str | None:
        """None if Dynamo inlines functions defined in file `path`, else its reason."""
        d = self.check_file(path, is_inlined_call)
        return d.reason if d.skipped else None

    # -- torch function rules -----------------------------------------------

    @staticmethod
    def _norm_fn(dotted: str) -> str:
        return dotted.strip().replace("#", ".")

    def is_in_graph_function(self, dotted: str) -> bool:
        """`dotted` (e.g. "torch.cuda.get_device_capability") becomes a graph node
        (TorchInGraphFunctionVariable) instead of being traced or skipped."""
        return self._norm_fn(dotted) in self.in_graph_functions

    def is_skip_function(self, dotted: str) -> bool:
        """`dotted` is explicitly mapped to SkipFunctionVariable (graph break)."""
        return self._norm_fn(dotted) in self.skip_functions

    def manual_rule(self, dotted: str) -> str | None:
        """The VariableTracker class name in manual_torch_name_rule_map, if any."""
        return self.manual_rules.get(self._norm_fn(dotted))


# ---------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------

_MEMO: dict[tuple[str, str | None, bool], TraceRules] = {}
_MEMO_LOCK = threading.Lock()
_SNAPSHOT_DATA: dict[str, Any] | None = None


def clear_memo() -> None:
    """Forget loaded rules (tests; after installing another torch)."""
    global _SNAPSHOT_DATA
    with _MEMO_LOCK:
        _MEMO.clear()
        _SNAPSHOT_DATA = None


def _snapshot_data() -> dict[str, Any]:
    global _SNAPSHOT_DATA
    if _SNAPSHOT_DATA is None:
        with open(SNAPSHOT_PATH, encoding="utf-8") as f:
            _SNAPSHOT_DATA = json.load(f)
    return _SNAPSHOT_DATA


def load_snapshot(why: str = "") -> TraceRules:
    data = _snapshot_data()
    src = f"bundled snapshot from torch {data.get('torch_version', '?')}"
    if why:
        src += f" ({why})"
    return TraceRules.from_dump(data, src, "snapshot")


def _parse_marked(stdout: str) -> Any:
    for line in reversed(stdout.splitlines()):
        if line.startswith(JSON_MARKER):
            return json.loads(line[len(JSON_MARKER) :])
    raise ValueError("no JSON line in output")


def _run_python(python: str, source: str, timeout: float) -> Any:
    return _finish_python(_start_python(python, source), timeout)


def _start_python(python: str, source: str) -> subprocess.Popen:
    """``python -c source`` started, its output read by ``_finish_python``."""
    env = dict(os.environ)
    env.setdefault("PYTHONIOENCODING", "utf-8")
    # cwd: somewhere with no stray modules; the sources also drop '' from sys.path
    return subprocess.Popen(
        [python, "-c", source],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tempfile.gettempdir(),
        env=env,
        stdin=subprocess.DEVNULL,
    )


def _finish_python(proc: subprocess.Popen, timeout: float) -> Any:
    """What ``proc`` (``_start_python``) printed after its JSON marker; ``subprocess.TimeoutExpired`` once
    ``timeout`` seconds are gone (the process killed)."""
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    if proc.returncode != 0:
        tail = (stderr or stdout or "").strip().splitlines()
        raise RuntimeError(tail[-1][:300] if tail else f"exit status {proc.returncode}")
    return _parse_marked(stdout)


def _is_this_interpreter(python: str) -> bool:
    return os.path.abspath(python) == os.path.abspath(sys.executable)


def _probe(python: str) -> dict[str, Any]:
    if _is_this_interpreter(python):
        ns: dict[str, Any] = {"__name__": "compile_lint_probe"}
        exec(compile(PROBE_SOURCE, "<compile_lint probe>", "exec"), ns)
        return ns["probe_torch"]()
    return _run_python(python, PROBE_SOURCE, PROBE_TIMEOUT_S)


def _cache_file(cache_dir: Path, python: str, probe: Mapping[str, Any]) -> Path:
    key = json.dumps(
        [
            os.path.abspath(python),
            probe.get("torch_dir"),
            probe.get("torch_version"),
            probe.get("trace_rules_mtime"),
            DUMP_FORMAT,
            hashlib.sha256(DUMP_SOURCE.encode()).hexdigest(),
        ]
    )
    digest = hashlib.sha256(key.encode()).hexdigest()[:24]
    return Path(cache_dir) / f"trace_rules-{digest}.json"


def _read_cache(path: Path) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        if isinstance(data, dict) and data.get("format") == DUMP_FORMAT and data.get("in_graph_functions"):
            return data
    except (OSError, ValueError):
        pass
    return None


def _write_cache(path: Path, data: Mapping[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        pass


class _Dump:
    """The dump of an interpreter's rules under way (``_begin_installed``): ``finish`` waits for it, caches
    it, and gives the rules (or the snapshot, saying why)."""

    def __init__(self, python: str, probe: Mapping[str, Any], cache_path: Path | None):
        self.python, self.probe, self.cache_path = python, probe, cache_path
        self.exe = probe.get("executable") or python
        self.started = time.monotonic()
        self.proc: subprocess.Popen | None = _start_python(python, DUMP_SOURCE)

    def finish(self) -> TraceRules:
        python, probe = self.python, self.probe
        try:
            data = _finish_python(self.proc, max(0.0, DUMP_TIMEOUT_S - (time.monotonic() - self.started)))
            if not isinstance(data, dict) or not data.get("in_graph_functions"):
                raise ValueError("dump has no in-graph functions")
        except subprocess.TimeoutExpired:
            return _dump_failed(python, probe, f"timed out after {DUMP_TIMEOUT_S:.0f}s")
        except Exception as e:  # noqa: BLE001
            return _dump_failed(python, probe, f"failed: {type(e).__name__}: {e}")
        finally:
            self.proc = None
        if self.cache_path is not None:
            _write_cache(self.cache_path, data)
        return TraceRules.from_dump(
            data,
            f"torch {data.get('torch_version')} installed at {data.get('torch_dir')} (via {self.exe})",
            "installed",
        )

    def close(self) -> None:
        """Stop a dump nobody will read (the scan ended first)."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
        if proc is not None:
            proc.communicate()


def _begin_installed(python: str, cache_dir: Path | None) -> "TraceRules | _Dump":
    """The rules at once where they need no dump (the cache has them, or the snapshot stands in: no
    interpreter, no torch), else the dump started."""
    try:
        probe = _probe(python)
    except FileNotFoundError:
        return load_snapshot(f"interpreter {python} not found")
    except subprocess.TimeoutExpired:
        return load_snapshot(f"{python} did not answer within {PROBE_TIMEOUT_S:.0f}s")
    except Exception as e:  # noqa: BLE001 - never raise on a broken environment
        return load_snapshot(f"could not query {python}: {type(e).__name__}: {e}")
    if not probe.get("torch_dir"):
        return load_snapshot(f"torch not importable by {python}")

    exe = probe.get("executable") or python
    cache_path = _cache_file(cache_dir, python, probe) if cache_dir is not None else None
    if cache_path is not None:
        data = _read_cache(cache_path)
        if data is not None:
            return TraceRules.from_dump(
                data,
                f"torch {data.get('torch_version')} installed at {data.get('torch_dir')} (via {exe}; cached)",
                "cache",
            )
    try:
        return _Dump(python, probe, cache_path)
    except Exception as e:  # noqa: BLE001 - never raise on a broken environment (an interpreter that cannot start)
        return _dump_failed(python, probe, f"failed: {type(e).__name__}: {e}")


def _dump_failed(python: str, probe: Mapping[str, Any], why: str) -> TraceRules:
    """The snapshot, standing in for rules the interpreter could not dump (``why``)."""
    return load_snapshot(f"dumping torch {probe.get('torch_version')} rules via {python} {why}")


def load_trace_rules(
    python: str | None = None,
    cache_dir: Path | None = None,
    use_installed: bool = True,
) -> TraceRules:
    """Dynamo's trace rules for `python` (default: this interpreter).

    With `use_installed`, the interpreter's torch is dumped in a subprocess
    (this process never imports torch) and, if `cache_dir` is given, cached
    there keyed by interpreter, torch location/version and trace_rules.py's
    mtime; a warm cache costs one find_spec (in-process for this interpreter,
    else one tiny subprocess).  Falls back to the bundled snapshot, with
    `source` saying why, whenever that fails.  Memoised per arguments.
    """
    return begin_trace_rules(python, cache_dir, use_installed).result()


class PendingTraceRules:
    """``load_trace_rules`` begun (``begin_trace_rules``): ``result()`` gives the rules, waiting for the dump
    if one is under way; ``close()`` stops a dump whose rules nobody will read."""

    def __init__(self, key: tuple, begun: "TraceRules | _Dump"):
        self._key, self._begun = key, begun

    @property
    def ready(self) -> bool:
        """The rules are there without waiting (memoised, cached, or the snapshot)."""
        return isinstance(self._begun, TraceRules)

    def result(self) -> TraceRules:
        begun = self._begun
        if isinstance(begun, _Dump):
            try:
                rules = begun.finish()
            except Exception as e:  # noqa: BLE001 - last resort
                rules = load_snapshot(f"{type(e).__name__}: {e}")
            begun = self._begun = _remember(self._key, _with_verdict_source(rules))
        return begun

    def close(self) -> None:
        if isinstance(self._begun, _Dump):
            self._begun.close()


def begin_trace_rules(
    python: str | None = None,
    cache_dir: Path | None = None,
    use_installed: bool = True,
) -> PendingTraceRules:
    """``load_trace_rules``, its dump (the one slow part: the interpreter imports torch, some 4 s) left
    running: a scan starts it first and reads the rules when its walks need them, finding the files to scan
    meanwhile.  The same rules as ``load_trace_rules`` gives."""
    py = python or sys.executable or "python3"
    key = (os.path.abspath(py), str(cache_dir) if cache_dir is not None else None, bool(use_installed))
    with _MEMO_LOCK:
        hit = _MEMO.get(key)
    if hit is not None:
        return PendingTraceRules(key, hit)
    if not use_installed:
        begun = load_snapshot("use_installed=False")
    else:
        try:
            begun = _begin_installed(py, Path(cache_dir) if cache_dir is not None else None)
        except Exception as e:  # noqa: BLE001 - last resort
            begun = load_snapshot(f"{type(e).__name__}: {e}")
    if isinstance(begun, TraceRules):
        begun = _remember(key, _with_verdict_source(begun))
    return PendingTraceRules(key, begun)


def _remember(key: tuple, rules: TraceRules) -> TraceRules:
    with _MEMO_LOCK:
        _MEMO.setdefault(key, rules)
        return _MEMO[key]


def _with_verdict_source(rules: TraceRules) -> TraceRules:
    """Say in the source string (the scan header) which measured verdict table goes with these rules."""
    from dataclasses import replace

    from .verdicts import load_verdicts

    table = load_verdicts(rules.torch_version if rules.torch_version != "unknown" else None)
    note = table.source if table is not None else "no measured Dynamo verdicts bundled"
    return replace(rules, source=f"{rules.source}; {note}")
