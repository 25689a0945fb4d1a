"""dync-narrow-rows: data-tiled products with constant weights over a dynamic batch of at most
8 rows run as versions over 1, 4 and 8 static rows (the batch padded with zero rows and the
result sliced back) and agree with eager at every batch size, each version taken."""

import torch
from torch import nn
from torch.export import Dim

import dync
from dync.dialects.dync_ir import GLOBAL_DATA_TILING
from dync.passes import DEFAULT_PIPELINE


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.up, self.down = nn.Linear(256, 512), nn.Linear(512, 256)

    def forward(self, x):  # b, 1, 256: one step of a decoder over a batch
        return self.down(torch.relu(self.up(x))).squeeze(1)


def test_products_over_a_batch_of_up_to_eight_match_eager_at_every_size(tmp_path):
    torch.manual_seed(0)
    assert "dync-narrow-rows" in DEFAULT_PIPELINE
    model = Head().eval()
    dumped = tmp_path / "module.mlir"
    compiled = dync.compile(model, (torch.randn(3, 1, 256),),
                            dynamic_shapes=({0: Dim("b", min=1, max=8)},), mode="graph",
                            dump_ir=dumped)
    assert GLOBAL_DATA_TILING in compiled.report.flags
    text = dumped.read_text()
    for rows in (1, 4, 8):
        assert f"!torch.vtensor<[{rows},1,256],f32>" in text, f"a version over {rows} rows"
    with torch.no_grad():
        for batch in range(1, 9):
            x = torch.randn(batch, 1, 256)
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
