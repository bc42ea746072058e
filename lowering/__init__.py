"""Conversions between levels: pto -> tile -> npu (one pass per file)."""
