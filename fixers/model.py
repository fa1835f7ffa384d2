"""The plain data the fixers exchange: options, edits, plans, reports.

A ``FixPlan`` is one fix at one place: which fixer, how safe, which file, why, the edits, and the new text of
every file it touches (with a unified diff).  Edits are declarative (``ReplaceNode``, ``AddImport``...) so that
several plans touching the same file can be rendered together in one libcst pass over the original text.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

SAFE = "safe"
UNSAFE = "unsafe"

OP_BOUNDARY = "op-boundary"
HOIST_LOAD = "hoist-load"
COMPILER_DISABLE = "compiler-disable"
FIXER_IDS = (OP_BOUNDARY, HOIST_LOAD, COMPILER_DISABLE)

GENERATED_MODULE = "_compile_lint_ops"  # the op-boundary wrappers live in <dir of the call site>/_compile_lint_ops.py


@dataclass
class FixOptions:
    """What the user asked for.  ``from_config`` merges ``[tool.compile-lint.fix]`` from pyproject.toml."""

    unsafe: bool = False  # also apply unsafe fixes (--unsafe-fixes)
    fix_in: tuple = ()  # packages whose code may be edited (--fix-in); default: the scanned code only
    op_namespace: str = "compile_lint"  # torch.library namespace of generated ops (--op-namespace)
    hoist_to: str = "import"  # "import" (module global) or "init" (attribute set in the owning __init__)
    fakes: dict = field(default_factory=dict)  # callee ("pkg.mod.fn" or "fn") -> "same-as:<arg>" | "module:function"
    # (or a list of them with `when`: one op per flag value; fixers/api_op.py)
    only: tuple = ()  # restrict to these fixer ids
    max_rounds: int = 4  # fix -> re-scan rounds (a fix can uncover a call site the first scan merged away)
    # a --fix-in plan is written only if the fixed package imports as the original does (fixers/verify.py)
    verify_imports: bool = True
    # public APIs ("pkg.mod.api") whose api-op fix failed a check outside the analyzer (eager results on the GPU
    # differ, the capture fails) -> the reason: the fixer refuses them with it ([tool.compile-lint.fix.withdrawn])
    withdrawn: dict = field(default_factory=dict)


# ----------------------------------------------------------------------------------------------------- edits
@dataclass(frozen=True)
class ReplaceNode:
    """Replace the expression whose libcst position is exactly (line, col)-(end_line, end_col) and whose code
    is ``old`` with ``new``."""

    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    old: str
    new: str

    def span(self):
        return (self.line, self.col, self.end_line, self.end_col)


@dataclass(frozen=True)
class AddImport:
    """A top-level import, added after the file's leading import block unless an identical one exists."""

    path: str
    code: str


@dataclass(frozen=True)
class InsertTopLevel:
    """Top-level statement(s) inserted after the top-level statement holding ``after_line``
    (``after_line=-1``: right after the leading import block, added imports included).  Skipped when an
    identical statement already exists at top level."""

    path: str
    after_line: int
    code: str


@dataclass(frozen=True)
class AppendToMethod:
    """Statement(s) appended to the body of ``class_qualname.method`` (used for ``__init__`` hoists)."""

    path: str
    class_qualname: str
    method: str
    code: str


@dataclass(frozen=True)
class AddDecorator:
    """An outermost decorator on the function ``func_qualname`` (skipped when already there)."""

    path: str
    func_qualname: str
    code: str


@dataclass(frozen=True)
class GeneratedBlock:
    """A block of the generated op module: ``key`` is the top-level name it defines (a block whose key is
    already defined in the file is not added again); ``imports`` go to the module's import block."""

    path: str
    key: str
    code: str
    imports: tuple = ()


@dataclass(frozen=True)
class WrapDefInOp:
    """The module-level function ``name`` becomes an op boundary: its definition (decorators, body) is renamed
    ``impl``; ``op_code`` (the op and its fake) follows it; then the public ``name`` with the original header
    and docstring and the body ``public_body``; then ``after`` (a top-level statement, may be empty)."""

    path: str
    name: str
    impl: str
    op_code: str
    public_body: str
    after: str = ""


EDIT_TYPES = (ReplaceNode, AddImport, InsertTopLevel, AppendToMethod, AddDecorator, GeneratedBlock, WrapDefInOp)


# ----------------------------------------------------------------------------------------------------- plans
@dataclass
class Refusal:
    """Why a fixer cannot fix a finding."""

    fixer: str
    reason: str
    path: str = ""
    line: int = 0


@dataclass
class FixPlan:
    fixer: str  # op-boundary | hoist-load | compiler-disable
    safety: str  # safe | unsafe
    path: str  # the file that owns the fix point (the call site, or the decorated function)
    line: int
    description: str  # what the fix does and why it is legal here
    safety_reason: str
    edits: list  # the declarative edits (see above)
    findings: list = field(default_factory=list)  # the findings it addresses
    files: dict = field(default_factory=dict)  # path -> new text (this plan alone, on the scanned text)
    originals: dict = field(default_factory=dict)  # path -> original text (None: the file is created)
    diff: str = ""
    alternatives: list = field(default_factory=list)  # other viable FixPlans for the same findings
    refusals: list = field(default_factory=list)  # Refusals of the fixers tried before this one
    key: tuple = ()

    @property
    def touched(self) -> list:
        return sorted(self.files)

    def summary(self) -> str:
        return f"{self.fixer} ({self.safety}) at {self.path}:{self.line}: {self.description.splitlines()[0]}"


@dataclass
class Unfixable:
    """A finding no fixer could address, with every fixer's reason."""

    finding: object
    refusals: list


@dataclass
class Planning:
    plans: list  # the chosen plan per fix site
    unfixable: list  # Unfixable


@dataclass
class FixReport:
    applied: list = field(default_factory=list)  # FixPlans written
    skipped: list = field(default_factory=list)  # (FixPlan, reason)
    written: list = field(default_factory=list)  # paths written (or that would be, for a dry run)
    diff: str = ""  # unified diff of everything applied
    remaining: Optional[list] = None  # findings left after the re-scan (None: no re-scan)
    unfixable: list = field(default_factory=list)
    rounds: int = 0
    result: object = None  # the last ScanResult (the re-scan, when something was written)
