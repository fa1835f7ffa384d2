"""The ``compile-lint`` console script.  A run for the warm daemon (``scan``/``precommit`` with ``--daemon``)
is sent before the analyzer is imported: importing it (lint/cli.py and what it loads) took 0.2 s of the
client's side of each answer, which needs only the socket (lint/daemon.py).  Anything else, or no daemon
answering, runs lint/cli.py's ``entry``."""
from __future__ import annotations

import os
import sys


def entry():  # pragma: no cover - the console script; tests run it as a user does (tests/test_daemon.py)
    if len(sys.argv) > 2 and sys.argv[1] in ("scan", "precommit") and "--daemon" in sys.argv[2:]:
        from .daemon import run_in_daemon

        code = run_in_daemon([a for a in sys.argv[1:] if a != "--daemon"])
        if code is not None:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            except (OSError, ValueError):  # a closed pipe: nothing more to say
                pass
            os._exit(code)  # (nothing of the analyzer to free: cli._leave's reason holds here too)
        print("compile-lint: no daemon running (`compile-lint daemon start`): scanning in this process",
              file=sys.stderr)
    from .cli import entry as run

    run()
