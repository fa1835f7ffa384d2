"""The api-op fixer's plan for the two rope APIs on a fresh copy of the 0.7.2.post1 wheel (+ the r4 fakes module):
one scan, then api_op.site/build for every finding the two APIs reach (no edit written)."""
import sys, time, json, tomllib
from compile_lint.engine import ScanOptions, scan
from compile_lint.fixers import FixOptions, plan_all
from compile_lint.fixers import planner, api_op
from compile_lint.library import verdicts
root = sys.argv[1]
FAKES = tomllib.load(open(sys.argv[2], "rb"))["tool"]["compile-lint"]["fix"]["fakes"]
WITHDRAWN = tomllib.load(open(sys.argv[3], "rb"))["tool"]["compile-lint"]["fix"]["withdrawn"]
so = ScanOptions(paths=[root], use_environment=False, public_api=["flashinfer"], target_arch="sm90",
                 cuda_version="13.0", torch_version="2.11", not_installed=["cutlass"])
t = time.time()
r = scan(so)
print("scan", round(time.time() - t), "s", flush=True)
APIS = ("flashinfer.rope.rope_quantize_fp8", "flashinfer.rope.mla_rope_quantize_fp8")
for v in verdicts(r):
    if v.api in APIS:
        fh = v.first_hazard
        print("VERDICT", v.api, v.status, fh and f"{fh.rule} {fh.callee} {fh.path}:{fh.line}", fh and [c.text for c in fh.conditions])
fo = FixOptions(fix_in=("flashinfer",), unsafe=True, op_namespace="flashinfer_cl", only=("api-op",), max_rounds=1, fakes=FAKES, withdrawn=WITHDRAWN)
ctx = planner.Context(r, fo)
seen = {}
n = 0
for f in r.findings:
    regs = [f.region] + list(getattr(f, "other_regions", ()) or ())
    if not any(x.qualname in APIS for x in regs):
        continue
    n += 1
    s = api_op.site(ctx, f)
    for item in (s if isinstance(s, list) else [s]):
        if not isinstance(item, tuple):
            continue
        key, payload = item
        if key[2] not in ("rope_quantize_fp8", "mla_rope_quantize_fp8") or key in seen:
            continue
        seen[key] = planner._build({}, api_op, "api-op", ctx, key, payload)
        p = seen[key]
        print("PLAN", key[2], "owner" if f.region.qualname.endswith(key[2]) else f"other (finding owned by {f.region.qualname}: {f.rule} {f.callee} {f.path}:{f.line})")
        print("   ", getattr(p, "reason", None) or getattr(p, "description", p))
print("findings reaching them", n, round(time.time() - t), "s")
