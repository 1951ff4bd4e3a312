"""YAML loading with line numbers, on top of PyYAML's SafeLoader (no arbitrary objects).

Mappings load as :class:`SpanDict` (remembers the line of each key), sequences as
:class:`SpanList`. Non-string keys (a bare ``yes:`` is a bool in YAML 1.1) and
duplicate keys are errors, reported with file and line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

try:  # the C loader is ~5x faster; both are "safe" loaders
    _Base = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML without libyaml
    _Base = yaml.SafeLoader


class SpanDict(dict):
    """A dict that knows the 1-based line of itself and of each key."""

    line: int = 0
    key_lines: dict

    def line_of(self, key: str) -> int:
        """Line of ``key`` (or of the mapping when the key is absent)."""
        return self.key_lines.get(key, self.line)


class SpanList(list):
    """A list that knows the line of itself and of each item."""

    line: int = 0
    item_lines: list

    def line_of(self, index: int) -> int:
        """Line of item ``index``."""
        return self.item_lines[index] if index < len(self.item_lines) else self.line


class YamlError(Exception):
    """A YAML file could not be read; ``line`` is 1-based or None."""

    def __init__(self, message: str, line: int | None):
        super().__init__(message)
        self.message = message
        self.line = line


class _SpanLoader(_Base):
    pass


def _construct_mapping(loader: _SpanLoader, node: yaml.MappingNode) -> SpanDict:
    loader.flatten_mapping(node)
    result = SpanDict()
    result.line = node.start_mark.line + 1
    result.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        if not isinstance(key, str):
            hint = " (quote it: a bare yes/no/on/off is a boolean in YAML)" if isinstance(key, bool) else ""
            raise YamlError(f"mapping key {key!r} is a {type(key).__name__}, expected a string{hint}", line)
        if key in result:
            raise YamlError(f"duplicate key {key!r} (first at line {result.key_lines[key]})", line)
        result[key] = loader.construct_object(value_node, deep=True)
        result.key_lines[key] = line
    return result


def _construct_sequence(loader: _SpanLoader, node: yaml.SequenceNode) -> SpanList:
    result = SpanList(loader.construct_object(child, deep=True) for child in node.value)
    result.line = node.start_mark.line + 1
    result.item_lines = [child.start_mark.line + 1 for child in node.value]
    return result


_SpanLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_SpanLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


def load_text(text: str) -> Any:
    """Parse YAML text into SpanDict/SpanList/scalars; raise YamlError with a line on failure."""
    try:
        return yaml.load(text, Loader=_SpanLoader)  # noqa: S506 - _SpanLoader derives from SafeLoader
    except YamlError:
        raise
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise YamlError(f"invalid YAML: {exc.problem or exc.context}", line) from None
    except yaml.YAMLError as exc:
        raise YamlError(f"invalid YAML: {exc}", None) from None


def load_file(path: Path) -> Any:
    """Read and parse a YAML file."""
    return load_text(Path(path).read_text(encoding="utf-8"))
