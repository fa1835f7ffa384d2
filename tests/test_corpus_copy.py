"""tests/corpus is a copy of the shared measured corpus: it must not drift from it (when it is present)."""
import filecmp
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "corpus"
SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"


@pytest.mark.skipif(not SHARED.exists(), reason="../shared/corpus is not present on this machine")
def test_copy_matches_shared_corpus():
    def files(root):
        return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)

    ours = [f for f in files(HERE) if f != "README.md"]
    theirs = [f for f in files(SHARED) if f != "README.md"]
    assert ours == theirs, "run `python scripts/sync_corpus.py`"
    _, mismatch, errors = filecmp.cmpfiles(HERE, SHARED, theirs, shallow=False)
    assert not mismatch and not errors, f"changed upstream: {mismatch}; run `python scripts/sync_corpus.py`"
    assert (HERE / "README.md").read_text().startswith((SHARED / "README.md").read_text())
