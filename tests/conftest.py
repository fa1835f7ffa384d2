import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
sys.path.insert(0, str(TESTS))


@pytest.fixture
def run_scan():
    """Scan paths with the library API (no cache, no progress) and return the ScanResult."""
    from compile_lint.engine import ScanOptions, scan

    def _run(*paths, **kw):
        kw.setdefault("cache_dir", None)
        return scan(ScanOptions(paths=[Path(p) for p in paths], **kw))

    return _run
