"""Each rule carries its own examples (Fixit style): `invalid` ones must be flagged with that rule, `valid`
ones must not, nor `fixed` ones (the invalid hazard with the rule's fix advice applied; that they compile is
tests/test_fix_advice.py's oracle).  Also checks every rule is documented in ruff's order."""
import textwrap

import pytest

from compile_lint.engine import ScanOptions, scan
from compile_lint.rules import ALL_RULES

EXAMPLES = [(code, kind, i, src) for code, r in ALL_RULES.items()
            for kind, srcs in (("invalid", r.invalid), ("valid", r.valid), ("fixed", r.fixed))
            for i, src in enumerate(srcs)]


@pytest.mark.parametrize("code,kind,i,src", EXAMPLES, ids=[f"{c}-{k}-{i}" for c, k, i, _ in EXAMPLES])
def test_rule_example(code, kind, i, src, tmp_path):
    (tmp_path / "example.py").write_text(textwrap.dedent(src))
    result = scan(ScanOptions(paths=[tmp_path], use_environment=False))
    codes = {f.rule for f in result.findings}
    if kind == "invalid":
        assert code in codes, [f"{f.rule} {f.line} {f.message}" for f in result.findings]
    else:
        assert code not in codes, [f"{f.rule} {f.line} {f.message}" for f in result.findings]


@pytest.mark.parametrize("code", sorted(ALL_RULES))
def test_rule_is_documented(code):
    r = ALL_RULES[code]
    doc = r.documentation()
    for heading in ("## What it does", "## Why is this bad", "## Example", "## How to fix", "## Fix safety"):
        assert heading in doc
    assert r.what and r.why and r.example.strip() and r.fix
    assert r.kind in ("break", "silent", "note")
    if r.kind == "break":
        assert r.dynamo.exception and r.dynamo.gb, "a break names the exception and GB id Dynamo raises"


def test_rules_have_examples_where_they_have_sinks():
    missing = [c for c, r in ALL_RULES.items() if (r.calls or r.enters) and not r.invalid]
    assert missing == []


def test_break_rules_with_a_hazard_example_show_their_fix_applied():
    """Issue [D] item 5: every rule that stops Dynamo and has an `invalid` example has a `fixed` one too."""
    missing = [c for c, r in ALL_RULES.items() if r.kind == "break" and r.invalid and not r.fixed]
    assert missing == []


def test_fixed_examples_mark_their_region():
    """A `fixed` example not flagged because it compiles nothing would prove nothing: each marks `f` as a region
    (the lazy module-level `torch.compile(f, ...)` the oracle ignores)."""
    unmarked = [f"{c}-fixed-{i}" for c, r in ALL_RULES.items() for i, src in enumerate(r.fixed)
                if "torch.compile(f" not in src]
    assert unmarked == []
