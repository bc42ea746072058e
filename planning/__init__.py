"""Decisions the passes, the lowering and the tuner share: each is made here once, by
the pass that owns it, recorded in the IR, and read back (never re-derived) later."""
