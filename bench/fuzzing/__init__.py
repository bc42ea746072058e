"""The fuzz harness behind bench/fuzz.py, one module per kind of case and per stage of a campaign."""
