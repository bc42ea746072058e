"""interp"""
