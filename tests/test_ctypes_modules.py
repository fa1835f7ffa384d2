"""ctypes-backed vendor modules (pynvml from nvidia-ml-py, in small): the library is loaded into a module global
by an init function, its functions are taken with ``getattr(lib, name)`` and cached in a module dict.  The
real pynvml is scanned in tests/test_realworld.py (get_gpu_memory_bandwidth)."""
import textwrap

VENDOR = '''
from ctypes import *
import threading

nvmlLib = None
libLoadLock = threading.Lock()
_cache = dict()


def _get(name):
    if name in _cache:
        return _cache[name]
    _cache[name] = getattr(nvmlLib, name)
    return _cache[name]


def _load():
    global nvmlLib
    if nvmlLib == None:
        nvmlLib = CDLL("libnvidia-ml.so.1")


def nvmlInit():
    _load()
    fn = _get("nvmlInit_v2")
    ret = fn()
    return ret
'''

USER = '''
import torch
import vendor


def f(x):
    vendor.nvmlInit()
    return x + 1


f_c = torch.compile(f, fullgraph=True)
'''


def _write(tmp_path, files):
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))


def test_function_pointer_of_a_library_loaded_into_a_global_is_cl114(run_scan, tmp_path):
    _write(tmp_path, {"vendor.py": VENDOR, "user.py": USER})
    # ctypes outside the sources (no environment): `CDLL` comes from the star import
    result = run_scan(tmp_path, use_environment=False)
    hits = [f for f in result.findings if f.rule == "CL114"]
    call = textwrap.dedent(VENDOR).splitlines().index("    ret = fn()") + 1
    assert [(f.severity, f.path.rsplit("/", 1)[1], f.line, f.qualname) for f in hits] == [
        ("error", "vendor.py", call, "nvmlInit")]
    assert hits[0].callee == "ctypes.CDLL(...).<name>"
    assert "GB0156" in hits[0].dynamo  # measured: a loaded library's function called (ctypes.CDLL(...).*)
    # the load itself runs only while the global is still None: a warning under that condition
    loads = [f for f in result.findings if f.rule == "CL111" and f.callee == "ctypes.CDLL"]
    assert loads and all(f.severity == "warning" and f.conditions for f in loads)


def test_computed_getattr_of_something_else_stays_unresolved(run_scan, tmp_path):
    _write(tmp_path, {"vendor.py": VENDOR.replace('CDLL("libnvidia-ml.so.1")', "object()"), "user.py": USER})
    result = run_scan(tmp_path, use_environment=False)
    assert not [f for f in result.findings if f.rule in ("CL114", "CL111")]
