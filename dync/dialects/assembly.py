"""A module's assembly in the form IREE's parser reads back (`iree-compile` input, `--dump-ir`,
the IREE worker process's input).
"""

from __future__ import annotations

from iree.compiler import ir

# IREE's stream scheduler groups independent dispatches into concurrent waves, which keeps the
# results of both branches alive at once and undoes the plan. Its "debug" partitioning (IREE's
# name) runs the dispatches one after the other, in program order.
PARTITIONING_ATTR = "stream.partitioning"
SERIAL = '#stream.partitioning_config<"debug">'
# How IREE 3.13 prints SERIAL, which its own parser rejects ("expected string").
_SERIAL_PRINTED = "#stream.partitioning_config<favor-debug>"


def module_text(module: ir.Module | ir.Operation, debug_info: bool = False,
                elide_over: int | None = None) -> str:
    """`module`'s assembly, loadable by `iree-compile` (`--dump-ir`; with its locations,
    the IREE worker process's input: bytecode keeps the attribute's printed form too);
    constants of more than `elide_over` elements or bytes printed as elided."""
    text = module.operation.get_asm(enable_debug_info=debug_info, large_elements_limit=elide_over,
                                    large_resource_limit=elide_over)
    return text.replace(_SERIAL_PRINTED, SERIAL)
