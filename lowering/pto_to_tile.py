"""`pto-to-tile`: V/C staging of an SK-03 kernel into one token loop."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    IndexType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from pto.diagnostics import DiagnosticError
from pto.dialects import pto, tile
from pto.dialects.common import CachePolicy, CachePolicyAttr, CubeTileAttr, Form, FormAttr, Layout, LayoutAttr

HINTS = ("pto.label", "pto.vec_tile", "pto.cube_tile", "pto.by_unroll")


def _tile_type(t: Attribute, rows: int) -> Attribute:
    """A token-dependent tensor type with its dynamic token dim made `rows`."""
    if isinstance(t, TensorType) and t.get_shape() and t.get_shape()[0] == DYNAMIC_INDEX:
        return TensorType(t.element_type, [rows, *t.get_shape()[1:]])
    return t


@dataclass
class _Stage:
    kind: str  # "vec" | "cube"
    label: str | None
    ops: list[Operation]


def _by_unroll(op: Operation, hint: str, into: dict[str, Attribute]) -> None:
    """The stage's tile shapes per unroll factor: the first op's that gives one."""
    per = op.attributes.get("pto.by_unroll")
    for factor, hints in per.data.items() if isinstance(per, DictionaryAttr) else ():
        if hint in hints.data and factor not in into:  # type: ignore[attr-defined]
            into[factor] = DictionaryAttr({hint: hints.data[hint]})  # type: ignore[attr-defined]


def _arg_view(op: Operation) -> bool:
    """An in-place reshape of an argument (or of such a view), or a window of a weight
    argument: a view, not work."""
    if isinstance(op, pto.ViewOp):
        return isinstance(op.input, BlockArgument)
    if not isinstance(op, pto.ReshapeOp) or op.inplace is None:
        return False
    return isinstance(op.input, BlockArgument) or _arg_view(op.input.owner)  # type: ignore[arg-type]


def _stages(ops: list[Operation], form: Form) -> list[_Stage]:
    """Group the kernel's ops, in flow order, into vector and cube stages. The cube stage
    holds the matmul and a cast of its result (the fixpipe casts on the way out) unless
    the cast has a label or a vector tile of its own: then the user asked for it as a
    vector stage (as PyPTO runs a cast after `set_vec_tile_shapes`); a new vector stage
    starts at every user label that differs from the current one."""
    stages: list[_Stage] = []
    for op in ops:
        label = op.attributes.get("pto.label")
        text = label.data if isinstance(label, StringAttr) else None
        cur = stages[-1] if stages else None
        if isinstance(op, pto.MatmulOp):
            stages.append(_Stage("cube", text, [op]))
            continue
        if (
            isinstance(op, pto.CastOp)
            and cur is not None
            and cur.kind == "cube"
            and len(cur.ops) == 1
            and op.input is cur.ops[0].results[0]
            and op.input.has_one_use()
            and not {"pto.label", "pto.vec_tile"} & op.attributes.keys()
        ):
            cur.ops.append(op)
            continue
        if cur is None or cur.kind == "cube" or (text is not None and cur.label not in (None, text)):
            stages.append(_Stage("vec", text, [op]))
        else:
            cur.ops.append(op)
            cur.label = cur.label or text
    seen_cube = False
    for st in stages:
        if st.label is None:
            st.label = _role(st, seen_cube, form)
        seen_cube |= st.kind == "cube"
    return stages


def _role(st: _Stage, after_cube: bool, form: Form) -> str:
    names = {op.name for op in st.ops}
    if st.kind == "cube":
        return "linear"
    if "pto.dequant" in names:
        return "dequant"
    if "pto.quant" in names:
        return "quant"
    if "pto.rms_norm" in names:
        return "post-rmsnorm" if after_cube else "rmsnorm"
    return "post" if after_cube else "pre"


def column_windows(v: SSAValue) -> list[tuple[SSAValue, int]] | None:
    """The (input, first column) pieces of a result that is a `pto.concat` marked
    `pto.assemble` and read by the return only: PyPTO's assembles of column windows
    (`assemble(a, [row, 0], out)`, `assemble(b, [row, 448], out)`). Each piece is
    stored into its columns of the output, as PyPTO writes each window, rather than
    copied together in UB first; None for any other result. A rank-3 output `[T, H, D]`
    takes the concat seen with its dims (an in-place `pto.reshape`): its columns are
    counted through each token's H * D."""
    if not (v.has_one_use() and isinstance(v.get_user_of_unique_use(), func.ReturnOp)):
        return None
    op = v.owner
    if isinstance(op, pto.ReshapeOp) and op.inplace is not None and op.input.has_one_use():
        op = op.input.owner  # a rank-3 output's windows: columns of its flattened rows
    if not (isinstance(op, pto.ConcatOp) and pto.ASSEMBLE in op.attributes and op.result.has_one_use()):
        return None
    pieces, col = [], 0
    for x in op.inputs:
        pieces.append((x, col))
        col += pto.tensor_type(x).get_shape()[-1]
    return pieces


def _window_ops(v: SSAValue) -> list[Operation]:
    """The ops of a result stored in column windows: no stage computes them."""
    op = v.owner
    assert isinstance(op, Operation)
    return [op, op.input.owner] if isinstance(op, pto.ReshapeOp) else [op]  # type: ignore[list-item]


def _check_kernel(f: func.FuncOp, ret: func.ReturnOp) -> list[BlockArgument]:
    """The kernel's token arguments, or a DiagnosticError at what the loop cannot stage."""
    body = f.body.block
    for v in (*body.args, *(r for o in body.ops for r in o.results)):
        t = v.type
        if isinstance(t, TensorType) and DYNAMIC_INDEX in t.get_shape()[1:]:
            raise DiagnosticError(
                v.owner if isinstance(v.owner, Operation) else f, f"only the token axis (dim 0) may be dynamic, got {t}"
            )
    for a in body.args:  # (legal at the pto level, whose golden runs them; no buffer holds them)
        t = a.type
        if isinstance(t, TensorType) and (not t.get_shape() or 0 in t.get_shape()):
            name = (a.name_hint or f"arg{a.index}").lstrip("%")
            raise DiagnosticError(f, f"argument '{name}' is {t}: only tensors of rank >= 1 with positive sizes lower")
    token_args = [a for a in body.args if _tile_type(a.type, 1) != a.type]
    if not token_args:
        raise DiagnosticError(f, "an SK-03 kernel needs a token axis: an argument with a dynamic dim 0")
    for r in ret.arguments:
        windows = column_windows(r)
        for v in [r] if windows is None else [piece for piece, _ in windows]:
            if _tile_type(v.type, 1) == v.type:
                raise DiagnosticError(ret, f"result of type {v.type} does not depend on the token axis")
            # (a window that is an input tile itself would have no stage to store it)
            arg = isinstance(v, BlockArgument) and windows is not None
            if arg or isinstance(v.owner, Operation) and _arg_view(v.owner):
                raise DiagnosticError(
                    ret if windows is None else r.owner,  # type: ignore[arg-type]
                    "a result is a view of an argument: an SK-03 kernel computes each of its results",
                )
    for o in body.ops:
        if o is not ret and type(o) not in tile.TWIN:
            raise DiagnosticError(o, f"'{o.name}' in an SK-03 kernel: pto-to-tile stages pto ops only")
        static = [r.type for r in o.results if isinstance(r.type, TensorType) and _tile_type(r.type, 1) == r.type]
        if isinstance(o, pto.ViewOp) and not isinstance(o.input, BlockArgument):
            raise DiagnosticError(
                o, "'pto.view' takes a window of a weight argument of the kernel, not of a value computed in it"
            )
        view = isinstance(o, pto.ReshapeOp) and o.inplace is not None or isinstance(o, pto.ViewOp)  # a GM view
        if o.name.startswith("pto.") and static and not view and not _weight_only(o):
            raise DiagnosticError(
                o,
                f"'{o.name}' has no token axis (its result is {static[0]}) but reads a token tensor: "
                "SK-03 computes on token tiles",
            )
    return token_args


def _weight_only(op: Operation) -> bool:
    """A vector op of static tensors only (a gamma's cast, a bias reshaped): work on
    weights, the same for every token tile. Each stage that reads it computes it itself
    (as it takes its own view of a weight), in the stage's vector phase."""
    if isinstance(op, pto.MatmulOp) or not op.name.startswith("pto.") or _arg_view(op):
        return False
    static = all(isinstance(v.type, TensorType) and _tile_type(v.type, 1) == v.type for v in op.results)
    return static and all(
        isinstance(v, BlockArgument)
        and _tile_type(v.type, 1) == v.type
        or isinstance(v.owner, Operation)
        and (_arg_view(v.owner) or _weight_only(v.owner))
        for v in op.operands
    )


def _weight_fed(body: Block) -> list[SSAValue]:
    """The weight-only values (not views) that a matmul reads, in order."""
    found: list[SSAValue] = []
    for mm in (o for o in body.ops if isinstance(o, pto.MatmulOp)):
        for v in mm.operands:
            if isinstance(v.owner, Operation) and _weight_only(v.owner) and v not in found:
                found.append(v)
    return found


def _chain(v: SSAValue, views: dict[SSAValue, Operation]) -> list[Operation]:
    """The ops (views and weight-only work) that compute `v` from arguments, in order."""
    ops: list[Operation] = []
    todo = [v]
    while todo:
        x = todo.pop()
        if x in views and views[x] not in ops:
            ops.append(views[x])
            todo += views[x].operands
    block = views[v].parent_block()
    assert block is not None
    return sorted(ops, key=block.get_operation_index)


def _cache_of(f: func.FuncOp, v: SSAValue) -> CachePolicy | None:
    """The `pto.cache` hint of the weight arguments `v` is computed from (one policy)."""
    if f.arg_attrs is None:
        return None
    seen: set[SSAValue] = set()
    todo, policies = [v], set()
    while todo:
        x = todo.pop()
        if isinstance(x, BlockArgument):
            c = f.arg_attrs.data[x.index].data.get("pto.cache")
            if isinstance(c, CachePolicyAttr):
                policies.add(c.data)
        elif isinstance(x.owner, Operation) and x not in seen:
            seen.add(x)
            todo += x.owner.operands
    return policies.pop() if len(policies) == 1 else None


@dataclass(frozen=True)
class PtoToTilePass(ModulePass):
    """Stage each classified pto kernel into one token loop of V and C stages.

    The kernel's results become trailing output arguments written by `tile.store`; the
    token axis (dim 0 of every dynamic tensor) becomes one `tile.token_loop` of one-row
    tiles (`tile-unroll` then makes the cascade); token tensors are loaded per tile,
    static tensors (weights, gamma) whole, with their `pto.cache` policy (and an NZ
    weight its `pto.layout`: `tile.load ... layout nz`). Ops are grouped
    in flow order into stages, one semantic label each (the user's `pto.label`, else
    one generated from the stage's role); `pto.vec_tile` and `pto.cube_tile` hints
    become the stages' tile shapes.
    """

    name = "pto-to-tile"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in list(op.walk()):
            if not isinstance(f, func.FuncOp) or not any(o.name.startswith("pto.") for o in f.walk()):
                continue
            if "pto.form" not in f.attributes:
                raise DiagnosticError(f, f"'{f.sym_name.data}' has no pto.form: run pto-classify-skeleton first")
            self.lower(f)

    def lower(self, f: func.FuncOp) -> None:
        form = f.attributes["pto.form"]
        assert isinstance(form, FormAttr)
        body = f.body.block
        ret = body.last_op
        assert isinstance(ret, func.ReturnOp)
        token_args = _check_kernel(f, ret)

        out_types = [r for r in f.function_type.outputs.data]
        new_block = Block(arg_types=[*(a.type for a in body.args), *out_types])
        ins, outs = new_block.args[: len(body.args)], new_block.args[len(body.args) :]
        mapping: dict[SSAValue, SSAValue] = dict(zip(body.args, ins, strict=True))
        for old, new in mapping.items():
            new.name_hint = old.name_hint
        for n, out in enumerate(outs):
            out.name_hint = "out" if len(outs) == 1 else f"out{n}"

        zero = arith.ConstantOp.from_int_and_width(0, IndexType())
        dim = tensor.DimOp(mapping[token_args[0]], zero.result)
        zero.result.name_hint, dim.result.name_hint = "c0", "tokens"
        loop_body = Block(arg_types=[IndexType()])
        i = loop_body.args[0]
        i.name_hint = "i"
        loop = tile.TokenLoopOp(zero.result, dim.result, 1, Region(loop_body))
        for o in (zero, dim, loop):
            o.location = f.location
        new_block.add_ops([zero, dim, loop, func.ReturnOp()])

        views = {r: o for o in body.ops if _arg_view(o) or _weight_only(o) for r in o.results}
        for v in _weight_fed(body):  # (before the loop: the loop loads their results)
            self.emit_weight_stage(v, new_block, loop, mapping, views, _cache_of(f, v))
        arg_attrs = f.arg_attrs.data if f.arg_attrs is not None else [DictionaryAttr({})] * len(body.args)
        for a, attrs in zip(body.args, arg_attrs, strict=True):
            if not a.uses:
                continue
            assert isinstance(attrs, DictionaryAttr)
            cache, layout = attrs.data.get("pto.cache"), attrs.data.get("pto.layout")
            load = tile.LoadOp(
                mapping[a],
                _tile_type(a.type, 1),
                i if a in token_args else None,
                cache=cache.data if isinstance(cache, CachePolicyAttr) else None,
                layout=layout.data if isinstance(layout, LayoutAttr) and layout.data == Layout.NZ else None,
            )
            load.location = f.location
            loop_body.add_op(load)
            load.result.name_hint = f"{a.name_hint}_tile" if a.name_hint else None
            mapping[a] = load.result

        # An argument's in-place reshape is a view, not work: each stage that reads it
        # takes its own of its load (staged on its own, a weight's [1, N] view would cross
        # phases as a token tile; a token tensor's would need a workspace copy).
        windows = {v: w for v in ret.arguments if (w := column_windows(v)) is not None}
        kernel_ops = [o for o in body.ops if o is not ret and not (_arg_view(o) or _weight_only(o))]
        window_ops = {o for v in windows for o in _window_ops(v)}
        kernel_ops = [o for o in kernel_ops if o not in window_ops]
        for st in _stages(kernel_ops, form.data):
            self.emit_stage(st, loop_body, mapping, views)
        for v, out in zip(ret.arguments, outs, strict=True):
            for piece, col in windows.get(v, [(v, None)]):
                store = tile.StoreOp(mapping[piece], out, i, column=col)
                store.location = ret.location if col is None else v.owner.location  # type: ignore[union-attr]
                loop_body.add_op(store)

        for ld in [o for o in loop_body.ops if isinstance(o, tile.LoadOp) and not o.result.uses]:
            loop_body.erase_op(ld)  # (a weight only a weight stage reads)
        new_region = Region(new_block)
        f.body.detach_block(body)
        body.erase(safe_erase=False)
        f.body.add_block(new_region.detach_block(new_block))
        f.function_type = func.FunctionType.from_lists([*(a.type for a in new_block.args)], [])
        f.properties["function_type"] = f.function_type
        # Outputs are marked so that a runner can tell them from inputs at every level below.
        in_attrs = f.arg_attrs.data if f.arg_attrs is not None else [DictionaryAttr({})] * len(body.args)
        f.arg_attrs = ArrayAttr([*in_attrs, *[DictionaryAttr({"pto.output": UnitAttr()})] * len(out_types)])
        if f.res_attrs is not None:
            f.res_attrs = None

    def emit_weight_stage(
        self,
        v: SSAValue,
        block: Block,
        loop: tile.TokenLoopOp,
        mapping: dict[SSAValue, SSAValue],
        views: dict[SSAValue, Operation],
        cache: CachePolicy | None,
    ) -> None:
        """Weight-only work that the matmul reads (W8A16's weight cast): a weight stage
        before the loop, over whole loads of the weights it reads; the loop loads its
        result with the weight's cache policy, as the cube reads any weight."""
        chain = _chain(v, views)
        loads: dict[SSAValue, SSAValue] = {}
        for a in (o for op in chain for o in op.operands if isinstance(o, BlockArgument)):
            if a not in loads:
                ld = tile.LoadOp(mapping[a], a.type)
                ld.location = chain[0].location
                ld.result.name_hint = f"{a.name_hint}_whole" if a.name_hint else None
                block.insert_op_before(ld, loop)
                loads[a] = ld.result
        inner, local = Block(), dict[SSAValue, SSAValue]()
        result = self.operand(v, loads, views, local, inner)
        inner.add_op(tile.YieldOp(result))
        labels = [op.attributes.get("pto.label") for op in chain]
        label = next((x.data for x in labels if isinstance(x, StringAttr)), "weight")
        # the tile set for the result's rank (an op on a rank-1 gamma in the chain has the
        # leading size of it: corpus23's k211, gamma cast before w * gamma)
        tiles = [t for op in chain if isinstance(t := op.attributes.get("pto.vec_tile"), DenseArrayBase)]
        rank = len(pto.tensor_type(v).get_shape())
        vt = next((t for t in tiles if len(t.get_values()) == rank), tiles[0] if tiles else None)
        stage = tile.VecStageOp(label, Region(inner), [result.type], None if vt is None else list(vt.get_values()))
        stage.location = chain[0].location
        stage.results[0].name_hint = v.name_hint
        block.insert_op_before(stage, loop)
        ld = tile.LoadOp(stage.results[0], v.type, cache=cache)
        ld.location = v.owner.location  # type: ignore[union-attr]
        loop.body.block.add_op(ld)
        ld.result.name_hint = f"{v.name_hint}_tile" if v.name_hint else None
        mapping[v] = ld.result
        del views[v]  # (stages read the loaded result, not work of their own)

    def operand(
        self,
        v: SSAValue,
        mapping: dict[SSAValue, SSAValue],
        views: dict[SSAValue, Operation],
        local: dict[SSAValue, SSAValue],
        inner: Block,
    ) -> SSAValue:
        """The stage's value for `v`: a weight view, and weight-only work, is re-made in
        the stage from its loads."""
        if v not in views:
            return mapping[v]
        if v not in local:
            view = views[v]
            ins = [self.operand(o, mapping, views, local, inner) for o in view.operands]
            if isinstance(view, pto.ViewOp):
                new: Operation = tile.ViewOp(ins[0], view.starts, pto.tensor_type(view.result).get_shape())
            elif isinstance(view, pto.ReshapeOp) and view.inplace is not None:
                new = tile.ReshapeOp(ins[0], _tile_type(view.results[0].type, 1), inplace=True)
            else:  # weight-only work
                new = tile.TWIN[type(view)].create(
                    operands=ins,
                    result_types=[r.type for r in view.results],
                    properties=dict(view.properties),
                    attributes={k: a for k, a in view.attributes.items() if k not in HINTS},
                )
            new.location = view.location
            inner.add_op(new)
            for r, nr in zip(view.results, new.results, strict=True):
                nr.name_hint = r.name_hint
                local[r] = nr
        return local[v]

    def emit_stage(
        self, st: _Stage, parent: Block, mapping: dict[SSAValue, SSAValue], views: dict[SSAValue, Operation]
    ) -> None:
        inner = Block()
        stage_ops = set(st.ops)
        escaping: list[SSAValue] = []
        vec_tile = cube_tile = None
        moves_rows_tile = False
        by_unroll: dict[str, Attribute] = {}
        local: dict[SSAValue, SSAValue] = {}  # this stage's copies of weight views
        for o in st.ops:
            cls = tile.TWIN[type(o)]
            attrs = {k: v for k, v in o.attributes.items() if k not in HINTS}
            new = cls.create(
                operands=[self.operand(v, mapping, views, local, inner) for v in o.operands],
                result_types=[_tile_type(r.type, 1) for r in o.results],
                properties=dict(o.properties),
                attributes=attrs,
            )
            new.location = o.location
            inner.add_op(new)
            for r, nr in zip(o.results, new.results, strict=True):
                nr.name_hint = r.name_hint
                mapping[r] = nr
                if any(u.operation not in stage_ops for u in r.uses):
                    escaping.append(r)
            if isinstance(vt := o.attributes.get("pto.vec_tile"), DenseArrayBase):
                # The stage's tile is its data's: the first op that is not a reshape or a
                # per-row transpose (those take a rank-3 tile of which the data uses two sizes).
                moves_rows = isinstance(o, pto.ReshapeOp | pto.TransposeOp)
                if vec_tile is None or moves_rows_tile and not moves_rows:
                    vec_tile, moves_rows_tile = list(vt.get_values()), moves_rows
            if isinstance(ct := o.attributes.get("pto.cube_tile"), CubeTileAttr):
                cube_tile = ct
            _by_unroll(o, "pto.cube_tile" if st.kind == "cube" else "pto.vec_tile", by_unroll)
        inner.add_op(tile.YieldOp(*[mapping[r] for r in escaping]))
        assert not (set(escaping) & views.keys())
        types = [mapping[r].type for r in escaping]
        assert st.label is not None
        if st.kind == "cube":
            stage: Operation = tile.CubeStageOp(st.label, Region(inner), types, cube_tile)
        else:
            stage = tile.VecStageOp(st.label, Region(inner), types, vec_tile)
        stage.location = st.ops[0].location
        if by_unroll:  # tile-unroll picks each factor's tile shapes
            stage.attributes["pto.by_unroll"] = DictionaryAttr(by_unroll)
        parent.add_op(stage)
        for value, staged in zip(escaping, stage.results, strict=True):
            mapping[value] = staged
