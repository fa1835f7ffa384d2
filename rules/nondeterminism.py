"""Host-side state Dynamo cannot trace: hashing, sockets, Python's ``random``, ``inspect``, C-accelerated JSON."""
from compile_lint.ruledef import BREAK, DynamoOutcome, Rule

HOST_STATE = Rule(
    code="CL112",
    name="host-state-in-compiled-region",
    kind=BREAK,
    message="`{callee}` reads host state Dynamo cannot trace",
    dynamo=DynamoOutcome("torch._dynamo.exc.Unsupported", "GB0007 / GB0156 / GB0008",
                         "Attempted to call function marked as skipped / Unsupported method call / Attempted to "
                         "inline function marked as skipped (secrets)",
                         "_hashlib.openssl_*, _socket.gethostname, Random.random, inspect.getfile, json's C scanner"),
    what="Finds `hashlib` digests, `socket` queries, Python's `random` module, `inspect.getsource`-style source "
         "access, `uuid`/`secrets`/`os.urandom` and `json.loads` in traced code, except the calls measured to "
         "compile on the installed torch (`random.randint`, whose value Dynamo draws afresh at run time, and "
         "`inspect.getmodule` of an object with a `__module__`, on torch 2.13).",
    why="Each ends in a C function (or, for `random`, a module on Dynamo's skip list): an error under "
        "`fullgraph=True`, a graph break otherwise. `json.loads` of a constant string still breaks in its C "
        "scanner.",
    example='''
import random, torch

def f(x):
    if random.random() < 0.5:  # CL112
        return x * 2
    return x
''',
    fix="Use `torch` equivalents (`torch.rand`) and keep the value in the graph "
        "(`torch.where(torch.rand(()) < 0.5, x * 2, x)`): a Python `if` on that tensor is a data-dependent "
        "branch, which stops Dynamo too (GB0170, measured on torch 2.13). Or compute the value outside the "
        "compiled function.",
    calls=("hashlib.*", "socket.*", "random.*", "inspect.getsource", "inspect.getsourcelines", "inspect.getfile",
           "inspect.getsourcefile", "inspect.stack", "inspect.getmodule", "uuid.uuid1", "uuid.uuid4", "secrets.*",
           "os.urandom", "json.loads", "zlib.*", "getpass.getuser", "pwd.*",
           # torch functions that return a Python value Dynamo cannot put in the graph (measured on an H200 and
           # on CPU with torch 2.13: FlashInfer's CompilationContext calls it while building a JIT spec)
           "torch.cuda.device_count"),
    invalid=('''
import hashlib, torch
def f(x):
    hashlib.sha256(b"k").hexdigest()
    return x
f_c = torch.compile(f, fullgraph=True)
''', '''
import random, torch
def f(x):
    return x * (2 if random.random() < 0.5 else 1)
f_c = torch.compile(f, fullgraph=True)
'''),
    fixed=('''
import hashlib, torch
DIGEST = hashlib.sha256(b"k").hexdigest()  # computed outside the compiled function, at import
def f(x):
    return x + len(DIGEST)
f_c = torch.compile(f, fullgraph=True)
''', '''
import torch
def f(x):
    return torch.where(torch.rand(()) < 0.5, x * 2, x)  # a torch equivalent, kept in the graph
f_c = torch.compile(f, fullgraph=True)
def inputs(x):  # the same seed before each call: compiled and eager draw the same value
    torch.manual_seed(0)
    return (x,)
'''),
)

RULES = (HOST_STATE,)
