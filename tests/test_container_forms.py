"""Issue [C]: containers of modules in every form real models use (transformers' `self.layers[: n]`,
diffusers' `self.down_blocks` loops, `ModuleDict.values()`), each on its own so a failure names the form."""
import textwrap

import pytest

LOOPS = {
    "slice": "for layer in self.layers[: self.n]:\n            x = layer(x)",
    "slice_tail": "for layer in self.layers[:-1]:\n            x = layer(x)",
    "index": "x = self.layers[0](x)",
    "enumerate": "for i, layer in enumerate(self.layers):\n            x = layer(x)",
    "zip": "for a, b in zip(self.layers, self.norms):\n            x = b(a(x))",
    "reversed": "for layer in reversed(self.layers):\n            x = layer(x)",
    "values": "for blk in self.blocks.values():\n            x = blk(x)",
    "items": "for name, blk in self.blocks.items():\n            x = blk(x)",
    "children": "for blk in self.seq.children():\n            x = blk(x)",
    "cast": "x = typing.cast(Layer, self.single)(x)",
}


@pytest.mark.parametrize("form", sorted(LOOPS))
def test_a_module_reached_through_a_container(form, run_scan, tmp_path):
    src = textwrap.dedent('''
        import os, typing, torch

        class Layer(torch.nn.Module):
            def forward(self, x):
                os.path.exists("/x")
                return x

        class M(torch.nn.Module):
            def __init__(self, n):
                super().__init__()
                self.layers = torch.nn.ModuleList([Layer() for _ in range(n)])
                self.norms = torch.nn.ModuleList([Layer() for _ in range(n)])
                self.blocks = torch.nn.ModuleDict({"a": Layer()})
                self.seq = torch.nn.Sequential(Layer(), Layer())
                self.single = Layer()
                self.n = n

            def forward(self, x):
                BODY
                return x

        m = torch.compile(M(2), fullgraph=True)
        ''').replace("BODY", LOOPS[form])
    (tmp_path / "m.py").write_text(src)
    result = run_scan(tmp_path / "m.py")
    hits = [f for f in result.findings if f.callee == "os.path.exists"]
    assert hits and hits[0].severity == "error", form
    assert [fr.qualname for fr in hits[0].trace] == ["M.forward", "Layer.forward"]
