// A Python kernel (pto.pypto's or pto's) given to a tool that reads MLIR: one line that
// says to run it with python, a non-zero exit; no parse error about an op 'import'.
// RUN: echo "import pto.pypto as pypto" > %t.py
// RUN: not pto-run %t.py --random-inputs --tokens 4 2>&1 | filecheck %s --check-prefix=RUNNER
// RUN: not pto-opt %t.py 2>&1 | filecheck %s --check-prefix=OPT
// RUN: not pto-tune %t.py --tokens 4 2>&1 | filecheck %s --check-prefix=TUNE

// RUNNER-NOT: Traceback
// RUNNER: {{^}}pto-run: error: '{{.*}}.py' is a Python file, not MLIR: run a Python kernel with `python {{.*}}.py`{{$}}
// RUNNER-NOT: {{.}}

// OPT-NOT: Traceback
// OPT: {{^}}pto-opt: error: '{{.*}}.py' is a Python file, not MLIR: run a Python kernel with `python {{.*}}.py`{{$}}
// OPT-NOT: {{.}}

// TUNE-NOT: Traceback
// TUNE: {{^}}pto-tune: error: '{{.*}}.py' is a Python file, not MLIR: run a Python kernel with `python {{.*}}.py`{{$}}
// TUNE-NOT: {{.}}
