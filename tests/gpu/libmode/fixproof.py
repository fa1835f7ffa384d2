"""After-fix proof on the GPU: FlashInfer's public APIs before and after `compile-lint fix --fix-in flashinfer`.

Usage (on the device): python3 fixproof.py OUTDIR --orig SITE --fixed SITE [--deadline S] [--jobs N] [--only a,b]
                        [--apis FILE]   (one API qualname a line: the APIs the fix changed; default: every case)

For each case of cases.py (the inputs of the library-mode oracle), two fresh processes:
  orig  (PYTHONPATH=SITE of the unfixed package): the eager result on the case's inputs, saved as the reference;
        then torch.compile(f, fullgraph=True, backend="eager") -- the "before": FAILS where compile-lint predicted
        (the exception and Dynamo's innermost FlashInfer frame are recorded).
  fixed (PYTHONPATH=SITE of the fixed package): eager on the same inputs, compared with the reference; eager twice
        on the same inputs (bitwise equal: the API is deterministic here and every later comparison is bitwise,
        else shapes and dtypes only); torch.compile(f, fullgraph=True, backend="eager") on the same inputs;
        torch.cuda.CUDAGraph capture of the compiled call on static inputs, then NEW inputs (the case's code run
        again with another seed) copied into the static inputs and the graph replayed: its outputs compared with
        eager on the new inputs.
Cases of one JIT group wait until one prebuild process (fixed tree, eager only) built that group's module; the fixed
tree's unchanged files are symlinks into the original tree, so both share the JIT cache.
Results: OUTDIR/fixproof.jsonl, one JSON object per case.
"""
import json, os, subprocess, sys, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cases import CASES, COMMON  # noqa: E402

CHILD = r'''
import json, os, re, sys, time, traceback, warnings
warnings.simplefilter("ignore")
MODE, REF = sys.argv[1], sys.argv[2]
rec = {}
def emit():
    print("@@REC@@" + json.dumps(rec), flush=True)
def describe(e):
    s = str(e)
    d = {"exc": type(e).__module__ + "." + type(e).__qualname__, "msg": (s.strip().splitlines() or [""])[0][:300]}
    frames = []
    if "from user code:" in s:
        for m in re.finditer(r'File "([^"]+)", line (\d+), in (\S+)', s.split("from user code:", 1)[1]):
            frames.append((m.group(1), int(m.group(2)), m.group(3)))
    fi = []
    for f, l, n in frames:
        i = f.rfind("/flashinfer/")
        if i >= 0:
            fi.append(f"{f[i + 1:]}:{l}:{n}")
    d["innermost_fi"] = fi[-1] if fi else None
    return d
def build(seed):
    g = {}
    exec(PRE.replace("torch.manual_seed(0)", f"torch.manual_seed({seed})") + CODE, g)
    return g
try:
    import torch
    PRE = COMMON
    g0 = build(0)
    f, args = g0["f"], g0["args"]
except Exception as e:
    rec["setup"] = "fail"; rec.update(describe(e)); rec["tb"] = traceback.format_exc()[-1500:]; emit(); sys.exit(0)
def clone(a):
    if isinstance(a, torch.Tensor):
        return a.clone()
    if isinstance(a, (tuple, list)):
        return type(a)(clone(x) for x in a)
    return a
def tensors(a):
    if isinstance(a, torch.Tensor):
        return [a]
    if isinstance(a, (tuple, list)):
        return [t for x in a for t in tensors(x)]
    return []
def flat(out, args_used):
    # what an API gives back: its return value and, for in-place APIs, the arguments it wrote
    return tensors(out) + tensors(args_used)
def raw(x):
    return x.detach().contiguous().reshape(-1).view(torch.uint8)
def bitwise(a, b):  # byte for byte (NaN payloads included)
    return len(a) == len(b) and all(x.shape == y.shape and x.dtype == y.dtype and torch.equal(raw(x), raw(y))
                                    for x, y in zip(a, b))
def meta(a):
    return [[list(x.shape), str(x.dtype)] for x in a]
def sync():
    if torch.cuda.is_available():
        torch.cuda.synchronize()
def run(fn, a):
    a = clone(a)
    out = fn(*a)
    sync()
    return [t.detach().clone() for t in flat(out, a)]
if MODE == "prebuild":
    try:
        run(f, args); rec["eager"] = "ok"
    except Exception as e:
        rec["eager"] = "fail"; rec["eager_error"] = describe(e)
    emit(); sys.exit(0)
if MODE == "orig":
    try:
        ref = run(f, args); rec["eager"] = "ok"
        torch.save(ref, REF)
    except Exception as e:
        rec["eager"] = "fail"; rec["eager_error"] = describe(e); emit(); sys.exit(0)
    import torch._dynamo
    torch._dynamo.reset()
    try:
        torch.compile(f, fullgraph=True, backend="eager")(*clone(args)); sync()
        rec["fullgraph"] = "COMPILES"
    except Exception as e:
        rec["fullgraph"] = "FAILS"; rec["fullgraph_error"] = describe(e)
    emit(); sys.exit(0)
# ---- fixed
t = time.time()
try:
    e1 = run(f, args); e2 = run(f, args)
    rec["eager"] = "ok"
except Exception as e:
    rec["eager"] = "fail"; rec["eager_error"] = describe(e); rec["tb"] = traceback.format_exc()[-1500:]; emit(); sys.exit(0)
det = bitwise(e1, e2)
rec["deterministic"] = det
rec["compare"] = "bitwise" if det else "shapes+dtypes"
rec["outputs"] = meta(e1)
if os.path.exists(REF):
    ref = torch.load(REF)
    rec["eager_vs_orig"] = bitwise(e1, ref) if det else meta(e1) == meta(ref)
import torch._dynamo
torch._dynamo.reset()
try:
    cf = torch.compile(f, fullgraph=True, backend="eager")
    c1 = run(cf, args)
    rec["fullgraph"] = "COMPILES"
    rec["compiled_vs_eager"] = bitwise(c1, e1) if det else meta(c1) == meta(e1)
except Exception as e:
    rec["fullgraph"] = "FAILS"; rec["fullgraph_error"] = describe(e); rec["tb"] = traceback.format_exc()[-1500:]
    emit(); sys.exit(0)
emit()
# CUDA graph: capture the compiled call on static inputs, replay on new inputs
try:
    static = clone(args)
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            warm = clone(args); cf(*warm)
    torch.cuda.current_stream().wait_stream(s); sync()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = cf(*static)
    sync()
    rec["capture"] = "ok"
    new = build(1)["args"]
    for dst, src in zip(tensors(static), tensors(new)):
        dst.copy_(src)
    want = run(f, new)  # eager on the new inputs (before the replay writes the static in-place arguments)
    for dst, src in zip(tensors(static), tensors(new)):
        dst.copy_(src)
    graph.replay(); sync()
    got = [t.clone() for t in flat(static_out, static)]
    rec["replay"] = "ok"
    rec["new_inputs_differ"] = not bitwise(tensors(new), tensors(args))
    rec["replay_vs_eager"] = bitwise(got, want) if det else meta(got) == meta(want)
except Exception as e:
    rec.setdefault("capture", "fail"); rec["replay"] = rec.get("replay", "fail")
    rec["graph_error"] = describe(e); rec["graph_tb"] = traceback.format_exc()[-1500:]
rec["fixed_s"] = round(time.time() - t, 1)
emit()
'''


def run_child(name, mode, site, ref, timeout):
    api, group, code = CASES[name]
    src = "CODE = " + repr(code) + "\nCOMMON = " + repr(COMMON) + "\n" + CHILD
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([site, os.environ.get("FIXPROOF_DEPS", "/tmp/deps")]))
    rec = {}
    t = time.time()
    try:
        p = subprocess.run([sys.executable, "-c", src, mode, ref], capture_output=True, text=True, timeout=timeout,
                           env=env)
        for line in p.stdout.splitlines():
            if line.startswith("@@REC@@"):
                rec = json.loads(line[7:])
        if not rec:
            rec = {"harness": f"no record (rc {p.returncode})", "stderr_tail": (p.stdout + p.stderr)[-1500:]}
        elif mode == "fixed" and "fixed_s" not in rec and rec.get("fullgraph") == "COMPILES":
            rec["graph_error"] = {"msg": f"process ended during capture/replay (rc {p.returncode})",
                                  "tail": (p.stderr or "")[-800:]}
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        for line in out.splitlines():
            if line.startswith("@@REC@@"):
                rec = json.loads(line[7:])
        rec["timeout"] = timeout
    rec["wall_s"] = round(time.time() - t, 1)
    return rec


def main():
    a = sys.argv
    outdir = a[1]
    orig, fixed = a[a.index("--orig") + 1], a[a.index("--fixed") + 1]
    deadline = time.time() + float(a[a.index("--deadline") + 1]) if "--deadline" in a else 1e18
    jobs = int(a[a.index("--jobs") + 1]) if "--jobs" in a else 10
    names = list(CASES)
    if "--apis" in a:
        apis = {x.strip() for x in open(a[a.index("--apis") + 1]) if x.strip()}
        names = [n for n in names if CASES[n][0] in apis]
    if "--only" in a:
        names = [n for n in a[a.index("--only") + 1].split(",")]
    if "--skip" in a:
        skip = set(a[a.index("--skip") + 1].split(","))
        names = [n for n in names if n not in skip and CASES[n][1] not in skip]
    os.makedirs(outdir, exist_ok=True)
    os.makedirs("/tmp/fixproof-ref", exist_ok=True)
    out = open(os.path.join(outdir, "fixproof.jsonl"), "a")
    lock = threading.Lock()
    groups = []
    for n in names:
        g = CASES[n][1]
        if g and g not in groups:
            groups.append(g)
    prio = ["prefill", "decode", "sampling", "fp4", "gemm_fp8", "rope", "mxfp8", "cascade", "page", "norm"]
    groups.sort(key=lambda g: prio.index(g) if g in prio else len(prio))
    queue = [("prebuild", g, next(n for n in names if CASES[n][1] == g)) for g in groups]
    queue += [("case", CASES[n][1], n) for n in names]
    built = set()
    t0 = time.time()

    def take():
        with lock:
            for i, (mode, g, n) in enumerate(queue):
                if mode == "prebuild" or g is None or g in built:
                    return queue.pop(i)
            return None if not queue else "wait"

    def worker():
        while True:
            job = take()
            if job is None:
                return
            if job == "wait":
                time.sleep(0.5)
                continue
            mode, g, n = job
            left = deadline - time.time()
            rec = {"case": n, "api": CASES[n][0], "group": g}
            if left < 30:
                rec["harness"] = "skipped: device deadline"
            elif mode == "prebuild":
                rec.update(mode="prebuild", **{"fixed": run_child(n, "prebuild", fixed, "", min(420, left - 5))})
            else:
                ref = f"/tmp/fixproof-ref/{n}.pt"
                rec["before"] = run_child(n, "orig", orig, ref, min(150, left - 5))
                left = deadline - time.time()
                rec["after"] = run_child(n, "fixed", fixed, ref, min(150, left - 5)) if left > 20 else {
                    "harness": "skipped: device deadline"}
            with lock:
                if mode == "prebuild":
                    built.add(g)
                rec["t_end"] = round(time.time() - t0, 1)
                out.write(json.dumps(rec) + "\n")
                out.flush()
                b, f = rec.get("before", {}), rec.get("after", rec.get("fixed", {}))
                print(f"[{rec['t_end']:6.1f}s] {mode:8s} {n:40s} before={b.get('fullgraph')} "
                      f"after={f.get('fullgraph') or f.get('eager') or f.get('harness')} eq={f.get('eager_vs_orig')} "
                      f"cg={f.get('capture')}/{f.get('replay')} rep={f.get('replay_vs_eager')} {f.get('compare', '')} "
                      f"{(f.get('fullgraph_error') or f.get('graph_error') or f.get('eager_error') or {}).get('msg', '')}"[:400],
                      flush=True)

    ts = [threading.Thread(target=worker) for _ in range(jobs)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print(f"done in {time.time() - t0:.1f}s", flush=True)


if __name__ == "__main__":
    main()
