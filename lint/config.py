"""Configuration: ``[tool.compile-lint]`` in ``pyproject.toml``, or a file named with ``--config``.

The project file is found by walking up from the first scanned path (then the working directory) to the
first ``pyproject.toml`` that has a ``[tool.compile-lint]`` table (like ruff, a ``pyproject.toml`` without
the table does not stop the walk).  A file passed with ``--config`` may be a ``pyproject.toml`` or a plain
TOML file holding the keys at its top level (or under ``[tool.compile-lint]``).

Every key is checked: an unknown key or a value of the wrong type is one clear message and exit code 2.
Command-line flags override the file.  Relative paths in the file are relative to the file's directory.
"""
from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from .engine import ScanError

try:  # Python 3.11+
    import tomllib as _toml
except ImportError:  # pragma: no cover - Python 3.10
    try:
        import tomli as _toml  # type: ignore
    except ImportError:
        _toml = None

CODE_RE = re.compile(r"^(CL[0-9]{0,3}|\*)$")
ARCH_RE = re.compile(r"^sm_?[0-9]{2,3}[a-z]?$")
CUDA_RE = re.compile(r"^[0-9]+\.[0-9]+$")
ENTRY_RE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
WHATS = ("callable", "forward", "class-forward")


class ConfigError(ScanError):
    """A bad configuration file: one line, exit code 2."""


@dataclass
class Config:
    path: Optional[Path] = None  # the file the settings came from (None: no file)
    select: list = field(default_factory=list)
    ignore: list = field(default_factory=list)
    per_file_ignores: list = field(default_factory=list)  # [(base dir, glob, (codes...))]
    exclude: list = field(default_factory=list)
    entry_points: list = field(default_factory=list)
    region_models: list = field(default_factory=list)  # FrameworkModel
    models: list = field(default_factory=list)  # model classes served (registry fallbacks, like --model)
    assume: list = field(default_factory=list)  # Assumption (lint/program/facts.py)
    env: list = field(default_factory=list)  # (name, value)
    env_complete: bool = False
    not_installed: list = field(default_factory=list)  # module names
    target_arch: Optional[str] = None
    cuda_version: Optional[str] = None
    fix_in: list = field(default_factory=list)
    op_namespace: Optional[str] = None
    cache_dir: Optional[Path] = None
    search_path: list = field(default_factory=list)
    python: Optional[str] = None
    baseline: Optional[Path] = None
    strict: bool = False  # `--strict`: an unanalysed compiled region exits 2
    show_disabled: bool = False  # `--show-disabled`: the hazards inside torch.compiler.disable'd code, as notes

    @property
    def base(self) -> Path:
        return self.path.parent if self.path else Path.cwd()


# ------------------------------------------------------------------------------------------- finding the file
def _read_toml(path: Path) -> dict:
    if _toml is None:  # pragma: no cover
        raise ConfigError(f"{path}: reading TOML needs Python 3.11+ or the 'tomli' package")
    try:
        with open(path, "rb") as fh:
            return _toml.load(fh)
    except OSError as e:
        raise ConfigError(f"cannot read config file {path}: {e.strerror or e}") from None
    except Exception as e:  # tomllib.TOMLDecodeError
        raise ConfigError(f"{path}: invalid TOML: {e}") from None


def find_config(start: Optional[Path] = None) -> Optional[Path]:
    """The nearest ``pyproject.toml`` with a ``[tool.compile-lint]`` table, walking up from ``start``."""
    start = Path(start or Path.cwd()).absolute()
    d = start if start.is_dir() else start.parent
    for cand in (d, *d.parents):
        f = cand / "pyproject.toml"
        if f.is_file():
            try:
                data = _read_toml(f)
            except ConfigError:
                raise
            if isinstance(data.get("tool"), dict) and "compile-lint" in data["tool"]:
                return f
    return None


def load_config(path: Optional[Path] = None, start: Optional[Path] = None) -> Config:
    """Load ``path`` (an explicit ``--config``) or the file found from ``start``; an empty Config if none."""
    explicit = path is not None
    if path is None:
        path = find_config(start)
        if path is None and start is not None:  # a scanned path outside the project: the working directory's
            path = find_config(Path.cwd())
        if path is None:
            return Config()
    path = Path(path).absolute()
    if explicit and not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    data = _read_toml(path)
    tool = data.get("tool") if isinstance(data.get("tool"), dict) else None
    if tool is not None and "compile-lint" in tool:
        table, where = tool["compile-lint"], "[tool.compile-lint]"
    elif path.name == "pyproject.toml":
        if explicit:
            raise ConfigError(f"{path}: no [tool.compile-lint] table")
        return Config()
    else:
        table, where = data, "top level"
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.compile-lint] must be a table")
    return parse_config(table, path, where)


# ------------------------------------------------------------------------------------------- validation
def _err(path, key, msg):
    raise ConfigError(f"{path}: {key}: {msg}")


def _str(path, key, v) -> str:
    if not isinstance(v, str) or not v:
        _err(path, key, f"expected a non-empty string, got {v!r}")
    return v


def _str_list(path, key, v) -> list:
    if isinstance(v, str):
        v = [v]
    if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
        _err(path, key, f"expected a list of strings, got {v!r}")
    return list(v)


def _codes(path, key, v) -> list:
    out = []
    for item in _str_list(path, key, v):
        for c in (x.strip().upper() for x in item.split(",")):
            if not c:
                continue
            if not CODE_RE.match(c):
                _err(path, key, f"{c!r} is not a rule code or prefix (CL101, CL1, ...)")
            out.append(c)
    return out


def _model(path, i, raw):
    from .regions import FrameworkModel

    key = f"region-models[{i}]"
    if not isinstance(raw, dict):
        _err(path, key, "expected a table ([[tool.compile-lint.region-models]])")
    allowed = {"callee", "target", "what", "kind", "fullgraph-keyword", "fullgraph-default", "predicates"}
    unknown = sorted(set(raw) - allowed)
    if unknown:
        _err(path, f"{key}.{unknown[0]}", f"unknown key (expected one of {', '.join(sorted(allowed))})")
    if "callee" not in raw:
        _err(path, key, "missing 'callee' (the dotted name of the function that compiles its argument)")
    callee = _str(path, f"{key}.callee", raw["callee"])
    if not re.match(r"^[A-Za-z_][\w]*(\.[A-Za-z_]\w*)+$", callee):
        _err(path, f"{key}.callee", f"expected a dotted name like 'pkg.mod.func', got {callee!r}")
    kind = raw.get("kind", "call")
    if kind not in ("call", "decorator"):
        _err(path, f"{key}.kind", f"expected 'call' or 'decorator', got {kind!r}")
    t = raw.get("target", [0, "module"])
    if isinstance(t, bool):
        _err(path, f"{key}.target", f"expected an index, a keyword or [index, keyword], got {t!r}")
    if isinstance(t, int):
        target = (t, "\0")  # positional only: no keyword can match
    elif isinstance(t, str) and t.isidentifier():
        target = (1 << 30, t)  # keyword only
    elif (isinstance(t, list) and len(t) == 2 and isinstance(t[0], int) and not isinstance(t[0], bool)
          and isinstance(t[1], str) and t[1].isidentifier()):
        target = (t[0], t[1])
    else:
        _err(path, f"{key}.target", f"expected an index, a keyword or [index, keyword], got {t!r}")
    if target[0] < 0:
        _err(path, f"{key}.target", "the index must be >= 0")
    what = raw.get("what", "forward")
    if not isinstance(what, str) or not (what in WHATS or re.match(r"^subclass-method:[A-Za-z_]\w*$", what)):
        _err(path, f"{key}.what", f"expected one of {', '.join(WHATS)} or 'subclass-method:<name>', got {what!r}")
    fk = raw.get("fullgraph-keyword", "fullgraph")
    if fk is False:
        fk = None
    elif not isinstance(fk, str) or not fk.isidentifier():
        _err(path, f"{key}.fullgraph-keyword", f"expected a keyword name or false, got {fk!r}")
    fd = raw.get("fullgraph-default")
    if fd is not None and not isinstance(fd, bool):
        _err(path, f"{key}.fullgraph-default", f"expected true or false, got {fd!r}")
    preds = raw.get("predicates", {})
    if isinstance(preds, list):  # [["*.is_capturing", true], ...]
        try:
            preds = {str(k): v for k, v in preds}
        except (TypeError, ValueError):
            _err(path, f"{key}.predicates", "expected a table of name = true/false")
    if not isinstance(preds, dict) or not all(isinstance(v, bool) for v in preds.values()):
        _err(path, f"{key}.predicates", f"expected a table of name = true/false, got {preds!r}")
    return FrameworkModel(callee, target, what, fk, fd, tuple(preds.items()), kind)


def _resolve(base: Path, p: str) -> Path:
    q = Path(os.path.expanduser(p))
    return q if q.is_absolute() else (base / q)


KEYS = ("select", "ignore", "per-file-ignores", "exclude", "extend-exclude", "entry-points", "region-models",
        "target-arch", "cuda-version", "fix-in", "op-namespace", "cache-dir", "search-path", "python", "baseline",
        "fix", "models", "strict", "assume", "env", "env-complete", "not-installed", "show-disabled")
# [tool.compile-lint.fix]: read by compile_lint.fixers.config; checked here so a typo is an error too
FIX_KEYS = ("op-namespace", "hoist-to", "fix-in", "fakes")


def _fix_table(path, v: object, cfg: Config) -> None:
    if not isinstance(v, dict):
        _err(path, "fix", "expected a table ([tool.compile-lint.fix])")
    for k in v:
        if k not in FIX_KEYS:
            raise ConfigError(f"{path}: unknown key '{k}' in [tool.compile-lint.fix] "
                              f"(known keys: {', '.join(FIX_KEYS)})")
    if "op-namespace" in v:
        ns = _str(path, "fix.op-namespace", v["op-namespace"])
        if not ns.isidentifier():
            _err(path, "fix.op-namespace", f"expected a Python identifier, got {ns!r}")
        cfg.op_namespace = cfg.op_namespace or ns
    if "hoist-to" in v and v["hoist-to"] not in ("import", "init"):
        _err(path, "fix.hoist-to", f"expected 'import' or 'init', got {v['hoist-to']!r}")
    if "fix-in" in v:
        cfg.fix_in = cfg.fix_in or _str_list(path, "fix.fix-in", v["fix-in"])
    if "fakes" in v:
        fakes = v["fakes"]
        if not isinstance(fakes, dict) or not all(
                isinstance(x, str) or (isinstance(x, list) and x and all(isinstance(y, str) for y in x))
                for x in fakes.values()):
            _err(path, "fix.fakes", 'expected a table of "callee" = "same-as:<arg>" | "module:function" '
                                    '(or a list of them, one per `when`)')


def parse_config(table: dict, path: Path, where: str = "[tool.compile-lint]") -> Config:
    path = Path(path)
    base = path.parent
    cfg = Config(path=path)
    for key in table:
        if key not in KEYS:
            close = [k for k in KEYS if k.replace("-", "_") == key or k == key.replace("_", "-")]
            hint = f" (did you mean '{close[0]}'?)" if close else f" (known keys: {', '.join(KEYS)})"
            raise ConfigError(f"{path}: unknown key '{key}' in {where}{hint}")
    t = table
    if "select" in t:
        cfg.select = _codes(path, "select", t["select"])
    if "ignore" in t:
        cfg.ignore = _codes(path, "ignore", t["ignore"])
    if "per-file-ignores" in t:
        pfi = t["per-file-ignores"]
        if not isinstance(pfi, dict):
            _err(path, "per-file-ignores", 'expected a table of "glob" = ["CL101", ...]')
        for glob, codes in pfi.items():
            cfg.per_file_ignores.append((str(base), glob, tuple(_codes(path, f"per-file-ignores.{glob!r}", codes))))
    # Both add to what is always skipped (.gitignore'd files, VCS and virtual-environment folders, caches):
    # `extend-exclude` is ruff's spelling, `exclude` the original one.  A bare name ("tests") skips every
    # directory of that name; a path is relative to this file.
    for key in ("exclude", "extend-exclude"):
        for e in _str_list(path, key, t[key]) if key in t else ():
            cfg.exclude.append(e if ("/" not in e and os.sep not in e) else str(_resolve(base, e)))
    if "strict" in t:
        if not isinstance(t["strict"], bool):
            _err(path, "strict", f"expected true or false, got {t['strict']!r}")
        cfg.strict = t["strict"]
    if "show-disabled" in t:
        if not isinstance(t["show-disabled"], bool):
            _err(path, "show-disabled", f"expected true or false, got {t['show-disabled']!r}")
        cfg.show_disabled = t["show-disabled"]
    if "entry-points" in t:
        for e in _str_list(path, "entry-points", t["entry-points"]):
            if not ENTRY_RE.match(e):
                _err(path, "entry-points", f"expected 'module:qualname', got {e!r}")
            cfg.entry_points.append(e)
    if "region-models" in t:
        rm = t["region-models"]
        if not isinstance(rm, list):
            _err(path, "region-models", "expected an array of tables ([[tool.compile-lint.region-models]])")
        cfg.region_models = [_model(path, i, raw) for i, raw in enumerate(rm)]
    if "target-arch" in t:
        v = _str(path, "target-arch", t["target-arch"])
        if not ARCH_RE.match(v):
            _err(path, "target-arch", f"expected a GPU architecture like 'sm90' or 'sm120', got {v!r}")
        cfg.target_arch = v
    if "cuda-version" in t:
        v = t["cuda-version"]
        if isinstance(v, float):
            v = str(v)
        v = _str(path, "cuda-version", v)
        if not CUDA_RE.match(v):
            _err(path, "cuda-version", f"expected 'X.Y' like '12.9', got {v!r}")
        cfg.cuda_version = v
    if "fix-in" in t:
        cfg.fix_in = _str_list(path, "fix-in", t["fix-in"])
    if "op-namespace" in t:
        v = _str(path, "op-namespace", t["op-namespace"])
        if not v.isidentifier():
            _err(path, "op-namespace", f"expected a Python identifier (the torch.library namespace), got {v!r}")
        cfg.op_namespace = v
    if "cache-dir" in t:
        cfg.cache_dir = _resolve(base, _str(path, "cache-dir", t["cache-dir"]))
    if "search-path" in t:
        cfg.search_path = [str(_resolve(base, p)) for p in _str_list(path, "search-path", t["search-path"])]
    if "python" in t:
        v = _str(path, "python", t["python"])
        cfg.python = str(_resolve(base, v)) if ("/" in v or os.sep in v) else v
    if "baseline" in t:
        cfg.baseline = _resolve(base, _str(path, "baseline", t["baseline"]))
    if "fix" in t:
        _fix_table(path, t["fix"], cfg)
    if "models" in t:
        cfg.models = _str_list(path, "models", t["models"])
    _facts_keys(path, t, cfg)
    return cfg


def _facts_keys(path, t: dict, cfg: Config) -> None:
    """``assume = {"server_args.quantization" = "modelopt_fp4"}``, ``env = {"FLASHINFER_X" = "1"}``,
    ``env-complete = true``: the user's facts about the deployment (lint/program/facts.py)."""
    from .program.facts import FactError, parse_assumption, parse_env

    for key, parse in (("assume", parse_assumption), ("env", parse_env)):
        if key not in t:
            continue
        if not isinstance(t[key], dict):
            _err(path, key, f'expected a table of "{"EXPR" if key == "assume" else "NAME"}" = value')
        try:
            got = [parse(k, v) for k, v in t[key].items()]
        except FactError as e:
            _err(path, key, str(e))
        setattr(cfg, key, got)
    if "env-complete" in t:
        if not isinstance(t["env-complete"], bool):
            _err(path, "env-complete", f"expected true or false, got {t['env-complete']!r}")
        cfg.env_complete = t["env-complete"]
    if "not-installed" in t:
        from .program.facts import parse_module_name

        try:
            cfg.not_installed = [parse_module_name(m) for m in _str_list(path, "not-installed", t["not-installed"])]
        except FactError as e:
            _err(path, "not-installed", str(e))


# ------------------------------------------------------------------------------------------- applying
def per_file_ignored(per_file_ignores: list, path: str, rule: str) -> bool:
    """True when a ``per-file-ignores`` glob matching ``path`` lists a prefix of ``rule``."""
    for base, glob, codes in per_file_ignores:
        rel = os.path.relpath(path, base) if base else path
        rel = rel.replace(os.sep, "/")
        g = glob.replace(os.sep, "/")
        hit = fnmatch.fnmatchcase(rel, g) or fnmatch.fnmatchcase(path.replace(os.sep, "/"), g)
        if not hit and "/" not in g:
            hit = fnmatch.fnmatchcase(os.path.basename(path), g)
        if not hit and g.startswith("**/"):
            hit = fnmatch.fnmatchcase(rel, g[3:])
        if hit and any(c == "*" or rule.startswith(c) for c in codes):
            return True
    return False


def apply_config(opts, cfg: Config, given: set):
    """Fill ``ScanOptions`` fields from ``cfg`` where the command line did not set them (``given``: the
    names of the click parameters that came from the command line)."""
    from .regions import FRAMEWORK_MODELS

    if "select" not in given and cfg.select:
        opts.select = list(cfg.select)
    if "ignore" not in given and cfg.ignore:
        opts.ignore = list(cfg.ignore)
    elif cfg.ignore:  # --ignore adds to the file's list, like ruff's --extend-ignore
        opts.ignore = list(opts.ignore) + [c for c in cfg.ignore if c not in opts.ignore]
    if cfg.exclude:
        opts.exclude = list(opts.exclude) + [e for e in cfg.exclude if e not in opts.exclude]
    if cfg.entry_points:
        opts.entries = list(opts.entries) + [e for e in cfg.entry_points if e not in opts.entries]
    if cfg.region_models:
        known = {m.callee for m in cfg.region_models}
        opts.framework_models = tuple(m for m in FRAMEWORK_MODELS if m.callee not in known) + tuple(
            cfg.region_models)
    if not opts.models and cfg.models:
        opts.models = list(cfg.models)
    if "target_arch" not in given and cfg.target_arch:
        opts.target_arch = cfg.target_arch
    if "cuda_version" not in given and cfg.cuda_version:
        opts.cuda_version = cfg.cuda_version
    if "cache_dir" not in given and cfg.cache_dir is not None and opts.cache_dir is not None:
        opts.cache_dir = Path(cfg.cache_dir)  # every cache there (lint/cachedirs.py), as with --cache-dir
        if hasattr(opts, "shared_cache_dir"):
            opts.shared_cache_dir = None
    if cfg.search_path:
        opts.search_path = list(opts.search_path) + [p for p in cfg.search_path if p not in opts.search_path]
    if "python" not in given and cfg.python:
        opts.python = cfg.python
    if hasattr(opts, "assume"):  # the command line's facts win over the file's for the same EXPR / NAME
        have = {a.expr for a in opts.assume}
        opts.assume = [a for a in cfg.assume if a.expr not in have] + list(opts.assume)
        have = {n for n, _ in opts.env}
        opts.env = [e for e in cfg.env if e[0] not in have] + list(opts.env)
        opts.env_complete = opts.env_complete or cfg.env_complete
        opts.not_installed = list(opts.not_installed) + [m for m in cfg.not_installed if m not in opts.not_installed]
    if hasattr(opts, "show_disabled"):
        opts.show_disabled = opts.show_disabled or cfg.show_disabled
    if cfg.per_file_ignores and hasattr(opts, "per_file_ignores"):
        opts.per_file_ignores = list(getattr(opts, "per_file_ignores") or []) + list(cfg.per_file_ignores)
    return opts


# ------------------------------------------------------------------------------------------- click glue
CTX_KEY = "compile_lint.config"


def config_for_context(ctx) -> Config:
    """Load (once per command) the config for a click context: ``--config`` or the file found from the first
    scanned path.  Stored in ``ctx.meta`` so other parts of the command (fixers, baseline) can read it."""
    if ctx is None:
        return Config()
    if CTX_KEY in ctx.meta:
        return ctx.meta[CTX_KEY]
    explicit = ctx.meta.get(CTX_KEY + ".path")
    paths = ctx.params.get("paths") or ctx.params.get("roots") or ()
    start = Path(paths[0]) if paths else Path.cwd()
    if not start.exists():
        start = Path.cwd()
    cfg = load_config(Path(explicit) if explicit else None, start=start)
    ctx.meta[CTX_KEY] = cfg
    return cfg


def given_params(ctx) -> set:
    """Names of the parameters that were set on the command line (or through an environment variable)."""
    import click

    out = set()
    if ctx is None:
        return out
    for name in ctx.params:
        src = ctx.get_parameter_source(name)
        if src in (click.core.ParameterSource.COMMANDLINE, click.core.ParameterSource.ENVIRONMENT):
            out.add(name)
    return out


def remember_config_path(ctx, param, value):
    """click callback for ``--config``: remember the path; it is read when the options are built."""
    if value is not None:
        ctx.meta[CTX_KEY + ".path"] = value
    return value


def configure(opts, ctx=None):
    """Apply the configuration of the current click command to ``opts`` (a ``ScanOptions``)."""
    import click

    ctx = ctx or click.get_current_context(silent=True)
    if ctx is None:
        return opts
    cfg = config_for_context(ctx)
    return apply_config(opts, cfg, given_params(ctx))


def setting(name: str, cli_value=None, ctx=None):
    """A config setting that is not a ScanOptions field (``fix_in``, ``op_namespace``, ``baseline``), with the
    command-line value taking precedence when given."""
    import click

    if cli_value not in (None, (), []):
        return cli_value
    ctx = ctx or click.get_current_context(silent=True)
    cfg = config_for_context(ctx) if ctx is not None else Config()
    return getattr(cfg, name)
