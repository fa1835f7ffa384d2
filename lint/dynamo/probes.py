"""What to measure: one direct call per callee, run under ``torch.compile(fn, fullgraph=True, backend="eager")``.

The analyzer's model of Dynamo (which calls stop it, which it traces, which values it bakes) is a fact of one
torch version.  This table is the question put to that torch; ``scripts/measure_dynamo_verdicts.py`` asks it,
each probe in a fresh (forked) process, and writes the answers to ``data/verdicts-torch-<version>.json``, which
the rules read (``verdicts.py``).  Nothing here imports torch or runs anything: it is data.

A probe is keyed by the callee as the resolver spells it (``subprocess.run``, ``pathlib.Path.exists``,
``threading.Lock.__enter__`` for a ``with`` block; ``shutil.*`` for a rule's whole-module pattern, measured on
one representative member; ``name@variant`` for a second measurement of the same callee).  Its fields:

- ``setup``: module-level code run before compiling (imports, fixtures).  ``TMP`` is a fresh directory holding
  ``f.txt`` ("1.5"), ``data.json``, ``data.pkl``, a sub-directory ``d/`` (with ``d/a.txt``) and a symlink
  ``link`` to ``f.txt``; ``os``, ``sys`` are imported.
- ``call``: an expression evaluated inside the compiled function, or ``body``: statements (a ``with`` block).
- ``change``: code run between two calls of the compiled function; comparing the second result with eager's
  tells a baked value (compiled keeps the first) from a guarded one (it recompiles).  Implies ``returns``.
- ``returns``: the value is returned and compared with eager.
- ``requires``: a module that must be importable (else the verdict is ``not-installed``);
  ``min_python``: the oldest Python that has the callee (else ``not-available``).

Representative arguments are ones that succeed in eager code, and that take the hazardous path
(``Path("f.txt").absolute()`` is relative: an absolute path returns itself without calling ``os.getcwd``).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Probe:
    setup: str = ""
    call: str = ""
    body: str = ""
    change: str = ""
    returns: bool = False
    requires: str = ""
    min_python: tuple = ()


def _p(setup: str, call: str = "", **kw) -> Probe:
    return Probe(setup=setup, call=call, **kw)


_PATHS = "import pathlib\nP = pathlib.Path(TMP) / 'f.txt'\nD = pathlib.Path(TMP) / 'd'\nT = pathlib.Path(TMP)"
_STR_PATHS = "F = os.path.join(TMP, 'f.txt')\nD = os.path.join(TMP, 'd')"
_LOG = "import logging\nL = logging.getLogger('compile_lint_probe')"
_CLOCK_CHANGE = "import time as _t\n_t.sleep(0.002)"

PROBES: dict = {}

# --- CL101 subprocesses --------------------------------------------------------------------------------------
PROBES.update({
    "subprocess.run": _p("import subprocess", "subprocess.run(['true'])"),
    "subprocess.check_output": _p("import subprocess", "subprocess.check_output(['true'])"),
    "subprocess.check_call": _p("import subprocess", "subprocess.check_call(['true'])"),
    "subprocess.call": _p("import subprocess", "subprocess.call(['true'])"),
    "subprocess.Popen": _p("import subprocess", "subprocess.Popen(['true'])"),
    "subprocess.Popen.wait": _p("import subprocess\nP = subprocess.Popen(['true'])", "P.wait()"),
    "subprocess.Popen.communicate": _p("import subprocess\nP = subprocess.Popen(['true'])", "P.communicate()"),
    "subprocess.Popen.poll": _p("import subprocess\nP = subprocess.Popen(['true'])", "P.poll()"),
    "subprocess.getoutput": _p("import subprocess", "subprocess.getoutput('true')"),
    "subprocess.getstatusoutput": _p("import subprocess", "subprocess.getstatusoutput('true')"),
    "os.system": _p("", "os.system('true')"),
    "os.popen": _p("", "os.popen('true')"),
    # exec* on a missing program: eager raises FileNotFoundError instead of replacing the process
    "os.execv": _p("", "os.execv('/nonexistent/cl-probe', ['x'])"),
    "os.execve": _p("", "os.execve('/nonexistent/cl-probe', ['x'], {})"),
    "os.execvp": _p("", "os.execvp('cl-probe-nonexistent', ['x'])"),
    "os.execvpe": _p("", "os.execvpe('cl-probe-nonexistent', ['x'], {})"),
    "os.execl": _p("", "os.execl('/nonexistent/cl-probe', 'x')"),
    "os.execle": _p("", "os.execle('/nonexistent/cl-probe', 'x', {})"),
    "os.execlp": _p("", "os.execlp('cl-probe-nonexistent', 'x')"),
    "os.execlpe": _p("", "os.execlpe('cl-probe-nonexistent', 'x', {})"),
    "os.spawnv": _p("", "os.spawnv(os.P_WAIT, '/bin/true', ['true'])"),
    "os.spawnve": _p("", "os.spawnve(os.P_WAIT, '/bin/true', ['true'], {})"),
    "os.spawnl": _p("", "os.spawnl(os.P_WAIT, '/bin/true', 'true')"),
    "os.spawnle": _p("", "os.spawnle(os.P_WAIT, '/bin/true', 'true', {})"),
    "os.spawnvp": _p("", "os.spawnvp(os.P_WAIT, 'true', ['true'])"),
    "os.spawnlp": _p("", "os.spawnlp(os.P_WAIT, 'true', 'true')"),
    "os.posix_spawn": _p("", "os.posix_spawn('/bin/true', ['true'], {})"),
    "os.posix_spawnp": _p("", "os.posix_spawnp('true', ['true'], {})"),
    "os.fork": _p("", "os.fork()"),  # the runner ends any process it makes at once
    "asyncio.create_subprocess_exec": _p("import asyncio", "asyncio.create_subprocess_exec('true')"),
    "asyncio.create_subprocess_shell": _p("import asyncio", "asyncio.create_subprocess_shell('true')"),
})

# --- CL102 file system and OS queries ------------------------------------------------------------------------
_PATH_CALLS = {
    "exists": "P.exists()", "stat": "P.stat()", "lstat": "P.lstat()", "is_file": "P.is_file()",
    "is_dir": "D.is_dir()", "is_symlink": "P.is_symlink()", "is_mount": "D.is_mount()", "is_fifo": "P.is_fifo()",
    "is_socket": "P.is_socket()", "is_block_device": "P.is_block_device()",
    "is_char_device": "P.is_char_device()", "mkdir": "(T / 'new').mkdir(exist_ok=True)",
    "rmdir": "(T / 'empty').rmdir()", "unlink": "(T / 'victim').unlink()", "touch": "(T / 'touched').touch()",
    "read_text": "P.read_text()", "read_bytes": "P.read_bytes()", "write_text": "(T / 'w.txt').write_text('x')",
    "write_bytes": "(T / 'w.bin').write_bytes(b'x')", "open": "P.open()", "glob": "list(D.glob('*'))",
    "rglob": "list(D.rglob('*'))", "iterdir": "list(D.iterdir())", "resolve": "P.resolve()",
    "rename": "(T / 'victim2').rename(T / 'renamed')", "replace": "(T / 'victim3').replace(T / 'replaced')",
    "chmod": "P.chmod(0o644)", "lchmod": "P.lchmod(0o644)", "samefile": "P.samefile(P)", "owner": "P.owner()",
    "group": "P.group()", "readlink": "(T / 'link').readlink()", "symlink_to": "(T / 'sym2').symlink_to(P)",
    "hardlink_to": "(T / 'hard2').hardlink_to(P)", "absolute": "pathlib.Path('f.txt').absolute()",
    "walk": "list(T.walk())",
}
_FS_SETUP = _PATHS + ("\nfor _n in ('empty',): (T / _n).mkdir()"
                      "\nfor _n in ('victim', 'victim2', 'victim3'): (T / _n).write_text('x')")
PROBES.update({f"pathlib.Path.{m}": _p(_FS_SETUP, c, min_python=(3, 12) if m == "walk" else ())
               for m, c in _PATH_CALLS.items()})
_OS_SETUP = _STR_PATHS + ("\nos.mkdir(os.path.join(TMP, 'empty'))"
                          "\nfor _n in ('victim', 'victim2', 'w2', 'r1', 'r2', 'r3'):"
                          "\n    open(os.path.join(TMP, _n), 'w').close()"
                          "\nFD = os.open(F, os.O_RDONLY)\nWFD = os.open(os.path.join(TMP, 'w2'), os.O_WRONLY)"
                          "\nFD2 = os.open(F, os.O_RDONLY)\nL = os.path.join(TMP, 'link')")
PROBES.update({
    "os.path.exists": _p(_STR_PATHS, "os.path.exists(F)"),
    "os.path.lexists": _p(_STR_PATHS, "os.path.lexists(F)"),
    "os.path.isfile": _p(_STR_PATHS, "os.path.isfile(F)"),
    "os.path.isdir": _p(_STR_PATHS, "os.path.isdir(D)"),
    "os.path.islink": _p(_STR_PATHS, "os.path.islink(F)"),
    "os.path.ismount": _p(_STR_PATHS, "os.path.ismount(D)"),
    "os.path.getmtime": _p(_STR_PATHS, "os.path.getmtime(F)"),
    "os.path.getatime": _p(_STR_PATHS, "os.path.getatime(F)"),
    "os.path.getctime": _p(_STR_PATHS, "os.path.getctime(F)"),
    "os.path.getsize": _p(_STR_PATHS, "os.path.getsize(F)"),
    "os.path.realpath": _p(_STR_PATHS, "os.path.realpath(F)"),
    "os.path.samefile": _p(_STR_PATHS, "os.path.samefile(F, F)"),
    "os.stat": _p(_OS_SETUP, "os.stat(F)"),
    "os.lstat": _p(_OS_SETUP, "os.lstat(F)"),
    "os.listdir": _p(_OS_SETUP, "os.listdir(TMP)"),
    "os.scandir": _p(_OS_SETUP, "list(os.scandir(TMP))"),
    "os.makedirs": _p(_OS_SETUP, "os.makedirs(os.path.join(TMP, 'm', 'n'), exist_ok=True)"),
    "os.mkdir": _p(_OS_SETUP, "os.mkdir(os.path.join(TMP, 'mk'))"),
    "os.remove": _p(_OS_SETUP, "os.remove(os.path.join(TMP, 'victim'))"),
    "os.unlink": _p(_OS_SETUP, "os.unlink(os.path.join(TMP, 'victim2'))"),
    "os.rmdir": _p(_OS_SETUP, "os.rmdir(os.path.join(TMP, 'empty'))"),
    "os.removedirs": _p(_OS_SETUP, "os.removedirs(os.path.join(TMP, 'empty'))"),
    "os.rename": _p(_OS_SETUP, "os.rename(os.path.join(TMP, 'r1'), os.path.join(TMP, 'r1b'))"),
    "os.renames": _p(_OS_SETUP, "os.renames(os.path.join(TMP, 'r2'), os.path.join(TMP, 'r2b'))"),
    "os.replace": _p(_OS_SETUP, "os.replace(os.path.join(TMP, 'r3'), os.path.join(TMP, 'r3b'))"),
    "os.getcwd": _p(_OS_SETUP, "os.getcwd()"),
    "os.chdir": _p(_OS_SETUP, "os.chdir(TMP)"),
    "os.cpu_count": _p(_OS_SETUP, "os.cpu_count()"),
    "os.access": _p(_OS_SETUP, "os.access(F, os.R_OK)"),
    "os.chmod": _p(_OS_SETUP, "os.chmod(F, 0o644)"),
    "os.walk": _p(_OS_SETUP, "list(os.walk(TMP))"),
    "os.open": _p(_OS_SETUP, "os.open(F, os.O_RDONLY)"),
    "os.read": _p(_OS_SETUP, "os.read(FD, 1)"),
    "os.write": _p(_OS_SETUP, "os.write(WFD, b'x')"),
    "os.close": _p(_OS_SETUP, "os.close(FD2)"),
    "os.fsync": _p(_OS_SETUP, "os.fsync(WFD)"),
    "os.getpid": _p(_OS_SETUP, "os.getpid()"),
    "os.sched_getaffinity": _p(_OS_SETUP, "os.sched_getaffinity(0)"),
    "os.statvfs": _p(_OS_SETUP, "os.statvfs(TMP)"),
    "os.symlink": _p(_OS_SETUP, "os.symlink(F, os.path.join(TMP, 'sl'))"),
    "os.readlink": _p(_OS_SETUP, "os.readlink(L)"),
    "os.utime": _p(_OS_SETUP, "os.utime(F)"),
    "os.truncate": _p(_OS_SETUP, "os.truncate(os.path.join(TMP, 'w2'), 0)"),
    "os.link": _p(_OS_SETUP, "os.link(F, os.path.join(TMP, 'hl'))"),
    "shutil.*": _p("import shutil", "shutil.which('sh')"),
    "shutil.which": _p("import shutil", "shutil.which('sh')"),
    "shutil.copyfile": _p("import shutil\n" + _STR_PATHS, "shutil.copyfile(F, os.path.join(TMP, 'cp'))"),
    "shutil.rmtree": _p("import shutil\n" + _STR_PATHS, "shutil.rmtree(D)"),
    "shutil.disk_usage": _p("import shutil", "shutil.disk_usage(TMP)"),
    "glob.glob": _p("import glob", "glob.glob(os.path.join(TMP, '*'))"),
    "glob.iglob": _p("import glob", "list(glob.iglob(os.path.join(TMP, '*')))"),
    "fcntl.*": _p("import fcntl\nFD = os.open(os.path.join(TMP, 'f.txt'), os.O_RDONLY)",
                  "fcntl.flock(FD, fcntl.LOCK_SH)"),
    "tempfile.mkdtemp": _p("import tempfile", "tempfile.mkdtemp(dir=TMP)"),
    "tempfile.mkstemp": _p("import tempfile", "tempfile.mkstemp(dir=TMP)"),
    "tempfile.NamedTemporaryFile": _p("import tempfile", "tempfile.NamedTemporaryFile(dir=TMP)"),
    "tempfile.TemporaryFile": _p("import tempfile", "tempfile.TemporaryFile(dir=TMP)"),
    "tempfile.TemporaryDirectory": _p("import tempfile", "tempfile.TemporaryDirectory(dir=TMP)"),
    "tempfile.SpooledTemporaryFile": _p("import tempfile", "tempfile.SpooledTemporaryFile()"),
})

# --- CL103 open, CL104 file locks ----------------------------------------------------------------------------
_FILES = _STR_PATHS + ("\nimport json, pickle\nJF = open(os.path.join(TMP, 'data.json'))"
                       "\nPF = open(os.path.join(TMP, 'data.pkl'), 'rb')"
                       "\nWF = open(os.path.join(TMP, 'out.pkl'), 'wb')"
                       "\nWF2 = open(os.path.join(TMP, 'out.json'), 'w')")
PROBES.update({
    "builtins.open": _p(_STR_PATHS, "open(F)"),
    "io.open": _p("import io\n" + _STR_PATHS, "io.open(F)"),
    "codecs.open": _p("import codecs\n" + _STR_PATHS, "codecs.open(F)"),
    "json.load": _p(_FILES, "json.load(JF)"),
    "json.dump": _p(_FILES, "json.dump({'a': 1}, WF2)"),
    "pickle.load": _p(_FILES, "pickle.load(PF)"),
    "pickle.dump": _p(_FILES, "pickle.dump({'a': 1}, WF)"),
})
_LOCKFILE = "import filelock\nLP = os.path.join(TMP, 'x.lock')"
PROBES.update({
    "filelock.*": _p(_LOCKFILE, "filelock.FileLock(LP)", requires="filelock"),
    "filelock.FileLock": _p(_LOCKFILE, "filelock.FileLock(LP)", requires="filelock"),
    "filelock.SoftFileLock": _p(_LOCKFILE, "filelock.SoftFileLock(LP)", requires="filelock"),
    "filelock.UnixFileLock": _p(_LOCKFILE, "filelock.UnixFileLock(LP)", requires="filelock"),
    "filelock.FileLock.__enter__": _p(_LOCKFILE + "\nLK = filelock.FileLock(LP)", body="with LK:\n    pass",
                                      requires="filelock"),
})

# --- CL105 locks and threads ---------------------------------------------------------------------------------
_T = "import threading"
PROBES.update({
    "threading.Lock": _p(_T, "threading.Lock()"),
    "threading.RLock": _p(_T, "threading.RLock()"),
    "threading.Condition": _p(_T, "threading.Condition()"),
    "threading.Semaphore": _p(_T, "threading.Semaphore()"),
    "threading.BoundedSemaphore": _p(_T, "threading.BoundedSemaphore()"),
    "threading.Event": _p(_T, "threading.Event()"),
    "threading.Thread": _p(_T, "threading.Thread(target=None)"),
    "_thread.allocate_lock": _p("import _thread", "_thread.allocate_lock()"),
    "threading.Lock.acquire": _p(_T + "\nLK = threading.Lock()", "LK.acquire()"),
    "threading.Lock.release": _p(_T + "\nLK = threading.Lock()\nLK.acquire()", "LK.release()"),
    "threading.RLock.acquire": _p(_T + "\nLK = threading.RLock()", "LK.acquire()"),
    "threading.RLock.release": _p(_T + "\nLK = threading.RLock()\nLK.acquire()", "LK.release()"),
    "threading.Condition.acquire": _p(_T + "\nC = threading.Condition()", "C.acquire()"),
    "threading.Condition.release": _p(_T + "\nC = threading.Condition()\nC.acquire()", "C.release()"),
    "threading.Condition.wait": _p(_T + "\nC = threading.Condition()\nC.acquire()", "C.wait(0)"),
    "threading.Semaphore.acquire": _p(_T + "\nS = threading.Semaphore()", "S.acquire(blocking=False)"),
    "threading.Semaphore.release": _p(_T + "\nS = threading.Semaphore()", "S.release()"),
    "threading.Event.wait": _p(_T + "\nE = threading.Event()", "E.wait(0)"),
    "threading.Event.set": _p(_T + "\nE = threading.Event()", "E.set()"),
    "multiprocessing.Lock": _p("import multiprocessing", "multiprocessing.Lock()"),
    "queue.Queue.get": _p("import queue\nQ = queue.Queue()\nQ.put(1)", "Q.get(block=False)"),
    "queue.Queue.put": _p("import queue\nQ = queue.Queue()", "Q.put(1)"),
    "threading.Lock.__enter__": _p(_T + "\nLK = threading.Lock()", body="with LK:\n    pass"),
    "threading.RLock.__enter__": _p(_T + "\nLK = threading.RLock()", body="with LK:\n    pass"),
    "threading.Condition.__enter__": _p(_T + "\nC = threading.Condition()", body="with C:\n    pass"),
    "threading.Semaphore.__enter__": _p(_T + "\nS = threading.Semaphore()", body="with S:\n    pass"),
})

# --- CL106 clocks (a change between the calls: is a value that compiles baked?) ------------------------------
_CLOCKS = {
    "time.time": "time.time()", "time.time_ns": "time.time_ns()", "time.perf_counter": "time.perf_counter()",
    "time.perf_counter_ns": "time.perf_counter_ns()", "time.monotonic": "time.monotonic()",
    "time.monotonic_ns": "time.monotonic_ns()", "time.process_time": "time.process_time()",
    "time.process_time_ns": "time.process_time_ns()", "time.localtime": "time.localtime()",
    "time.gmtime": "time.gmtime()", "time.strftime": "time.strftime('%H:%M:%S')",
}
PROBES.update({k: _p("import time", c, change=_CLOCK_CHANGE) for k, c in _CLOCKS.items()})
PROBES.update({
    "time.sleep": _p("import time", "time.sleep(0)"),
    "datetime.datetime.now": _p("import datetime", "datetime.datetime.now()", change=_CLOCK_CHANGE),
    "datetime.datetime.utcnow": _p("import datetime", "datetime.datetime.utcnow()", change=_CLOCK_CHANGE),
    "datetime.datetime.today": _p("import datetime", "datetime.datetime.today()", change=_CLOCK_CHANGE),
    "datetime.date.today": _p("import datetime", "datetime.date.today()"),
})

# --- CL107-CL109 output ----------------------------------------------------------------------------------------
_LEVELS = ("debug", "info", "warning", "warn", "error", "exception", "critical", "fatal")
PROBES.update({f"logging.{lv}": _p("import logging", f"logging.{lv}('x')") for lv in _LEVELS})
PROBES.update({f"logging.Logger.{lv}": _p(_LOG, f"L.{lv}('x')") for lv in _LEVELS})
# Methods a library adds to logging.Logger (transformers' utils/logging.py: `logging.Logger.warning_once =
# warning_once`, an lru_cache'd function calling self.warning): measured on a Logger patched the same way.
_PATCHED_LOG = _LOG + ("\nimport functools\n@functools.lru_cache(None)\ndef _once(self, *a, **k):\n"
                       "    self.warning(*a, **k)\n"
                       "logging.Logger.warning_once = _once\nlogging.Logger.info_once = _once\n"
                       "logging.Logger.warning_advice = _once")
PROBES.update({f"logging.Logger.{m}": _p(_PATCHED_LOG, f"L.{m}('x')")
               for m in ("warning_once", "info_once", "warning_advice")})
PROBES.update({
    "logging.log": _p("import logging", "logging.log(logging.INFO, 'x')"),
    "logging.Logger.log": _p(_LOG, "L.log(logging.INFO, 'x')"),
    "builtins.print": _p("", "print('x')"),
    "warnings.warn": _p("import warnings", "warnings.warn('x')"),
    "warnings.warn_explicit": _p("import warnings", "warnings.warn_explicit('x', UserWarning, 'f.py', 1)"),
})

# --- CL110 dynamic imports, CL111 ctypes -----------------------------------------------------------------------
_MOD_FILE = "import importlib.util\nMP = os.path.join(TMP, 'cl_probe_mod.py')\nopen(MP, 'w').write('X = 1\\n')"
PROBES.update({
    "importlib.import_module": _p("import importlib", "importlib.import_module('json')"),
    "importlib.reload": _p("import importlib, json", "importlib.reload(json)"),
    "builtins.__import__": _p("", "__import__('json')"),
    "importlib.__import__": _p("import importlib", "importlib.__import__('json')"),
    "importlib.util.spec_from_file_location": _p(_MOD_FILE, "importlib.util.spec_from_file_location('m', MP)"),
    "importlib.util.module_from_spec": _p(_MOD_FILE + "\nSPEC = importlib.util.spec_from_file_location('m', MP)",
                                          "importlib.util.module_from_spec(SPEC)"),
    "ctypes.*": _p("import ctypes", "ctypes.c_int(1)"),
    "ctypes.CDLL": _p("import ctypes", "ctypes.CDLL('libc.so.6')"),
    "ctypes.PyDLL": _p("import ctypes", "ctypes.PyDLL('libc.so.6')"),
    "ctypes.cdll.LoadLibrary": _p("import ctypes", "ctypes.cdll.LoadLibrary('libc.so.6')"),
    "ctypes.pydll.LoadLibrary": _p("import ctypes", "ctypes.pydll.LoadLibrary('libc.so.6')"),
    "ctypes.util.find_library": _p("import ctypes.util", "ctypes.util.find_library('c')"),
    # a loaded library's function, called (CL114; pynvml's nvmlInit: `fn = getattr(nvmlLib, name)`, `fn(flags)`)
    "ctypes.CDLL(...).*": _p("import ctypes\nLIBC = ctypes.CDLL('libc.so.6')", "LIBC.abs(-3)"),
})

# --- CL112 host state --------------------------------------------------------------------------------------------
PROBES.update({
    "hashlib.*": _p("import hashlib", "hashlib.sha256(b'k').hexdigest()"),
    "hashlib.sha256": _p("import hashlib", "hashlib.sha256(b'k')"),
    "hashlib.md5": _p("import hashlib", "hashlib.md5(b'k')"),
    "socket.*": _p("import socket", "socket.gethostname()"),
    "socket.gethostname": _p("import socket", "socket.gethostname()"),
    # two calls: a random value that compiles may be drawn once and baked
    "random.*": _p("import random", "random.random()", change="pass"),
    "random.random": _p("import random", "random.random()", change="pass"),
    "random.randint": _p("import random", "random.randint(0, 10**9)", change="pass"),
    "random.seed": _p("import random", "random.seed(0)"),
    "random.choice": _p("import random", "random.choice(range(10**9))", change="pass"),
    "inspect.getsource": _p("import inspect, json", "inspect.getsource(json.dumps)"),
    "inspect.getsourcelines": _p("import inspect, json", "inspect.getsourcelines(json.dumps)"),
    "inspect.getfile": _p("import inspect, json", "inspect.getfile(json.dumps)"),
    "inspect.getsourcefile": _p("import inspect, json", "inspect.getsourcefile(json.dumps)"),
    "inspect.stack": _p("import inspect", "inspect.stack()"),
    "inspect.getmodule": _p("import inspect, json", "inspect.getmodule(json.dumps)"),
    "uuid.uuid1": _p("import uuid", "uuid.uuid1()"),
    "uuid.uuid4": _p("import uuid", "uuid.uuid4()"),
    "secrets.*": _p("import secrets", "secrets.token_hex(4)"),
    "os.urandom": _p("", "os.urandom(4)"),
    "json.loads": _p("import json", "json.loads('{\"a\": 1}')"),
    "zlib.*": _p("import zlib", "zlib.crc32(b'x')"),
    "getpass.getuser": _p("import getpass", "getpass.getuser()"),
    "pwd.*": _p("import pwd", "pwd.getpwuid(0)"),
    "torch.cuda.device_count": _p("import torch", "torch.cuda.device_count()"),
})

# --- CL113 JIT loads (third-party loaders are measured where installed) -------------------------------------------
PROBES.update({
    "torch.utils.cpp_extension.load": _p("import torch.utils.cpp_extension as ce",
                                         "ce.load(name='cl_probe', sources=[os.path.join(TMP, 'none.cpp')])"),
    "torch.utils.cpp_extension.load_inline": _p("import torch.utils.cpp_extension as ce",
                                                "ce.load_inline(name='cl_probe', cpp_sources=[''])"),
    "tvm_ffi.load_module": _p("import tvm_ffi", "tvm_ffi.load_module(os.path.join(TMP, 'none.so'))",
                              requires="tvm_ffi"),
    "tvm_ffi.module.load_module": _p("import tvm_ffi.module",
                                     "tvm_ffi.module.load_module(os.path.join(TMP, 'none.so'))", requires="tvm_ffi"),
    "cutlass.cute.compile": _p("import cutlass.cute", "cutlass.cute.compile(None)", requires="cutlass"),
    "cute.compile": _p("import cutlass.cute as cute", "cute.compile(None)", requires="cutlass"),
})

# --- CL201 environment reads, CL203 platform probes: silent when they compile; is the value baked? --------------
_ENV_ABSENT = "os.environ.pop('CL_PROBE_KEY', None)"
_ENV_PRESENT = "os.environ['CL_PROBE_KEY'] = '0'"
_ENV_CHANGE = "os.environ['CL_PROBE_KEY'] = '1'"
PROBES.update({
    "os.getenv": _p(_ENV_ABSENT, "os.getenv('CL_PROBE_KEY')", change=_ENV_CHANGE),
    "os.getenv@present": _p(_ENV_PRESENT, "os.getenv('CL_PROBE_KEY')", change=_ENV_CHANGE),
    "os.environ.get": _p(_ENV_ABSENT, "os.environ.get('CL_PROBE_KEY')", change=_ENV_CHANGE),
    "os.environ.get@present": _p(_ENV_PRESENT, "os.environ.get('CL_PROBE_KEY')", change=_ENV_CHANGE),
    "os.environ.__contains__": _p(_ENV_ABSENT, "'CL_PROBE_KEY' in os.environ", change=_ENV_CHANGE),
    "os.environ.__getitem__": _p(_ENV_PRESENT, "os.environ['CL_PROBE_KEY']", change=_ENV_CHANGE),
})
PROBES.update({f"platform.{fn}": _p("import platform", f"platform.{fn}()", returns=True)
               for fn in ("system", "machine", "processor", "uname", "node", "release", "version", "platform",
                          "architecture")})

# --- What the model treats as safe: pure stdlib, constant folds, path arithmetic, torch predicates -------------------
PROBES.update({f"os.path.{fn}": _p("", f"os.path.{fn}({args})") for fn, args in (
    ("join", "'a', 'b'"), ("basename", "'/a/b.txt'"), ("dirname", "'/a/b.txt'"), ("splitext", "'/a/b.txt'"),
    ("split", "'/a/b.txt'"), ("normpath", "'/a/./b/../c'"), ("isabs", "'/a'"), ("abspath", "'/a/../b'"),
    ("relpath", "'/a/b', '/a'"), ("expanduser", "'~/x'"), ("commonprefix", "['/a/b', '/a/c']"),
)})
PROBES["os.fspath"] = _p(_PATHS, "os.fspath(P)")
_PURE_PATH = {
    "__truediv__": "T / 'x'", "joinpath": "T.joinpath('x')", "name": "P.name", "suffix": "P.suffix",
    "suffixes": "P.suffixes", "stem": "P.stem", "parts": "P.parts", "parent": "P.parent",
    "parents": "list(P.parents)", "anchor": "P.anchor", "drive": "P.drive", "root": "P.root",
    "as_posix": "P.as_posix()", "as_uri": "P.as_uri()", "is_absolute": "P.is_absolute()",
    "is_relative_to": "P.is_relative_to(T)", "match": "P.match('*.txt')", "relative_to": "P.relative_to(T)",
    "with_name": "P.with_name('g.txt')", "with_stem": "P.with_stem('g')", "with_suffix": "P.with_suffix('.md')",
    "__str__": "str(P)", "__fspath__": "P.__fspath__()", "expanduser": "pathlib.Path('~/x').expanduser()",
}
PROBES.update({f"pathlib.Path.{a}": _p(_PATHS, c) for a, c in _PURE_PATH.items()})
PROBES.update({
    "pathlib.Path": _p("import pathlib", "pathlib.Path('/a', 'b')"),
    "pathlib.PurePath": _p("import pathlib", "pathlib.PurePath('/a', 'b')"),
    "pathlib.Path.home": _p("import pathlib", "pathlib.Path.home()"),
    "pathlib.Path.cwd": _p("import pathlib", "pathlib.Path.cwd()"),
    "tempfile.gettempdir": _p("import tempfile", "tempfile.gettempdir()"),
    "math.sqrt": _p("import math", "math.sqrt(2.0)"),
    "math.ceil": _p("import math", "math.ceil(2.5)"),
    "math.log2": _p("import math", "math.log2(8)"),
    "math.prod": _p("import math", "math.prod([2, 3])"),
    "math.isclose": _p("import math", "math.isclose(1.0, 1.0)"),
    "math.gcd": _p("import math", "math.gcd(12, 8)"),
    "copy.copy": _p("import copy", "copy.copy({'a': 1})"),
    "copy.deepcopy": _p("import copy", "copy.deepcopy({'a': [1]})"),
    "typing.cast": _p("import typing", "typing.cast(int, 1)"),
    "inspect.signature": _p("import inspect, json", "inspect.signature(json.dumps)"),
    "inspect.isfunction": _p("import inspect, json", "inspect.isfunction(json.dumps)"),
    "inspect.isclass": _p("import inspect", "inspect.isclass(int)"),
    "enum.Enum.value": _p("import enum\nclass Color(enum.Enum):\n    RED = 1", "Color.RED.value"),
    "enum.Enum.__call__": _p("import enum\nclass Color(enum.Enum):\n    RED = 1", "Color(1)"),
    "enum.IntEnum.__call__": _p("import enum\nclass Kind(enum.IntEnum):\n    A = 1", "Kind(Kind.A)"),
    # the member a parameter's default holds (`sfLayout: SfLayout = SfLayout.layout_128x4`, FlashInfer's
    # mxfp4_quantize): Dynamo reads it from the function's defaults, with a source -- on 2.11 this compiles
    # where a member read in the trace stops (measured on the H200, 2026-12-01)
    "enum.IntEnum.__call__@default-argument": _p("import enum\nclass Kind(enum.IntEnum):\n    A = 1\n"
                                                 "def g(k=Kind.A):\n    return Kind(k)", "g()"),
    "struct.pack": _p("import struct", "struct.pack('<i', 1)"),
    "struct.unpack": _p("import struct", "struct.unpack('<i', b'\\x01\\x00\\x00\\x00')"),
    "struct.calcsize": _p("import struct", "struct.calcsize('<i')"),
    "weakref.ref": _p("import weakref\nclass O:\n    pass\nOBJ = O()", "weakref.ref(OBJ)"),
    "threading.local.__getattribute__": _p("import threading\nTL = threading.local()\nTL.v = 1", "TL.v"),
    "contextlib.nullcontext": _p("import contextlib", body="with contextlib.nullcontext():\n    pass"),
    "contextlib.suppress": _p("import contextlib", body="with contextlib.suppress(KeyError):\n    pass"),
    "importlib.util.find_spec": _p("import importlib.util", "importlib.util.find_spec('json')"),
    "importlib.metadata.version": _p("import importlib.metadata", "importlib.metadata.version('torch')"),
    "collections.OrderedDict": _p("import collections", "collections.OrderedDict(a=1)"),
    "collections.defaultdict": _p("import collections", "collections.defaultdict(list)"),
    "collections.Counter": _p("import collections", "collections.Counter('aab')"),
    "itertools.chain": _p("import itertools", "list(itertools.chain([1], [2]))"),
    "itertools.product": _p("import itertools", "list(itertools.product([1], [2]))"),
    "functools.partial": _p("import functools", "functools.partial(max, 1)(2)"),
    "functools.reduce": _p("import functools, operator", "functools.reduce(operator.add, [1, 2])"),
    "functools.lru_cache": _p("import functools\n@functools.lru_cache(maxsize=None)\ndef pure(a):\n    return a * 2",
                              "pure(3)"),
    "json.dumps": _p("import json", "json.dumps({'a': 1})"),
    "sys.platform": _p("", "sys.platform"),
    "logging.getLogger": _p("import logging", "logging.getLogger('compile_lint_probe')"),
    "logging.Logger.isEnabledFor": _p(_LOG, "L.isEnabledFor(logging.DEBUG)"),
    "packaging.version.Version": _p("import packaging.version", "packaging.version.Version('1.2')",
                                    requires="packaging"),
    "torch.cuda.is_available": _p("import torch", "torch.cuda.is_available()"),
    "torch.compiler.is_compiling": _p("import torch", "torch.compiler.is_compiling()"),
    "torch.no_grad": _p("import torch", body="with torch.no_grad():\n    pass"),
    "re.Pattern.findall": _p("import re\nPAT = re.compile(r'a(\\d)')", "PAT.findall('a1a2')"),
    "re.Pattern.search": _p("import re\nPAT = re.compile(r'a(\\d)')", "PAT.search('a1a2')"),
    "re.Pattern.match": _p("import re\nPAT = re.compile(r'a(\\d)')", "PAT.match('a1a2')"),
    "re.Pattern.sub": _p("import re\nPAT = re.compile(r'a(\\d)')", "PAT.sub('b', 'a1a2')"),
})
PROBES.update({f"re.{fn}": _p("import re", f"re.{fn}({args})") for fn, args in (
    ("findall", "r'a(\\d)', 'a1a2'"), ("search", "r'a(\\d)', 'a1a2'"), ("match", "r'a(\\d)', 'a1a2'"),
    ("fullmatch", "r'a\\d', 'a1'"), ("split", "r',', 'a,b'"), ("compile", "r'a(\\d)'"),
    ("sub", "r'a', 'b', 'aa'"), ("subn", "r'a', 'b', 'aa'"), ("escape", "'a.b'"),
)})

# --- Calls that stop Dynamo with no rule naming them (measured; listed so the gap stays visible) ------------------
PROBES.update({
    "io.StringIO": _p("import io", "io.StringIO()"),
    "contextlib.redirect_stdout": _p("import contextlib, io\nBUF = io.StringIO()",
                                     body="with contextlib.redirect_stdout(BUF):\n    pass"),
    "dataclasses.fields": _p("import dataclasses\n@dataclasses.dataclass\nclass DC:\n    a: int = 1",
                             "dataclasses.fields(DC)"),
    # on an instance (`fields(self.config)`): measured apart, the class's verdict does not speak for it
    "dataclasses.fields@instance": _p("import dataclasses\n@dataclasses.dataclass\nclass DC:\n    a: int = 1\n"
                                      "OBJ = DC()", "dataclasses.fields(OBJ)"),
    "dataclasses.asdict": _p("import dataclasses\n@dataclasses.dataclass\nclass DC:\n    a: int = 1\nOBJ = DC()",
                             "dataclasses.asdict(OBJ)"),
    "traceback.format_stack": _p("import traceback", "traceback.format_stack()"),
    "sys._getframe": _p("", "sys._getframe()"),
    "threading.get_ident": _p(_T, "threading.get_ident()"),
    "threading.current_thread": _p(_T, "threading.current_thread()"),
    "torch.Generator.get_state": _p("import torch\nG = torch.Generator()", "G.get_state()"),
    # the rest of a generator's surface (FlashInfer's samplers take one: get_seed_and_offset reads and advances it)
    "torch.Generator.set_state": _p("import torch\nG = torch.Generator()\nS = G.get_state()", "G.set_state(S)"),
    "torch.Generator.initial_seed": _p("import torch\nG = torch.Generator()", "G.initial_seed()"),
    "torch.Generator.seed": _p("import torch\nG = torch.Generator()", "G.seed()"),
    "torch.Generator.manual_seed": _p("import torch\nG = torch.Generator()", "G.manual_seed(0)"),
    "torch.Generator.get_offset": _p("import torch\nG = torch.Generator()", "G.get_offset()"),
    "torch.Generator.set_offset": _p("import torch\nG = torch.Generator()", "G.set_offset(0)"),
    "torch.Generator.clone_state": _p("import torch\nG = torch.Generator()", "G.clone_state()"),
    # CL119: Python's `if` on a tensor computed in the graph calls the tensor's __bool__
    "torch.Tensor.__bool__": _p("import torch", body="if x.abs().max() == 0:\n    x = x * 2"),
    "linecache.getline": _p("import linecache, json\nLF = json.__file__", "linecache.getline(LF, 1)"),
})

# Callees measured to stop Dynamo on torch 2.13 that a scan of their own probe does not report: no rule names
# them, and CL118 (any call the table measures to stop) does not see them: attribute reads.
# tests/test_dynamo_verdicts.py tells a known gap from a new one.
KNOWN_GAPS = frozenset({
    "pathlib.Path.drive", "pathlib.Path.root",  # attributes, not calls
})

# Rule patterns with no probe, and why.
UNPROBED_SHAPES = {
    "build_and_load": "matches FlashInfer's JitSpec.build_and_load by name; its stop is measured through its "
                      "body (pathlib.Path.exists, subprocess.check_output)",
}
