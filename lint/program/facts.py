"""What the user tells the analyzer about the deployment: ``--assume EXPR=VALUE`` and the environment.

Dynamo traces one path per configuration, and the configuration is often exactly what the code cannot say:
``server_args.quantization``, which quantization method a layer holds, a backend chosen at import, an
environment variable read at trace time.  Without facts such a branch is a condition and what lies behind it
a warning (issue [B]); with them it is decided, as Dynamo decides it on the user's machine.

- ``--assume EXPR=VALUE`` (``[tool.compile-lint] assume = {EXPR = VALUE}``): every expression the resolver
  evaluates whose source text is ``EXPR``, or ends with ``.EXPR``, has that value.  A Python literal
  (``1``, ``True``, ``'modelopt_fp4'``) is that constant; a bare word that is no literal is a string
  (``server_args.quantization=modelopt_fp4``) -- except where the expression's values are objects: then it
  names their class, and only the objects of a class called so (or ending in ``.VALUE``) stay
  (``self.quant_method=ModelOptFp4LinearMethod`` picks one of 22 quantization methods).
- ``--env NAME=VALUE`` (``env = {NAME = VALUE}``): ``os.environ.get``/``os.getenv``/``os.environ[...]`` and
  ``NAME in os.environ`` read VALUE.  A variable not listed stays unknown -- unless ``--env-complete``
  (``env-complete = true``) says the listed ones are the deployment's whole environment: then any other is
  unset (Dynamo reads the environment at trace time; an unset variable decides its branch only then).
- ``--not-installed MODULE`` (``not-installed = ["cutlass"]``): the deployment does not have MODULE (nor its
  submodules), so ``try: from .kernels import rmsnorm_cute`` -- where ``.kernels`` imports ``cutlass`` --
  fails, and its ``except ImportError:`` handler runs (FlashInfer's norm falls back to its CUDA JIT kernels
  so).  Never inferred from the search path: the environment compile-lint runs in (a pre-commit hook's, a
  CI job's) is seldom the one the model is served from.

The facts are stated in the report's header, each with how many expressions it decided, so that an
assumption that matched nothing (a typo, a name the code spells otherwise) is seen, not silently void.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Optional

from ..values import Class, Const, Instance
from .locator import split_id

_EXPR_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\(\))?(\.[A-Za-z_][A-Za-z0-9_]*(\(\))?)*$")
_DOTTED_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
UNSET = object()  # an environment variable the deployment does not set (--env-complete)


class FactError(ValueError):
    """A fact that cannot be read: the message says which and why (the CLI prints it, exit 2)."""


@dataclass(frozen=True)
class Assumption:
    expr: str  # source text, e.g. "server_args.quantization" or "self.quant_method"
    raw: str  # the value as the user wrote it
    value: object  # the literal's value, or the raw word when it is none

    @property
    def is_literal(self) -> bool:
        """A constant whatever the expression's values; else a word that may name their class."""
        return not isinstance(self.value, str) or self.value != self.raw or not _DOTTED_RE.match(self.raw)

    def describe(self) -> str:
        return f"{self.expr} = {self.raw}"


def parse_assumption(text: str, value: Optional[object] = None) -> Assumption:
    """``EXPR=VALUE`` from the command line, or (``EXPR``, a TOML value) from the configuration."""
    if value is None:
        if "=" not in text:
            raise FactError(f"--assume {text!r}: expected EXPR=VALUE (e.g. server_args.quantization=modelopt_fp4)")
        text, raw = (s.strip() for s in text.split("=", 1))
    elif isinstance(value, (bool, int, float, str)):
        raw = value if isinstance(value, str) else repr(value)
    else:
        raise FactError(f"assume {text!r}: expected a string, number or boolean, got {type(value).__name__}")
    expr = text.strip()
    if not _EXPR_RE.match(expr):
        raise FactError(f"assume {expr!r}: expected a name or dotted attribute path (self.quant_method, "
                        f"server_args.quantization, envs.VLLM_USE_V1)")
    if not raw:
        raise FactError(f"assume {expr!r}: the value is empty")
    if isinstance(value, (bool, int, float)):
        return Assumption(expr, raw, value)
    if isinstance(value, str):  # a TOML string is a word: the string itself, or a class name (no re-parsing)
        return Assumption(expr, raw, raw)
    try:
        lit = ast.literal_eval(raw)
        if not isinstance(lit, (bool, int, float, str, type(None))):
            raise ValueError
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        lit = raw  # a bare word: a string, or a class name where the values are objects
    return Assumption(expr, raw, lit)


def parse_env(text: str, value: Optional[object] = None) -> tuple:
    """``NAME=VALUE`` (the command line) or (NAME, a TOML string): the variable and its value."""
    if value is None:
        if "=" not in text:
            raise FactError(f"--env {text!r}: expected NAME=VALUE (e.g. FLASHINFER_LOGLEVEL=0)")
        text, value = text.split("=", 1)
    name = text.strip()
    if not _ENV_NAME_RE.match(name):
        raise FactError(f"env {name!r}: not an environment variable name")
    if not isinstance(value, str):
        raise FactError(f"env {name!r}: expected a string value (the environment holds strings), got {value!r}")
    return name, value


@dataclass
class UserFacts:
    assumptions: tuple = ()  # Assumption
    env: tuple = ()  # (name, value)
    env_complete: bool = False
    not_installed: tuple = ()  # module names the deployment does not have (--not-installed)
    # how many expressions each fact decided (the report's header): Assumption / env name -> count
    used: dict = field(default_factory=dict, compare=False)

    def __post_init__(self):
        # an expression is matched by its last part first: the check costs a dict lookup on a miss
        self._by_tail: dict = {}
        for a in self.assumptions:
            self._by_tail.setdefault(a.expr.rsplit(".", 1)[-1].removesuffix("()"), []).append(a)
        self._env = dict(self.env)

    def __bool__(self) -> bool:
        return bool(self.assumptions or self.env or self.env_complete or self.not_installed)

    # ------------------------------------------------------------ assumptions
    def assumption_for(self, e) -> Optional[Assumption]:
        """The assumption whose EXPR is ``e``'s source text or a dotted suffix of it."""
        k = e[0]
        if k == "name":
            tail = e[1]
        elif k == "attr":
            tail = e[2]
        elif k == "call" and not e[2] and not e[3] and e[1][0] in ("name", "attr"):
            tail = e[1][1] if e[1][0] == "name" else e[1][2]
        else:
            return None
        cands = self._by_tail.get(tail)
        if not cands:
            return None
        from ..exprtext import source

        text = source(e)
        for a in cands:
            if text == a.expr or text.endswith("." + a.expr):
                return a
        return None

    def apply(self, a: Assumption, vals: frozenset, subclasses) -> frozenset:
        """The values of an expression ``a`` speaks of: the constant, or the objects of the class it names --
        among ``vals``, or a subclass of one of theirs (``self.quant_method: QuantizeMethodBase`` holds a
        ``ModelOptFp4LinearMethod``); ``subclasses(class id)`` lists the indexed ones."""
        if a.is_literal or not any(isinstance(v, (Instance, Class)) for v in vals):
            self._count((a, "constant"))
            return frozenset({Const(a.value)})
        kept = set()
        for v in vals:
            if not isinstance(v, (Instance, Class)):
                continue
            cid = v.cls if isinstance(v, Instance) else v.id
            named = [cid] if _names_class(a.raw, cid) else [s for s in subclasses(cid) if _names_class(a.raw, s)]
            kept |= {Instance(c) if isinstance(v, Instance) else Class(c) for c in named}
        if not kept:
            self._count((a, "no such class"))
            return vals  # no object of that class among them: the fact does not speak of these
        self._count((a, "class"))
        return frozenset(kept)

    # ------------------------------------------------------------ environment
    def env_value(self, name: str):
        """The variable's value, UNSET when the environment is complete and does not hold it, else None."""
        if name in self._env:
            self._count(name)
            return self._env[name]
        if self.env_complete:
            self._count("(unset variables)")
            return UNSET
        return None

    # ------------------------------------------------------------ installed packages
    def missing(self, module: str) -> bool:
        """``module`` is one the deployment does not have, or inside one."""
        for name in self.not_installed:
            if module == name or module.startswith(name + "."):
                self._count(("not installed", name))
                return True
        return False

    def _count(self, what) -> None:
        self.used[what] = self.used.get(what, 0) + 1

    def header_lines(self) -> list:
        """One line per fact for the report: what it says and how many expressions it decided."""
        out = []
        for a in self.assumptions:
            said = []
            for how, what in (("class", "chose {word} in"), ("constant", "was the value of"),
                              ("no such class", "found no {word} among the values of")):
                n = self.used.get((a, how), 0)
                if n:
                    said.append(f"{what.format(word=a.raw)} {n} expression{'s' * (n != 1)}")
            out.append(f"assume {a.describe()}: " + ("; ".join(said) or "matched no expression the walk evaluated"))
        for name, value in self.env:
            n = self.used.get(name, 0)
            out.append(f"env {name}={value}: " + (f"read {n} time{'s' * (n != 1)}" if n else "never read"))
        if self.env_complete:
            out.append("env complete: any variable not listed is unset")
        for name in self.not_installed:
            n = self.used.get(("not installed", name), 0)
            out.append(f"not installed {name}: " + (f"failed {n} import{'s' * (n != 1)} the walk met" if n
                                                   else "no import of it decided a branch"))
        return out


def parse_module_name(text: str) -> str:
    """``--not-installed`` / ``not-installed``: a dotted module name."""
    name = text.strip() if isinstance(text, str) else text
    if not isinstance(name, str) or not _DOTTED_RE.match(name):
        raise FactError(f"not-installed {text!r}: expected a module name (e.g. cutlass, flash_attn)")
    return name


def _names_class(word: str, cid: str) -> bool:
    qual = split_id(cid)[1] if ":" in cid else cid
    full = cid.replace(":", ".")
    return qual == word or full == word or full.endswith("." + word)
