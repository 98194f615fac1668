"""Errors for bad input: each names the request field that caused it."""

from __future__ import annotations


class InputValueError(ValueError):
    """Input the engine cannot work with; ``field`` names the offending argument."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class UnknownDTypeError(InputValueError):
    """A dtype spelling matching no known dtype; the message lists the closest names."""

    def __init__(self, text: str, suggestions: list[str], field: str = "dtype") -> None:
        hint = f"; closest: {', '.join(suggestions)}" if suggestions else ""
        super().__init__(field, f"unknown dtype {text!r}{hint}")
        self.text = text
        self.suggestions = suggestions


class ShapeError(InputValueError):
    """A shape that is malformed or outside the engine's limits."""

    def __init__(self, message: str, field: str = "shape") -> None:
        super().__init__(field, message)
