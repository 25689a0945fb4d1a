"""What every frontend hands to the pass pipeline, and the last step of every import."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from iree.compiler import ir

from ..dialects import dync_ir
from ..errors import CompilationError
from ..signature import Signature
from .unsigned import widen_unsigned

# How an importer's torch.prim.If/Loop become dync IR's scf.if/scf.while: a pass pipeline
# (`dync.passes.lower_control_flow`), handed in by the caller, since frontends know no passes.
Lowering = Callable[[ir.Module], None]


@dataclass
class ImportedProgram:
    module: ir.Module
    signature: Signature
    frontend: str
    # Constructs the frontend handled specially (graph breaks, fallbacks), for the report.
    notes: list[str] = field(default_factory=list)
    # Readable source of each rewritten Python function (PyTorch frontend), by qualified name.
    rewritten: dict[str, str] = field(default_factory=dict)
    # With `trace_branches`: the branch sites (file:line) the module's trace output codes.
    branch_sites: list[str] = field(default_factory=list)


def finish_import(module: ir.Module, signature: Signature, frontend: str, lower: Lowering,
                  entry: str = "main") -> ImportedProgram:
    """Bring an imported torch-dialect module into dync IR form (`lower` its control flow to
    scf) and check it."""
    try:
        lower(module)
    except CompilationError as e:
        raise CompilationError(
            f"{frontend} import: lowering control flow to scf failed", e.diagnostics
        ) from e
    with module.context:
        _sink_argument_casts(module)
    widen_unsigned(module)
    dync_ir.set_entry_signature(module, signature, entry)
    problems = dync_ir.check_ir(module)
    if problems:
        raise CompilationError(f"{frontend} import produced invalid dync IR", problems)
    return ImportedProgram(module, signature, frontend)


def _sink_argument_casts(module: ir.Module) -> None:
    """Move `torch_c.to_builtin_tensor %arg` below the `torch.bind_symbolic_shape` of %arg.

    convert-torch-to-scf materializes argument casts at the top of the entry block, before
    the shape bindings; IREE's torch-iree-bind-symbolic-shapes then rewrites the cast's
    operand to a value defined after it ("operand #0 does not dominate this use").
    """
    for func in module.body.operations:
        if func.operation.name != "func.func" or not func.regions[0].blocks:
            continue
        entry = func.regions[0].blocks[0]
        last_bind: dict = {}
        casts = []
        for op in entry.operations:
            op = op.operation
            if op.name == "torch.bind_symbolic_shape" and isinstance(op.operands[0], ir.BlockArgument):
                last_bind[op.operands[0].arg_number] = op
            elif op.name == "torch_c.to_builtin_tensor" and isinstance(op.operands[0], ir.BlockArgument):
                casts.append(op)
        for cast in casts:
            bind = last_bind.get(cast.operands[0].arg_number)
            if bind is not None:
                cast.move_after(bind)


def link(modules: dict[str, ir.Module], context: ir.Context) -> ir.Module:
    """One module holding the entry functions of `modules` (entry name -> module), for one
    `.vmfb` with several entry points (host mode's sub-DNNs). Private functions (branches)
    are renamed `<entry>.<name>` so that the modules' own names cannot collide."""
    with context, ir.Location.unknown():
        linked = ir.Module.create()
        dync_ir.request_flags(linked, dync_ir.linked_flags(list(modules.values())))
        for entry, module in modules.items():
            dync_ir.request_preprocessing(linked, dync_ir.read_preprocessing(module))
            dync_ir.request_copied_padding(linked, dync_ir.read_copied_padding(module))
            functions = [op.operation for op in module.body.operations]
            for op in functions:
                name = ir.StringAttr(op.attributes["sym_name"]).value
                if name != entry and not name.startswith(entry + "__"):  # not a version
                    renamed = f"{entry}.{name}"
                    ir.SymbolTable.replace_all_symbol_uses(name, renamed, module.operation)
                    op.attributes["sym_name"] = ir.StringAttr.get(renamed)
            for op in functions:
                op.detach_from_parent()
                linked.body.append(op)
    return linked
