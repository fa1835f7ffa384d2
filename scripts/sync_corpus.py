#!/usr/bin/env python
"""Refresh tests/corpus from the shared, measured corpus (../shared/corpus by default).

    python scripts/sync_corpus.py [SOURCE]

Copies cases/, expected.json and README.md, keeping the provenance note at the end of the README.
"""
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEST = ROOT / "tests" / "corpus"
NOTE_MARKER = "\n---\n**Provenance of this copy.**"


def main(src: Path) -> int:
    if not (src / "expected.json").exists():
        print(f"sync_corpus: {src} is not a corpus (no expected.json)", file=sys.stderr)
        return 2
    readme = (DEST / "README.md").read_text()
    note = readme[readme.index(NOTE_MARKER):] if NOTE_MARKER in readme else ""
    shutil.rmtree(DEST / "cases", ignore_errors=True)
    shutil.copytree(src / "cases", DEST / "cases", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(src / "expected.json", DEST / "expected.json")
    (DEST / "README.md").write_text((src / "README.md").read_text() + note)
    print(f"sync_corpus: copied {len(list((DEST / 'cases').glob('c*.py')))} cases from {src}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "corpus"))
