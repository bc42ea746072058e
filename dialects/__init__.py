"""The three levels: pto (tensors), tile (V/C stages), npu (hardware)."""
