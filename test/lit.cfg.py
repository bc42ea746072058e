import os
import shutil
import sys

import lit.formats

config.name = "pto-ir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["lit.cfg.py", "python", "Inputs"]
config.environment["PATH"] = os.environ.get("PATH", "")
config.maxIndividualTestTime = 60

# Print in generic form, parse again: the custom and generic forms must agree.
config.substitutions.append(("%ROUNDTRIP", "pto-opt --mlir-print-op-generic %s | pto-opt"))
config.substitutions.append(
    ("%canonical", f"{sys.executable} {os.path.join(os.path.dirname(__file__), 'interop', 'Inputs', 'canonical.py')}")
)

mlir_opt = shutil.which("mlir-opt") or (
    "/usr/lib/llvm-22/bin/mlir-opt" if os.path.exists("/usr/lib/llvm-22/bin/mlir-opt") else None
)
if mlir_opt:
    config.available_features.add("mlir-opt")
    config.substitutions.append(("%mlir-opt", mlir_opt))
