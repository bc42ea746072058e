"""`pypto.experimental`: the operation options SK-03 kernels set, accepted and not modelled."""

from __future__ import annotations

from pto.pypto.errors import not_modelled, refuse, unsupported_name
from pto.pypto.tensor import current


def set_operation_options(*, force_combine_axis: bool | None = None, combine_axis: bool | None = None) -> None:
    tr = current("pypto.experimental.set_operation_options")
    for name, v in (("force_combine_axis", force_combine_axis), ("combine_axis", combine_axis)):
        if v is not None and not isinstance(v, bool):
            refuse(f"set_operation_options' {name} must be a bool, got {v!r}")
        if v is not None:
            not_modelled(f"operation option {name}", tr.notes)


# PyPTO 0.2.0's other experimental names: refused where used.
OTHER_NAMES = (
    "ShmemTensor",
    "gather_in_l1",
    "gather_in_ub",
    "get_operation_options",
    "nop",
    "set_options",
    "shmem_load",
    "shmem_store",
    "transposed_batchmatmul",
)


def __getattr__(name: str):
    return unsupported_name(__name__, name, OTHER_NAMES)
