"""Traceback matching: find known errors in pasted text and extract their values."""

from app.matching.templates import PatternError, compile_pattern, derive_pattern

__all__ = ["PatternError", "compile_pattern", "derive_pattern"]
