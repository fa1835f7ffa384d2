"""Wall-clock and timers: ``time.time``, ``perf_counter``, ``datetime.now``..."""
from compile_lint.ruledef import BREAK, DynamoOutcome, Rule

CLOCK = Rule(
    code="CL106",
    name="clock-in-compiled-region",
    kind=BREAK,
    message="`{callee}` reads the clock inside the compiled region",
    dynamo=DynamoOutcome("torch._dynamo.exc.Unsupported", "GB0007 / GB0156",
                         "Attempted to call function marked as skipped (time.*) / Unsupported method call "
                         "(datetime.*)", "time.time (C), at the call"),
    what="Finds clock reads and sleeps in traced code: `time.time`, `perf_counter`, `monotonic`, `sleep`, "
         "`datetime.now`.",
    why="The `time` functions are C functions Dynamo skips: an error under `fullgraph=True`, a graph break "
        "otherwise (the value stays fresh at run time, at the cost of the break).",
    example='''
import time, torch

def f(x):
    t0 = time.perf_counter()  # CL106
    return x * 2
''',
    fix="Time the compiled call from the outside, or use `torch.cuda.Event` timing around it.",
    calls=("time.time", "time.time_ns", "time.perf_counter", "time.perf_counter_ns", "time.monotonic",
           "time.monotonic_ns", "time.process_time", "time.process_time_ns", "time.sleep", "time.localtime",
           "time.gmtime", "time.strftime", "datetime.datetime.now", "datetime.datetime.utcnow",
           "datetime.datetime.today", "datetime.date.today"),
    invalid=('''
import time, torch
def f(x):
    return x + time.time()
f_c = torch.compile(f, fullgraph=True)
''',),
    fixed=('''
import time, torch
def f(x):
    return x * 2
f_c = torch.compile(f, fullgraph=True)
def timed(x):  # the compiled call timed from the outside
    t0 = time.time()
    y = f_c(x)
    return y, time.time() - t0
''',),
)

RULES = (CLOCK,)
