"""Summarise fixproof.py's results as the Markdown table of docs/gpu-results.md.

Usage: python3 summarize.py FIX_REPORT.json RESULTS.jsonl [MORE.jsonl ...]
FIX_REPORT.json: what the fix changed and the scan's verdicts before/after ({"apis": [...], "before": {api: [status,
"RULE path:line"]}, "after": {api: [status, conditions]}}).  A later RESULTS file overrides an earlier one for the
same case.  An API passes when the fixed package's eager result equals the original's, the compiled call
(fullgraph=True) equals eager, and the CUDA graph captured on static inputs, replayed on new inputs, equals eager
on those inputs (bitwise where eager is deterministic, shapes and dtypes otherwise).
"""
import json
import sys


def rel(p):
    i = p.rfind("/flashinfer/")
    return p[i + 1:] if i >= 0 else p


def passed(a):
    return (a.get("eager") == "ok" and a.get("eager_vs_orig") is True and a.get("fullgraph") == "COMPILES"
            and a.get("compiled_vs_eager") is True and a.get("capture") == "ok" and a.get("replay") == "ok"
            and a.get("replay_vs_eager") is True)


def main():
    report = json.load(open(sys.argv[1]))
    fixed = set(report["apis"])
    recs = {}
    for fn in sys.argv[2:]:
        for line in open(fn):
            r = json.loads(line)
            if "before" in r or "after" in r:
                recs[r["case"]] = r
    rows, n_pass, n_before_fail, n_stop_match, by_api = [], 0, 0, 0, {}
    for name, r in sorted(recs.items(), key=lambda kv: kv[1]["api"]):
        if r["api"] not in fixed:
            continue
        b, a = r.get("before", {}), r.get("after", {})
        status, hazard = report["before"].get(r["api"], ["?", None])
        pred = None
        if hazard:
            rule, _, where = hazard.partition(" ")
            pred = f"{rule} {rel(where)}"
        stop = (b.get("fullgraph_error") or {}).get("innermost_fi")
        stop_at = ":".join(stop.split(":")[:2]) if stop else None
        match = bool(pred and stop_at and pred.split(" ", 1)[1] == stop_at)
        ok = passed(a)
        by_api.setdefault(r["api"], []).append(ok)
        n_pass += ok
        n_before_fail += b.get("fullgraph") == "FAILS"
        n_stop_match += match
        why = ""
        if not ok:
            err = a.get("fullgraph_error") or a.get("graph_error") or a.get("eager_error") or {}
            why = (err.get("msg") or a.get("harness") or r.get("harness") or "")[:120].replace("|", "/")
            if not why:
                why = ", ".join(k for k in ("eager_vs_orig", "compiled_vs_eager", "replay_vs_eager") if a.get(k) is False)
        after_status = report["after"].get(r["api"], ["?"])[0]
        rows.append(f"| `{name}` | {b.get('fullgraph', b.get('eager', '-'))} at `{stop or '-'}` | "
                    f"{'=' if match else ('`' + pred + '`' if pred else '-')} | {a.get('eager_vs_orig', '-')} | "
                    f"{a.get('fullgraph', '-')} | {a.get('capture', '-')}/{a.get('replay', '-')} | "
                    f"{a.get('replay_vs_eager', '-')} | {a.get('compare', '-')} | {after_status} | "
                    f"{'**pass**' if ok else 'fail: ' + why} |")
    print("| case | before: fullgraph, Dynamo's innermost FlashInfer frame | compile-lint's first hazard (= same line) "
          "| after: eager = original | fullgraph | CUDA graph capture/replay | replay on new inputs = eager | compared "
          "| re-scan | result |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    apis_pass = sum(1 for v in by_api.values() if all(v))
    print(f"\n{len(rows)} cases of {len(by_api)} fixed APIs: {n_pass} cases pass; {apis_pass} APIs pass every case; "
          f"before the fix {n_before_fail} cases FAIL under fullgraph, at compile-lint's first hazard line in "
          f"{n_stop_match}.")


if __name__ == "__main__":
    main()
