"""File system and OS queries: pathlib I/O, ``os.path`` queries, ``os.stat``..., ``open``, ``tempfile``,
``shutil``, ``filelock``.  Pure path arithmetic (``Path / "x"``, ``.name``, ``os.path.join``) is fine."""
from compile_lint.ruledef import BREAK, DynamoOutcome, Rule

_PATH_IO = ("exists", "stat", "lstat", "is_file", "is_dir", "is_symlink", "is_mount", "is_fifo", "is_socket",
            "is_block_device", "is_char_device", "mkdir", "rmdir", "unlink", "touch", "read_text", "read_bytes",
            "write_text", "write_bytes", "open", "glob", "rglob", "iterdir", "resolve", "rename", "replace",
            "chmod", "lchmod", "samefile", "owner", "group", "readlink", "symlink_to", "hardlink_to",
            "absolute", "walk")

FILESYSTEM = Rule(
    code="CL102",
    name="filesystem-access-in-compiled-region",
    kind=BREAK,
    message="`{callee}` touches the file system or queries the OS inside the compiled region",
    dynamo=DynamoOutcome(
        "torch._dynamo.exc.Unsupported", "GB0007 / GB0059 / GB0156",
        "Attempted to call function marked as skipped / Failed to trace builtin operator (read_bytes, "
        "NamedTemporaryFile: open) / Unsupported method call (tempfile.mkdtemp: a lock)",
        "the first C call: posix.stat (exists/stat, os.path.*), posix.mkdir, posix.lstat (resolve), "
        "io.text_encoding (read_text), sys.audit (glob)",
    ),
    what="Finds file-system access and OS queries in traced code: `pathlib.Path` I/O methods (`exists`, `stat`, "
         "`mkdir`, `read_text`, `glob`, ...), `os.path` queries (`exists`, `isfile`, `getmtime`, ...), `os.stat`, "
         "`os.listdir`, `os.makedirs`, `os.getcwd`, `os.cpu_count`, `shutil.*`, `tempfile.mkdtemp` and friends.",
    why="Dynamo traces `pathlib`/`os.path` in Python until the first C function (`posix.stat`, `posix.mkdir`, "
        "...), which it cannot trace: `Unsupported: Attempted to call function marked as skipped` under "
        "`fullgraph=True`, a graph break (or the whole frame run eagerly) otherwise. FlashInfer's JIT loader "
        "fails here first: `build_and_load()` -> `is_compiled()` -> `lib_path.exists()`.",
    example='''
import pathlib, torch
SO = pathlib.Path("/opt/cache/kernel.so")

def f(x):
    if SO.exists():  # CL102
        return x * 2
    return x
''',
    fix="Check the file system once, outside the region (import time, `__init__`), or move the library call "
        "behind an op boundary (`torch.library.custom_op`).",
    fix_safety="Unsafe: the check no longer runs on every call.",
    fixes=("op-boundary", "hoist-load", "compiler-disable"),
    calls=tuple(f"pathlib.Path.{m}" for m in _PATH_IO) + (
        "os.path.exists", "os.path.lexists", "os.path.isfile", "os.path.isdir", "os.path.islink",
        "os.path.ismount", "os.path.getmtime", "os.path.getatime", "os.path.getctime", "os.path.getsize",
        "os.path.realpath", "os.path.samefile",
        "os.stat", "os.lstat", "os.listdir", "os.scandir", "os.makedirs", "os.mkdir", "os.remove", "os.unlink",
        "os.rmdir", "os.removedirs", "os.rename", "os.renames", "os.replace", "os.getcwd", "os.chdir",
        "os.cpu_count", "os.access", "os.chmod", "os.walk", "os.open", "os.read", "os.write", "os.close",
        "os.fsync", "os.getpid", "os.sched_getaffinity", "os.statvfs", "os.symlink", "os.readlink",
        "os.utime", "os.truncate", "os.link",
        "shutil.*", "glob.glob", "glob.iglob", "fcntl.*",
        "tempfile.mkdtemp", "tempfile.mkstemp", "tempfile.NamedTemporaryFile", "tempfile.TemporaryFile",
        "tempfile.TemporaryDirectory", "tempfile.SpooledTemporaryFile",
    ),
    shapes=(("exists", 0), ("is_file", 0), ("is_dir", 0), ("mkdir", 0), ("read_text", 1), ("write_text", 2),
            ("read_bytes", 0), ("write_bytes", 1), ("iterdir", 0), ("touch", 0), ("unlink", 0)),
    invalid=('''
import os, torch
def f(x):
    return x + (1 if os.path.exists("/tmp") else 0)
f_c = torch.compile(f, fullgraph=True)
''', '''
import pathlib, torch
def f(x):
    pathlib.Path("/tmp/x").mkdir(exist_ok=True)
    return x
f_c = torch.compile(f, fullgraph=True)
'''),
    fixed=('''
import os, torch
TMP_EXISTS = os.path.exists("/tmp")  # checked once, at import, and read as a global
def f(x):
    return x + (1 if TMP_EXISTS else 0)
f_c = torch.compile(f, fullgraph=True)
''', '''
import pathlib, tempfile, torch
DIR = pathlib.Path(tempfile.mkdtemp())
@torch.library.custom_op("compile_lint_example::make_dir", mutates_args=())
def make_dir(x: torch.Tensor) -> torch.Tensor:  # an op boundary: the mkdir runs in the op's body
    (DIR / "x").mkdir(exist_ok=True)
    return x.clone()
@make_dir.register_fake
def _(x):
    return torch.empty_like(x)
def f(x):
    return make_dir(x)
f_c = torch.compile(f, fullgraph=True)
'''),
    valid=('''
import os, pathlib, torch
BASE = pathlib.Path("/opt")
def f(x):
    p = BASE / "jit" / "k.so"
    return x + len(p.name) + len(os.path.join("a", "b"))
f_c = torch.compile(f, fullgraph=True)
''',),
)

OPEN = Rule(
    code="CL103",
    name="open-in-compiled-region",
    kind=BREAK,
    message="`{callee}` opens a file inside the compiled region",
    dynamo=DynamoOutcome("torch._dynamo.exc.Unsupported", "GB0059 / GB0156 / GB0007",
                         "Failed to trace builtin operator (open) / Unsupported method call (json.load/dump) / "
                         "Attempted to call function marked as skipped (pickle)", "builtin open, at the call"),
    what="Finds `open(...)` (and `io.open`, `codecs.open`) in traced code.",
    why="Dynamo has no handler for the `open` builtin: `Failed to trace builtin operator` under "
        "`fullgraph=True`; with `with open(...)` in default mode the whole frame runs eagerly (no graph at all).",
    example='''
import torch

def f(x):
    with open("/etc/scale") as fh:  # CL103
        return x * float(fh.read())
''',
    fix="Read the file once outside the region and keep the value, or wrap the reading function in an op "
        "boundary (`torch.library.custom_op`) if it must be read on every call.",
    fixes=("op-boundary", "compiler-disable"),
    calls=("builtins.open", "io.open", "codecs.open", "json.load", "pickle.load", "pickle.dump", "json.dump"),
    invalid=('''
import torch
def f(x):
    open("/tmp/log", "w").write("x")
    return x
f_c = torch.compile(f, fullgraph=True)
''',),
    fixed=('''
import pathlib, tempfile, torch
PATH = pathlib.Path(tempfile.mkdtemp()) / "scale"
PATH.write_text("2")
with open(PATH) as fh:  # read once, outside the region, and the value kept
    SCALE = float(fh.read())
def f(x):
    return x * SCALE
f_c = torch.compile(f, fullgraph=True)
''', '''
import pathlib, tempfile, torch
LOG = pathlib.Path(tempfile.mkdtemp()) / "log"
@torch.library.custom_op("compile_lint_example::write_log", mutates_args=())
def write_log(x: torch.Tensor) -> torch.Tensor:  # an op boundary: the file is written on every call
    open(LOG, "w").write("x")
    return x.clone()
@write_log.register_fake
def _(x):
    return torch.empty_like(x)
def f(x):
    return write_log(x)
f_c = torch.compile(f, fullgraph=True)
'''),
)

FILELOCK = Rule(
    code="CL104",
    name="filelock-in-compiled-region",
    kind=BREAK,
    message="`{callee}` takes a file lock inside the compiled region",
    dynamo=DynamoOutcome("torch._dynamo.exc.Unsupported", "GB0007 / GB0142",
                         "Attempted to call function marked as skipped (creating the lock) / Unsupported context "
                         "manager (`with lock:`)", "posix.getpid in filelock/_api.py"),
    what="Finds `filelock.FileLock` / `SoftFileLock` created or entered in traced code (FlashInfer's "
         "`build_and_load` takes one around the JIT build).",
    why="The lock calls `os.getpid()` and opens the lock file: C functions Dynamo cannot trace. In default mode "
        "a `with FileLock(...)` makes the whole frame run eagerly.",
    example='''
import filelock, torch

def f(x):
    with filelock.FileLock("/tmp/build.lock"):  # CL104
        return x * 2
''',
    fix="Build/load outside the region, or put the library call behind an op boundary.",
    fixes=("op-boundary", "hoist-load"),
    calls=("filelock.FileLock", "filelock.SoftFileLock", "filelock.UnixFileLock", "filelock.*"),
    enters=("filelock.FileLock",),
    invalid=('''
import filelock, torch
def f(x):
    with filelock.FileLock("/tmp/x.lock"):
        return x
f_c = torch.compile(f, fullgraph=True)
''',),
    fixed=('''
import filelock, tempfile, torch
LOCK_PATH = tempfile.mkdtemp() + "/x.lock"
with filelock.FileLock(LOCK_PATH):  # the build/load, under its lock, at import
    SCALE = 2.0
def f(x):
    return x * SCALE
f_c = torch.compile(f, fullgraph=True)
''', '''
import filelock, tempfile, torch
LOCK_PATH = tempfile.mkdtemp() + "/x.lock"
@torch.library.custom_op("compile_lint_example::locked", mutates_args=())
def locked(x: torch.Tensor) -> torch.Tensor:  # an op boundary: the file lock is taken in the op's body
    with filelock.FileLock(LOCK_PATH):
        return x.clone()
@locked.register_fake
def _(x):
    return torch.empty_like(x)
def f(x):
    return locked(x)
f_c = torch.compile(f, fullgraph=True)
'''),
)

RULES = (FILESYSTEM, OPEN, FILELOCK)
