"""Transformations within one level (one pass per file, named after its CLI name)."""
