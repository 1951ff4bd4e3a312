"""YAML loading with line numbers, on top of PyYAML's SafeLoader (no arbitrary objects).

Mappings load as :class:`SpanDict` (remembers the line of each key), sequences as
:class:`SpanList`. Non-string keys (a bare ``yes:`` is a bool in YAML 1.1) and
duplicate keys are errors, reported with file and line.

Rule directories are shared between jobs, so a file is held to budgets before anything is built
from it: its size, its nesting depth, the node count once every alias is expanded (a "billion
laughs" tree of anchors is refused in linear time, never walked), and the size of its integers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from troubleshooter.core.errors import IssueCollector

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


MAX_FILE_BYTES = 1_000_000
MAX_EXPANDED_NODES = 20_000  # the largest shipped rule file has under 1,000
MAX_DEPTH = 64
MAX_INT_DIGITS = 18  # rule numbers are counts, bytes, seconds: 10**18 holds them all


class _SpanLoader(_Base):
    pass


def _check_budget(root: yaml.Node) -> None:
    """Refuse a composed document that is too deep or expands (through aliases) beyond the node budget.

    Aliases share composed nodes, so sizes are memoised per node: the cost is linear in the text.
    """
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: yaml.Node, depth: int) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if isinstance(node, yaml.ScalarNode):
            if node.tag == _INT_TAG:
                _check_int(node)
            return 1
        if key in open_nodes:
            raise YamlError("an alias refers to the node that contains it (recursive structure)", node.start_mark.line + 1)
        if depth > MAX_DEPTH:
            raise YamlError(f"nested more than {MAX_DEPTH} levels deep", node.start_mark.line + 1)
        open_nodes.add(key)
        children = node.value if isinstance(node, yaml.SequenceNode) else [part for pair in node.value for part in pair]
        total = 1 + sum(size(child, depth + 1) for child in children)
        open_nodes.discard(key)
        if total > MAX_EXPANDED_NODES:
            raise YamlError(f"this node expands to more than {MAX_EXPANDED_NODES:,} nodes through aliases; "
                            "refusing the file", node.start_mark.line + 1)
        sizes[key] = total
        return total

    size(root, 1)


_INT_TAG = "tag:yaml.org,2002:int"


def _check_int(node: yaml.ScalarNode) -> None:
    """Integers are refused beyond MAX_INT_DIGITS (Python refuses 4,300 digits only after the work)."""
    digits = node.value.lstrip("+-").replace("_", "")
    if len(digits) > MAX_INT_DIGITS:
        shown = node.value if len(node.value) <= 24 else f"{node.value[:12]}… ({len(node.value)} characters)"
        raise YamlError(f"number {shown} is too large (rule numbers have at most {MAX_INT_DIGITS} digits)",
                        node.start_mark.line + 1)


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
    """Parse YAML text into SpanDict/SpanList/scalars within the budgets; raise YamlError with a line on failure."""
    if len(text) > MAX_FILE_BYTES:
        raise YamlError(f"file is larger than {MAX_FILE_BYTES:,} characters", None)
    loader = _SpanLoader(text)  # derives from SafeLoader: no arbitrary objects
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_budget(node)
        return loader.construct_document(node)
    except YamlError:
        raise
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise YamlError(f"invalid YAML: {exc.problem or exc.context}", line) from None
    except yaml.YAMLError as exc:
        raise YamlError(f"invalid YAML: {exc}", None) from None
    finally:
        loader.dispose()


def load_file(path: Path) -> Any:
    """Read and parse a YAML file."""
    return load_text(Path(path).read_text(encoding="utf-8"))


def load_yaml_file(c: IssueCollector, path: Path) -> Any:
    """Parse one rule file; an unreadable or invalid file is recorded in ``c`` (with its line) and gives None."""
    try:
        return load_file(path)
    except YamlError as exc:
        c.add(path, exc.line, exc.message, "", "")
    except OSError as exc:
        c.add(path, None, f"cannot read file: {exc.strerror}")
    return None
