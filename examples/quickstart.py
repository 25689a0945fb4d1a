"""Quickstart: compile the bundled early-exit network, check it against eager PyTorch on both
exits and three batch sizes, save and reload it, and cross-compile it for a Jetson Orin."""

import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from early_exit import build  # noqa: E402

import dync  # noqa: E402


def main() -> None:
    model, example, dynamic_shapes = build()
    compiled = dync.compile(model, example, dynamic_shapes=dynamic_shapes, progress=True)
    print(compiled.report)

    exits = set()
    for batch in (1, 5, 32):
        for scale in (0.05, 20.0):  # small inputs take the deep exit, large ones the first
            x = torch.randn(batch, 3, 16, 16) * scale
            expected = model(x)
            got = compiled(x)
            torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)
            h = model.stem(x).flatten(1)
            exits.add(bool((model.exit1(h).softmax(-1).amax(-1) > model.threshold).all()))
            print(f"batch {batch:2d} scale {scale:5.2f}: matches eager "
                  f"(max abs err {(got - expected).abs().max().item():.2e})")
    print(f"exits taken: {sorted('first' if e else 'deep' for e in exits)}")

    with tempfile.TemporaryDirectory() as tmp:
        path = compiled.save(Path(tmp) / "early_exit.vmfb")
        reloaded = dync.load(path)
        x = torch.randn(3, 3, 16, 16)
        torch.testing.assert_close(reloaded(x), model(x), rtol=1e-4, atol=1e-4)
        print(f"saved and reloaded {path.name}")
        for backend in ("cuda", "arm"):
            cross = dync.compile(model, example, dynamic_shapes=dynamic_shapes,
                                 backend=backend, target="jetson-orin")
            print(f"{backend}/jetson-orin: {cross.save(Path(tmp) / f'early_exit_{backend}.vmfb').name}"
                  f" ({len(cross.vmfb)} bytes)")
    print("quickstart OK")


if __name__ == "__main__":
    main()
