"""Set-up in a local module the script imports is judged where the script calls it (scan/inline.py): scanned alone
or with its directory, under several import spellings; a sibling module the script does not import changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from troubleshooter.scan import scan_paths

HEAD = """import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
"""

# a set-up helper returning the wrapped model and an unsharded training loader
SETUP = HEAD + """

def setup_distributed(args, model, dataset):
    dist.init_process_group("nccl")
    torch.cuda.set_device(args.local_rank)
    model = model.cuda()
    model = DDP(model, device_ids=[args.local_rank])
    loader = DataLoader(dataset, batch_size=32, shuffle=True)
    return model, loader
"""

ENTRY = """import argparse
import torch
{imports}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)
    args = parser.parse_args()
    net = torch.nn.Linear(10, 10)
    data = torch.utils.data.TensorDataset(torch.randn(100, 10))
    net, train_loader = {call}(args, net, data)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for epoch in range(10):
        for (x,) in train_loader:
            loss = net(x.cuda()).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
    if dist.get_rank() == 0:
        torch.save(net.state_dict(), "ckpt.pt")


if __name__ == "__main__":
    main()
"""


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _hits(paths: list[Path]) -> dict[str, list[dict]]:
    return scan_paths([str(p) for p in paths]).hits


SPELLINGS = {
    "from-import": ("ddp_setup.py", "from ddp_setup import setup_distributed", "setup_distributed"),
    "from-import-as": ("ddp_setup.py", "from ddp_setup import setup_distributed as setup", "setup"),
    "import-as": ("dist_utils.py", "import dist_utils as du", "du.setup_distributed"),
    "import-plain": ("dist_utils.py", "import dist_utils", "dist_utils.setup_distributed"),
    "import-package-module-as": ("tools/engine.py", "import tools.engine as eng", "eng.setup_distributed"),
    "from-package-import-module": ("tools/engine.py", "from tools import engine", "engine.setup_distributed"),
    "from-package-module-import": ("tools/engine.py", "from tools.engine import setup_distributed",
                                   "setup_distributed"),
}


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_entry_scanned_alone_sees_the_setup_of_the_module_it_imports(tmp_path, spelling):
    module, imports, call = SPELLINGS[spelling]
    files = {module: SETUP, "train.py": ENTRY.format(imports="import torch.distributed as dist\n" + imports,
                                                     call=call)}
    if module.startswith("tools/"):
        files["tools/__init__.py"] = ""
    root = _write(tmp_path, files)
    hits = _hits([root / "train.py"])
    # the wrapper came back from the helper: its state_dict() is the DDP wrapper's
    assert [h["path"] for h in hits.get("checkpoint-without-module", [])] == [str(root / "train.py")], hits
    # the loader built in the helper has no DistributedSampler: reported at the helper's own line
    sampler = hits.get("missing-distributed-sampler", [])
    assert [(Path(h["path"]).name, h["line"]) for h in sampler] == [(Path(module).name, 12)], sampler


def test_relative_import_inside_a_package(tmp_path):
    root = _write(tmp_path, {
        "proj/__init__.py": "",
        "proj/engine.py": SETUP,
        "proj/train.py": ENTRY.format(imports="import torch.distributed as dist\nfrom .engine import setup_distributed",
                                      call="setup_distributed"),
    })
    hits = _hits([root / "proj" / "train.py"])
    assert "checkpoint-without-module" in hits and "missing-distributed-sampler" in hits, hits


def test_directory_scan_reports_the_helpers_bug_once(tmp_path):
    root = _write(tmp_path, {"ddp_setup.py": SETUP, "train.py": ENTRY.format(
        imports="import torch.distributed as dist\nfrom ddp_setup import setup_distributed", call="setup_distributed")})
    alone = _hits([root / "train.py"])
    together = _hits([root])
    for ident in ("missing-distributed-sampler", "checkpoint-without-module"):
        assert [(h["path"], h["line"]) for h in together[ident]] == [(h["path"], h["line"]) for h in alone[ident]]


def test_sibling_module_not_imported_changes_nothing(tmp_path):
    """A set-up module lying next to the script, but not imported by it, is not the script's set-up."""
    entry = ENTRY.format(imports="import torch.distributed as dist\n\n\ndef setup_distributed(args, model, data):\n"
                                 "    return model, torch.utils.data.DataLoader(data, batch_size=4)\n",
                         call="setup_distributed")
    root = _write(tmp_path, {"ddp_setup.py": SETUP, "train.py": entry})
    hits = _hits([root / "train.py"])
    assert "checkpoint-without-module" not in hits, hits
    assert not any(h["path"].endswith("ddp_setup.py") for found in hits.values() for h in found), hits


def test_helper_not_called_is_not_inlined(tmp_path):
    entry = ENTRY.format(imports="import torch.distributed as dist\nfrom ddp_setup import setup_distributed\n\n\n"
                                 "def local_setup(args, model, data):\n    return model, data\n",
                         call="local_setup")
    root = _write(tmp_path, {"ddp_setup.py": SETUP, "train.py": entry})
    hits = _hits([root / "train.py"])
    assert "checkpoint-without-module" not in hits, hits


@pytest.mark.parametrize("broken", ["missing", "unparsable"])
def test_missing_or_unparsable_module_is_unknown(tmp_path, broken):
    files = {"train.py": ENTRY.format(imports="import torch.distributed as dist\nfrom ddp_setup import "
                                              "setup_distributed", call="setup_distributed")}
    if broken == "unparsable":
        files["ddp_setup.py"] = SETUP + "\ndef broken(:\n"
    root = _write(tmp_path, files)
    result = scan_paths([str(root / "train.py")])
    assert not result.internal_errors
    assert "checkpoint-without-module" not in result.hits


def test_attribute_set_on_an_object_handed_to_a_helper(tmp_path):
    """``def wrap(trainer): trainer.model = DDP(...)``: the caller's object holds the wrapper afterwards."""
    root = _write(tmp_path, {
        "wrapping.py": HEAD + "\n\ndef wrap(state, rank):\n    state.model = DDP(state.model.cuda(rank), "
                              "device_ids=[rank])\n",
        "train.py": """import torch
import torch.distributed as dist
from wrapping import wrap


class State:
    def __init__(self, model):
        self.model = model


def main(rank, data):
    dist.init_process_group("nccl")
    torch.cuda.set_device(rank)
    state = State(torch.nn.Linear(4, 4))
    wrap(state, rank)
    opt = torch.optim.SGD(state.model.parameters(), lr=0.1)
    for x in data:
        state.model(x).sum().backward()
        opt.step()
    if rank == 0:
        torch.save(state.model.state_dict(), "ckpt.pt")


if __name__ == "__main__":
    main(0, [])
""",
    })
    hits = _hits([root / "train.py"])
    assert [h["line"] for h in hits.get("checkpoint-without-module", [])] == [21], hits


def test_helper_locals_do_not_capture_the_callers_names(tmp_path):
    """The helper's own ``sampler`` is not the caller's ``sampler``: the caller's loader stays sharded."""
    root = _write(tmp_path, {
        "loaders.py": HEAD + "\n\ndef build_eval_loader(data):\n    sampler = None\n"
                             "    return DataLoader(data, batch_size=8, sampler=sampler)\n",
        "train.py": """import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from loaders import build_eval_loader


def main(rank, data, model):
    dist.init_process_group("nccl")
    torch.cuda.set_device(rank)
    model = DDP(model.cuda(rank), device_ids=[rank])
    sampler = DistributedSampler(data)
    train_loader = DataLoader(data, batch_size=8, sampler=sampler)
    eval_loader = build_eval_loader(data)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x in train_loader:
            model(x).sum().backward()
            opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main(0, [], None)
""",
    })
    hits = _hits([root / "train.py"])
    assert "missing-distributed-sampler" not in hits and "missing-set-epoch" not in hits, hits


def test_line_mentions_in_messages_are_source_lines(tmp_path):
    root = _write(tmp_path, {"ddp_setup.py": SETUP, "train.py": ENTRY.format(
        imports="import torch.distributed as dist\nfrom ddp_setup import setup_distributed", call="setup_distributed")})
    for found in _hits([root / "train.py"]).values():
        for hit in found:
            assert hit["line"] < 100 and (hit.get("end_line") or 0) < 100, hit
            assert "line 1000" not in hit["detail"] and not any(
                word.isdigit() and int(word) >= 1000 for word in hit["detail"].split()), hit


@pytest.mark.parametrize("where", ["beside", "package-beside-the-folder"])
def test_relative_paths_find_the_local_modules(tmp_path, monkeypatch, where):
    """``troubleshoot scan train.py`` from the script's folder, ``tools/train.py`` from the repository root: the
    imports resolve against the real folders, not against an empty path."""
    if where == "beside":
        root = _write(tmp_path, {"ddp_setup.py": SETUP, "train.py": ENTRY.format(
            imports="import torch.distributed as dist\nfrom ddp_setup import setup_distributed",
            call="setup_distributed")})
        monkeypatch.chdir(root)
        entry = "train.py"
    else:
        root = _write(tmp_path, {"lib/__init__.py": "", "lib/ddp_setup.py": SETUP, "tools/train.py": ENTRY.format(
            imports="import torch.distributed as dist\nfrom lib.ddp_setup import setup_distributed",
            call="setup_distributed")})
        monkeypatch.chdir(root)
        entry = "tools/train.py"
    result = scan_paths([entry])
    assert result.facts["scan.uses_distributed"] is True
    assert "checkpoint-without-module" in result.hits and "missing-distributed-sampler" in result.hits, result.hits


def test_directory_scan_by_a_relative_path_reports_the_helpers_bug_once(tmp_path, monkeypatch):
    root = _write(tmp_path, {"ddp_setup.py": SETUP, "train.py": ENTRY.format(
        imports="import torch.distributed as dist\nfrom ddp_setup import setup_distributed", call="setup_distributed")})
    monkeypatch.chdir(root)
    found = scan_paths(["."]).hits["missing-distributed-sampler"]
    assert [(Path(h["path"]).name, h["line"]) for h in found] == [("ddp_setup.py", 12)], found
