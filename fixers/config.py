"""Fixer settings from ``pyproject.toml``::

    [tool.compile-lint.fix]
    op-namespace = "myproj"            # torch.library namespace of generated ops (default "compile_lint")
    hoist-to = "init"                  # "import" (default) or "init"
    fix-in = ["flashinfer"]            # packages whose code may be edited (default: the scanned code only)

    [tool.compile-lint.fix.withdrawn]  # public APIs whose op fix failed a check on the GPU: not fixed again
    "flashinfer.sampling.softmax" = "replay differs from eager"

    [tool.compile-lint.fix.fakes]      # fakes for op boundaries the fixer cannot derive
    "flashinfer.fp4_quantize" = "same-as:input"     # output like this argument (torch.empty_like)
    "mylib.kernels.run" = "mypkg.fakes:run_fake"    # your own fake function
    # a return annotation no schema takes (a flag picks a tensor or a pair): assert the op's return, and make the
    # op cover the calls that leave the flag at its default (another value runs the original body)
    "mylib.sampling.sample" = "mypkg.fakes:sample_fake -> torch.Tensor when return_valid=False"
    # one fake per value of the flag: one op each, the public function picks by the flag (every call is an op)
    "mylib.attention.decode" = ["same-as:q when return_lse=False",
                                "mypkg.fakes:decode_lse -> tuple[torch.Tensor, torch.Tensor] when return_lse=True"]

Command-line options win over the file.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from .model import FixOptions

try:  # Python 3.11+
    import tomllib as _toml
except ImportError:  # pragma: no cover - Python 3.10
    try:
        import tomli as _toml  # type: ignore
    except ImportError:
        _toml = None


def find_pyproject(start) -> Optional[Path]:
    p = Path(start).resolve()
    if p.is_file():
        p = p.parent
    for d in (p, *p.parents):
        f = d / "pyproject.toml"
        if f.is_file():
            return f
    return None


def read_config(start) -> dict:
    f = find_pyproject(start)
    if f is None or _toml is None:
        return {}
    try:
        data = _toml.loads(f.read_text())
    except (OSError, ValueError):
        return {}
    return data.get("tool", {}).get("compile-lint", {}).get("fix", {}) or {}


def options_from_config(start, base: Optional[FixOptions] = None) -> FixOptions:
    """``base`` with every field it leaves at its default filled from the pyproject.toml above ``start``."""
    base = base or FixOptions()
    cfg = read_config(start)
    default = FixOptions()
    if cfg.get("op-namespace") and base.op_namespace == default.op_namespace:
        base.op_namespace = str(cfg["op-namespace"])
    if cfg.get("hoist-to") in ("import", "init") and base.hoist_to == default.hoist_to:
        base.hoist_to = cfg["hoist-to"]
    if cfg.get("fix-in") and not base.fix_in:
        v = cfg["fix-in"]
        base.fix_in = tuple([v] if isinstance(v, str) else v)
    withdrawn = cfg.get("withdrawn") or {}
    if isinstance(withdrawn, dict):
        merged = {str(k): str(v) for k, v in withdrawn.items()}
        merged.update(base.withdrawn)
        base.withdrawn = merged
    fakes = cfg.get("fakes") or {}
    if isinstance(fakes, dict):
        # a list: one fake per `when` (an API whose flag chooses the output's shape: one op each)
        merged = {str(k): [str(x) for x in v] if isinstance(v, list) else str(v) for k, v in fakes.items()}
        merged.update(base.fakes)
        base.fakes = merged
    return base
