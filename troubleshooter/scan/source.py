"""Parsing a user's Python source without executing it and without printing the parser's warnings."""

from __future__ import annotations

import ast
import warnings


def parse_python(data: bytes | str, filename: str) -> ast.Module:
    """The module's tree; raises what ``ast.parse`` raises.

    The parser's own warnings about the user's code (an invalid escape such as ``"\\d"``: a DeprecationWarning
    before Python 3.12, a SyntaxWarning printed to stderr from 3.12) are not ours to print, and under
    ``-W error`` they would turn a valid file into "cannot parse".
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(data, filename=filename)
