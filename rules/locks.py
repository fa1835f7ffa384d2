"""Locks and threads: ``threading.Lock()`` and friends, ``acquire``/``release``, ``with lock:``."""
from compile_lint.ruledef import BREAK, DynamoOutcome, Rule

LOCKS = Rule(
    code="CL105",
    name="lock-in-compiled-region",
    kind=BREAK,
    message="`{callee}` uses a lock or thread inside the compiled region",
    dynamo=DynamoOutcome("torch._dynamo.exc.Unsupported", "GB0156 / GB0142 / GB0007",
                         "Unsupported method call (acquire/release) / Unsupported context manager (with lock) / "
                         "Attempted to call function marked as skipped (threading.Lock())",
                         "the lock's C methods; _thread.allocate_lock"),
    what="Finds locks created, acquired, released or entered (`with lock:`) in traced code, and threads started.",
    why="Locks are C objects: Dynamo cannot call their methods (`Unsupported method call`), cannot enter them "
        "(`Unsupported context manager`; in default mode the whole frame runs eagerly) and cannot create them "
        "(`_thread.allocate_lock` is skipped). Any stdlib helper that makes a lock fails the same way.",
    example='''
import threading, torch
LOCK = threading.Lock()

def f(x):
    with LOCK:  # CL105
        return x * 2
''',
    fix="Keep synchronisation outside the compiled function (in the caller, or in an op's implementation).",
    calls=("threading.Lock", "threading.RLock", "threading.Condition", "threading.Semaphore",
           "threading.BoundedSemaphore", "threading.Event", "threading.Thread", "_thread.allocate_lock",
           "threading.Lock.acquire", "threading.Lock.release", "threading.RLock.acquire", "threading.RLock.release",
           "threading.Condition.acquire", "threading.Condition.release", "threading.Condition.wait",
           "threading.Semaphore.acquire", "threading.Semaphore.release", "threading.Event.wait",
           "threading.Event.set", "multiprocessing.Lock", "queue.Queue.get", "queue.Queue.put"),
    enters=("threading.Lock", "threading.RLock", "threading.Condition", "threading.Semaphore"),
    invalid=('''
import threading, torch
LOCK = threading.Lock()
def f(x):
    LOCK.acquire()
    LOCK.release()
    return x
f_c = torch.compile(f, fullgraph=True)
''',),
    fixed=('''
import threading, torch
LOCK = threading.Lock()
def f(x):
    return x * 2
f_c = torch.compile(f, fullgraph=True)
def step(x):  # the caller takes the lock, outside the compiled function
    with LOCK:
        return f_c(x)
''', '''
import threading, torch
LOCK = threading.Lock()
@torch.library.custom_op("compile_lint_example::locked_double", mutates_args=())
def locked_double(x: torch.Tensor) -> torch.Tensor:  # the lock in an op's implementation
    with LOCK:
        return x * 2
@locked_double.register_fake
def _(x):
    return torch.empty_like(x)
def f(x):
    return locked_double(x)
f_c = torch.compile(f, fullgraph=True)
'''),
)

RULES = (LOCKS,)
