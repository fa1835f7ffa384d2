"""flashinfer 0.7.2.post1, sampling.py: get_seed_and_offset reads and advances a torch.Generator's state.
Dynamo does not trace a generator's state (GB7650 on torch 2.13)."""
import torch

GEN = torch.Generator()
GEN.manual_seed(0)


def get_seed_and_offset(increment: int, generator: torch.Generator):
    state = generator.get_state()  # HAZARD
    seed = int(state[0])
    return seed, increment


def f(x):
    seed, offset = get_seed_and_offset(4, GEN)
    return x + seed + offset


f_compiled = torch.compile(f, fullgraph=True, backend="eager")
