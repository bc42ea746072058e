"""The command-line tools (pto-opt) and the registry that wires the layers together."""
