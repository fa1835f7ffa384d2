"""Each rule carries its own examples (Fixit style): `invalid` ones must be flagged with that rule, `valid`
ones must not.  Also checks every rule is documented in ruff's order."""
import textwrap

import pytest

from compile_lint.engine import ScanOptions, scan
from compile_lint.rules import ALL_RULES

EXAMPLES = [(code, kind, i, src) for code, r in ALL_RULES.items()
            for kind, srcs in (("invalid", r.invalid), ("valid", r.valid)) for i, src in enumerate(srcs)]


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
