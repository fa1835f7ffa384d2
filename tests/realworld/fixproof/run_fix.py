"""One api-op fix round on FlashInfer 0.7.2.post1's source, the way docs/gpu-results.md's rounds were made:

    python tests/realworld/fixproof/run_fix.py DIR ROUND FAKES.toml WITHDRAWN.toml FAKES_MODULE.py

DIR gets a fresh copy of the PyPI wheel's `flashinfer/` (tests/realworld/pypi_fixtures.py's cache) plus the
maintainer's fakes module as `flashinfer/compile_lint_fakes.py`, and `DIR.orig` the same tree unfixed.  Then
library mode's verdicts (before), `fix(only=("api-op",), max_rounds=1)` with the configured fakes and withdrawn
APIs (each plan import-checked on the CPU by fixers/verify.py), the verdicts after, and in the current directory
fix-report-ROUND.json, fixed-apis-ROUND.txt and flashinfer-0.7.2.post1-fix-ROUND.diff.
"""
import json
import shutil
import subprocess
import sys
import time
import tomllib
from collections import Counter
from pathlib import Path

from compile_lint.engine import ScanOptions, scan
from compile_lint.fixers import FixOptions, fix
from compile_lint.library import verdicts

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from realworld.pypi_fixtures import fetch  # noqa: E402  (tests/ on the path)


def _verdicts(result, conditions: bool = False) -> dict:
    """{api: [status, first hazard "RULE path:line"]}, or with ``conditions`` [status, its conditions' texts]."""
    out = {}
    for v in verdicts(result):
        fh = v.first_hazard
        if conditions:
            out[v.api] = [v.status, [c.text for c in fh.conditions] if fh else []]
        else:
            out[v.api] = [v.status, f"{fh.rule} {fh.path.split('site/', 1)[-1]}:{fh.line}" if fh else None]
    return out


def main(argv) -> int:
    root, rnd, fakes_toml, withdrawn_toml, fakes_py = Path(argv[0]).resolve(), argv[1], argv[2], argv[3], argv[4]
    fix_cfg = lambda p: tomllib.load(open(p, "rb"))["tool"]["compile-lint"]["fix"]  # noqa: E731
    fakes, withdrawn = fix_cfg(fakes_toml)["fakes"], fix_cfg(withdrawn_toml)["withdrawn"]
    wheel = fetch("flashinfer-python", "0.7.2.post1")
    for d in (root, Path(str(root) + ".orig")):
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(wheel / "flashinfer", d / "flashinfer")
        shutil.copy(fakes_py, d / "flashinfer" / "compile_lint_fakes.py")
    so = ScanOptions(paths=[root], use_environment=False, public_api=["flashinfer"], target_arch="sm90",
                     cuda_version="13.0", torch_version="2.11", not_installed=["cutlass"])
    t0 = time.time()
    before_result = scan(so)
    before = _verdicts(before_result)
    print(f"scan {time.time() - t0:.0f} s", flush=True)
    fo = FixOptions(fix_in=("flashinfer",), unsafe=True, op_namespace="flashinfer_cl", only=("api-op",),
                    max_rounds=1, fakes=fakes, withdrawn=withdrawn)
    report = fix(so, fo, result=before_result)
    print(f"fix + re-scan {time.time() - t0:.0f} s", flush=True)
    after_result = report.result if report.result is not None else scan(so)
    after = _verdicts(after_result, conditions=True)
    apis = []
    for p in report.applied:
        if "the public API `" in p.description:
            apis.append(p.description.split("the public API `", 1)[1].split("`", 1)[0])
    refusals = {}
    for u in report.unfixable:
        for r in u.refusals:
            if "public API `" in r.reason:
                api = r.reason.split("public API `", 1)[1].split("`", 1)[0]
            elif r.reason.startswith("`"):
                api = r.reason[1:].split("`", 1)[0]
            else:
                continue
            refusals.setdefault(api, r.reason)
    out = {
        "flashinfer": "0.7.2.post1", "date": time.strftime("%Y-%m-%d"),
        "command": ("compile-lint fix DIR --no-environment --public-api flashinfer --fix-in flashinfer --unsafe-fixes "
                    "--op-namespace flashinfer_cl --target-arch sm90 --cuda-version 13.0 --torch-version 2.11 "
                    f"--not-installed cutlass  (tests/realworld/fixproof/run_fix.py; fakes = {Path(fakes_toml).name}, "
                    f"withdrawn = {Path(withdrawn_toml).name}; the tree: the PyPI wheel + {Path(fakes_py).name} as "
                    "flashinfer/compile_lint_fakes.py)"),
        "rounds": [f"fix(only=('api-op',)) on a fresh copy of the wheel: {report.rounds} round(s)"],
        "apis": apis,
        "before": {a: before.get(a, ["?", None]) for a in apis},
        "after": {a: after.get(a, ["?", None]) for a in apis},
        "package_before": dict(Counter(v[0] for v in before.values())),
        "package_after": dict(Counter(v[0] for v in after.values())),
        # public APIs not made ops whose verdict the fix changed: partials and aliases of a fixed API (the op is
        # made at its target), and callers of one
        "via_target": {a: [before[a], after[a]] for a in sorted(set(before) & set(after))
                       if a not in apis and before[a][0] != after[a][0]},
        "refusals": refusals,
        "skipped": [[p.description[:200], why] for p, why in report.skipped],
    }
    Path(f"fix-report-{rnd}.json").write_text(json.dumps(out, indent=1) + "\n")
    Path(f"fixed-apis-{rnd}.txt").write_text("".join(a + "\n" for a in apis))
    diff = subprocess.run(["diff", "-ruN", str(Path(str(root) + ".orig") / "flashinfer"), str(root / "flashinfer")],
                          capture_output=True, text=True).stdout
    Path(f"flashinfer-0.7.2.post1-fix-{rnd}.diff").write_text(diff)
    print(f"{len(apis)} APIs made ops; after: {Counter(after[a][0] for a in apis if a in after)}; "
          f"package {out['package_before']} -> {out['package_after']}; {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
