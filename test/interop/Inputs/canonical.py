"""Print a .mlir file as pto-opt does, with every attribute dictionary sorted by key and
value names replaced by %v: upstream mlir-opt sorts dictionaries and renames values, so
this is the form in which pto-opt's own output and what it reads back from mlir-opt
must agree."""

import re
import sys

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr
from xdsl.parser import Parser

from pto.driver.registry import load_dialects


def _sorted(attr):
    if isinstance(attr, DictionaryAttr):
        return DictionaryAttr({k: _sorted(v) for k, v in sorted(attr.data.items())})
    if isinstance(attr, ArrayAttr):
        return ArrayAttr([_sorted(a) for a in attr.data])
    return attr


ctx = Context()
load_dialects(ctx)
module = Parser(ctx, open(sys.argv[1]).read(), sys.argv[1]).parse_module()
for op in module.walk():
    op.attributes = {k: _sorted(v) for k, v in sorted(op.attributes.items())}
    for name in ("arg_attrs", "res_attrs"):
        if name in op.properties:
            op.properties[name] = _sorted(op.properties[name])
print(re.sub(r"%[A-Za-z0-9_.]+", "%v", str(module)))
