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


def _private_user_cache() -> None:
    """The suite never writes into the real user cache directory (lint/cachedirs.py): the environment's
    caches (trace rules, library summaries) go to one temporary directory per session, inherited by every
    CLI subprocess.  A test of the default location sets the variable itself."""
    import os
    import tempfile

    if not os.environ.get("COMPILE_LINT_TEST_KEEP_USER_CACHE"):
        os.environ["COMPILE_LINT_CACHE_DIR"] = tempfile.mkdtemp(prefix="cl-user-cache-")


_private_user_cache()
