"""The npu interpreter (issue 4: pto-run); nothing here yet."""
