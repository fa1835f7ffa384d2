"""Suppression comments that suppress nothing (``# compile-lint: ignore[...]`` / ``# noqa: CL...``)."""
from compile_lint.ruledef import NOTE, DynamoOutcome, Rule

UNUSED_SUPPRESSION = Rule(
    code="CL302",
    name="unused-suppression",
    kind=NOTE,
    message="unused suppression `{callee}`",
    dynamo=DynamoOutcome("", None, "none (a comment that matched no finding in this scan)"),
    what="Reports `# compile-lint: ignore[...]`, `# noqa: CL...` and `# compile-lint: ignore-file[...]` comments "
         "in the scanned files that suppressed no finding in this scan.",
    why="A suppression outlives the hazard it was written for: once the call is fixed or moved, the comment "
        "stays and would silently hide a new hazard on the same line. Codes that the scan did not run (outside "
        "`--select`) are not reported.",
    example='''
import torch

def f(x):
    return x + 1  # compile-lint: ignore[CL101]  <- CL302: nothing to suppress here
''',
    fix="Delete the comment (or the unused codes in it). To keep one on purpose, add `CL302` to its codes.",
)

RULES = (UNUSED_SUPPRESSION,)
