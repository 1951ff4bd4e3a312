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


def test_a_helper_with_an_invalid_escape_is_still_inlined_under_warnings_as_errors(tmp_path):
    """The inliner re-parses a helper function's own lines: that parse is quiet too, or the set-up is lost."""
    from troubleshooter.scan import scan_paths

    (tmp_path / "helpers.py").write_text(
        "import re\nimport torch\nimport torch.distributed as dist\n"
        "from torch.nn.parallel import DistributedDataParallel as DDP\n\n"
        "def setup(model, rank):\n    pattern = re.compile(\"\\d+\")\n    dist.init_process_group(\"nccl\")\n"
        "    torch.cuda.set_device(rank)\n    return DDP(model.to(rank), device_ids=[rank])\n")
    train = tmp_path / "train.py"
    train.write_text("import os\nimport torch\nfrom helpers import setup\n\ndef main():\n"
                     "    model = setup(torch.nn.Linear(2, 2), int(os.environ['LOCAL_RANK']))\n    print(model)\n\n"
                     "if __name__ == '__main__':\n    main()\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        facts = scan_paths([str(train)]).facts
    assert facts["scan.destroy-process-group-missing"], "the helper's init_process_group was not seen"
