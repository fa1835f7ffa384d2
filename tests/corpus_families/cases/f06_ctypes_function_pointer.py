"""nvidia-ml-py 13.610.43, pynvml.py: the library is loaded into a module global once and its functions are
looked up by name and called through ctypes function pointers (nvmlInitWithFlags' `fn(flags)`).  A foreign
function pointer stops Dynamo (GB0156 on torch 2.13).  libc stands in for libnvidia-ml."""
import ctypes
import threading

import torch

lib = None
_fn_cache = {}
_lock = threading.Lock()


def _load_library():
    global lib
    if lib is None:
        lib = ctypes.CDLL(None)


def _get_function_pointer(name):
    if name in _fn_cache:
        return _fn_cache[name]
    _fn_cache[name] = getattr(lib, name)
    return _fn_cache[name]


_load_library()
_get_function_pointer("abs")


def f(x):
    fn = _get_function_pointer("abs")
    return x + fn(-3)  # HAZARD


f_compiled = torch.compile(f, fullgraph=True, backend="eager")
