"""The patterns of `pto-fuse-stages` (passes/pto_fuse_stages.py, whose docstring lists
the forms each recognises): the shared matching helpers, RMSNorm, quant and dequant."""
