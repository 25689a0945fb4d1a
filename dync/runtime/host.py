"""`HostModule`: a host-mode model — its own Python on the host, with the calls that were
captured (see `dync.frontends.pytorch.host`) running as sub-DNN entry points of one `.vmfb`."""

from __future__ import annotations

import collections
from typing import Any

from ..errors import InputError
from ..signature import Signature
from .manifest import Manifest
from .module import CompiledModule, _to_numpy
from .versions import Versions


class HostModule(CompiledModule):
    """`compiled(*args)` runs `model.forward` with each captured call replaced by its
    sub-DNN; a call whose arguments are outside its sub-DNN's signature runs the original
    Python instead. `stats` counts both per sub-DNN. Takes and returns torch tensors."""

    def __init__(self, model: Any, vmfb: bytes, manifest: Manifest):
        super().__init__(vmfb, manifest)
        self.model = model
        self._subdnns = []
        for d in manifest.subdnns:
            signature = Signature.from_json(d["signature"])
            self._subdnns.append((d["name"], tuple(d["callable"]), signature,
                                  Versions(d["name"], d.get("versions", []), signature)))
        self.stats: dict[str, collections.Counter] = {
            name: collections.Counter() for name, *_ in self._subdnns
        }
        self._patches = None  # (submodule, attribute, sub-DNN call), built on the first call

    def __repr__(self) -> str:
        calls = ", ".join(".".join(p for p in key if p) for _, key, *_ in self._subdnns)
        return f"<dync.HostModule {len(self._subdnns)} sub-DNNs ({calls}) for {self.backend}/{self.target}>"

    def __call__(self, *args: Any) -> Any:
        import torch

        if self.signature.inputs:  # the model's declared inputs, as graph mode checks them
            self.signature.check_inputs([_to_numpy(a) for a in args])
        with self._attached(), torch.no_grad():
            return self.model(*args)

    def _attached(self):
        from ..frontends.pytorch.host import installed

        if self._patches is None:
            self._patches = []
            for name, (qual, attr), signature, versions in self._subdnns:
                module = self.model.get_submodule(qual)
                original = getattr(module, attr)
                self._patches.append(
                    (module, attr, self._sub_dnn(name, signature, versions, original)))
        return installed(self._patches)

    def _sub_dnn(self, name: str, signature: Signature, versions: Versions, original):
        import torch

        stats = self.stats[name]

        def call(*args, **kwargs):
            if not kwargs and all(isinstance(a, torch.Tensor) for a in args):
                arrays = [_to_numpy(a) for a in args]
                try:
                    bound = signature.check_inputs(arrays)
                except InputError:
                    pass
                else:
                    stats["compiled"] += 1
                    choice = versions.choose(bound)
                    return self._invoke(self._function(choice.function), signature,
                                        choice.arguments(arrays), as_torch=True)
            stats["python"] += 1
            return original(*args, **kwargs)

        return call
