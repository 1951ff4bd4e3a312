"""The parser's warnings about a user's code (invalid escapes) are neither printed nor fatal to the scan."""

from __future__ import annotations

import warnings
from pathlib import Path

from troubleshooter.cli import main

CORPUS = Path(__file__).parent / "corpus"


def _script_with_invalid_escape(tmp_path: Path) -> Path:
    source = (CORPUS / "b01_plain_no_sampler.py").read_text()
    path = tmp_path / "train.py"
    path.write_text('PATTERN = "\\d+"  # an invalid escape: a warning from the parser, not an error\n' + source)
    return path


def test_invalid_escape_under_warnings_as_errors_is_still_scanned(tmp_path, capsys):
    path = _script_with_invalid_escape(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # as under python -W error: the parser would raise SyntaxError
        assert main(["scan", str(path)]) == 1
    out = capsys.readouterr().out
    assert "missing-distributed-sampler" in out and "cannot parse" not in out


def test_invalid_escape_prints_no_warning(tmp_path, capsys):
    path = _script_with_invalid_escape(tmp_path)
    (tmp_path / "helpers.py").write_text('SEP = "\\s"\ndef setup():\n    import torch.distributed as dist\n    dist.init_process_group("gloo")\n')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        main(["scan", str(tmp_path)])
    assert [str(w.message) for w in caught if issubclass(w.category, (SyntaxWarning, DeprecationWarning))] == []
