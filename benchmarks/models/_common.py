"""Helpers shared by the suite's models: seeded inputs, forward-hook recording, calibration.

Calibration only rescales or shifts a model's random initial weights, deterministically, so that
its data-dependent decisions split the inputs (random weights alone would send every input the
same way); the models' `forward` methods never see any of this.
"""

import contextlib

import torch


def generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def images(gen: torch.Generator, count: int, h: int = 32, w: int = 32) -> list[torch.Tensor]:
    """`count` (1, 3, h, w) images with varied per-channel brightness, contrast and texture."""
    out = []
    for _ in range(count):
        out.append(image(gen, h, w))
    return out


def image_inputs(count: int = 100, seed: int = 0) -> list[tuple]:
    """The `inputs` of the image models: `count` single (1, 3, 32, 32) images."""
    return [(x,) for x in images(generator(seed), count)]


def argmax_decision(output) -> int:
    """The `decision` of single-image classifiers: the predicted class."""
    return int(output.argmax(dim=1).item())


def image(gen: torch.Generator, h: int, w: int) -> torch.Tensor:
    mean = torch.randn(1, 3, 1, 1, generator=gen)
    std = 0.2 + 1.5 * torch.rand(1, 3, 1, 1, generator=gen)
    coarse = torch.randn(1, 3, max(h // 8, 1), max(w // 8, 1), generator=gen)
    coarse = torch.nn.functional.interpolate(coarse, size=(h, w), mode="bilinear")
    fine = torch.randn(1, 3, h, w, generator=gen)
    mix = torch.rand((), generator=gen)
    return mean + std * (mix * coarse + (1 - mix) * fine)


@contextlib.contextmanager
def recording(*modules: torch.nn.Module):
    """Record (module index, output) for every call of `modules`, in call order."""
    calls: list[tuple[int, object]] = []
    handles = [
        m.register_forward_hook(lambda _m, _a, out, i=i: calls.append((i, out)))
        for i, m in enumerate(modules)
    ]
    try:
        yield calls
    finally:
        for h in handles:
            h.remove()


@torch.no_grad()
def center_bias(linear: torch.nn.Linear, values: torch.Tensor, index: int = 0) -> None:
    """Shift `linear.bias[index]` by minus the median of `values` (that output, or a quantity that
    moves one for one with it): afterwards half the inputs fall on each side of zero."""
    linear.bias[index] -= values.median()


def bisect(fraction, lo: float, hi: float, target: float, steps: int = 30) -> float:
    """The x in [lo, hi] where the increasing function `fraction(x)` crosses `target`."""
    for _ in range(steps):
        mid = (lo + hi) / 2
        if fraction(mid) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


@torch.no_grad()
def scale_linear(linear: torch.nn.Linear, factor: float) -> None:
    linear.weight *= factor
    if linear.bias is not None:
        linear.bias *= factor


@torch.no_grad()
def calibrate_exits(finals, logits, confident, fractions) -> None:
    """Rescale the last linear layer of each early-exit head so that the given fraction of the
    inputs still running at that head leave there.

    finals: the heads' last `nn.Linear`s; logits: per head, an (N, C) tensor of its outputs on N
    calibration inputs with no exit taken; confident(logits) -> (N,) bool, increasing with scale.
    The heads are also centered: each one's mean output becomes zero.
    """
    alive = torch.ones(logits[0].shape[0], dtype=torch.bool)
    for final, z, frac in zip(finals, logits, fractions, strict=True):
        # center first (no class dominates, and confidence varies more between inputs)
        final.bias -= z.mean(0)
        z = z[alive] - z.mean(0)
        log_s = bisect(lambda t, z=z: confident(z * 10.0**t).float().mean().item(), -3, 6, frac)
        scale_linear(final, 10.0**log_s)
        leaving = confident(z * 10.0**log_s)
        assert abs(leaving.float().mean().item() - frac) < 0.1, "exit calibration failed"
        alive[alive.clone()] = ~leaving


@torch.no_grad()
def calibrate_gates(model, linears, calibration_inputs, value=lambda out: out[..., 0], index=0):
    """Center, one gate after the other (each gate sees the inputs the earlier, already
    calibrated gates produce), the bias `index` of each gate's last linear layer on the median of
    `value(output)` over the calibration inputs."""
    for linear in linears:
        with recording(linear) as calls:
            for args in calibration_inputs:
                model(*args)
        center_bias(linear, torch.cat([value(out).reshape(-1) for _, out in calls]), index)


@torch.no_grad()
def center_classifier(model, linear, calibration_inputs) -> None:
    """Subtract from `linear`'s bias its mean output over the calibration inputs, so that no class
    dominates the argmax of a random network."""
    with recording(linear) as calls:
        for args in calibration_inputs:
            model(*args)
    linear.bias -= torch.cat([out.reshape(-1, out.shape[-1]) for _, out in calls]).mean(0)


def first_stop_margins(logits: torch.Tensor, stop: int, steps) -> torch.Tensor:
    """For greedy decoders: `logits` (N, T, V) recorded with the stop token never winning, and
    `steps` (N,) the number of steps each decode may take. Returns per sequence the smallest
    amount by which the stop token's logit would need to rise to win some step."""
    other = logits.clone()
    other[..., stop] = float("-inf")
    margin = other.amax(-1) - logits[..., stop]
    mask = torch.arange(logits.shape[1])[None, :] < torch.as_tensor(steps)[:, None]
    return margin.masked_fill(~mask, float("inf")).amin(1)


@torch.no_grad()
def set_batchnorm_stats(model, bn, calibration_inputs) -> None:
    """Give a batch-norm layer the running statistics of its input over the calibration inputs
    (what training would have left there)."""
    seen = []
    handle = bn.register_forward_pre_hook(lambda _m, args: seen.append(args[0]))
    try:
        for args in calibration_inputs:
            model(*args)
    finally:
        handle.remove()
    x = torch.cat(seen).transpose(0, 1).flatten(1)
    bn.running_mean.copy_(x.mean(1))
    bn.running_var.copy_(x.var(1))
