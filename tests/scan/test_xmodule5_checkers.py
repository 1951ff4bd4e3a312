"""Precision rules that set-up read through helpers needed (real correct files whose helper makes the model DDP):
accumulation off by default, a loader built only for an iterable dataset, a model loaded through its own method."""

from __future__ import annotations

from troubleshooter.scan import scan_paths

HEAD = """import argparse
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
"""


def _ids(tmp_path, code: str) -> set[str]:
    path = tmp_path / "train.py"
    path.write_text(code)
    return set(scan_paths([str(path)]).hits)


ACCUMULATION = HEAD + """
parser = argparse.ArgumentParser()
parser.add_argument("--update_freq", type=int, default={default})
args = parser.parse_args()


def main(model, data, opt):
    dist.init_process_group("nccl")
    model = DDP(model)
    loader = DataLoader(data, sampler=DistributedSampler(data))
    for step, x in enumerate(loader):
        loss = model(x).sum() / args.update_freq
        loss.backward()
        if (step + 1) % args.update_freq == 0:
            opt.step()
            opt.zero_grad()


if __name__ == "__main__":
    main(None, None, None)
"""


def test_accumulation_count_whose_option_defaults_to_one_is_off_by_default(tmp_path):
    assert "grad-accum-without-no-sync" not in _ids(tmp_path, ACCUMULATION.format(default=1))


def test_accumulation_count_with_a_larger_default_is_flagged(tmp_path):
    assert "grad-accum-without-no-sync" in _ids(tmp_path, ACCUMULATION.format(default=4))


FLAG_ACCUMULATION = HEAD + """
parser = argparse.ArgumentParser()
parser.add_argument("--grad_acc", type=int, default={default})
args = parser.parse_args()


def step(loss, opt, is_update):
    loss.backward()
    if is_update:
        opt.step()
        opt.zero_grad()


def main(model, data, opt):
    dist.init_process_group("nccl")
    model = DDP(model)
    loader = DataLoader(data, sampler=DistributedSampler(data))
    for i, x in enumerate(loader):
        is_update = i % args.grad_acc == 0
        step(model(x).sum(), opt, is_update)


if __name__ == "__main__":
    main(None, None, None)
"""


def test_accumulation_through_a_flag_reads_the_count_of_the_flag(tmp_path):
    assert "grad-accum-without-no-sync" not in _ids(tmp_path, FLAG_ACCUMULATION.format(default=1))
    assert "grad-accum-without-no-sync" in _ids(tmp_path, FLAG_ACCUMULATION.format(default=8))


ITERABLE = HEAD + """

def build(data, train):
    if isinstance(data, torch.utils.data.IterableDataset):
        loader = DataLoader(data, batch_size=8)
    else:
        loader = {other}
    return loader


def main(model, data, opt):
    dist.init_process_group("nccl")
    model = DDP(model)
    train_loader = build(data, True)
    for epoch in range(3):
        for x in train_loader:
            model(x).sum().backward()
            opt.step()


if __name__ == "__main__":
    main(None, None, None)
"""


def test_loader_built_only_for_an_iterable_dataset_needs_no_sampler(tmp_path):
    sharded = "DataLoader(data, batch_size=8, sampler=DistributedSampler(data))"
    assert "missing-distributed-sampler" not in _ids(tmp_path, ITERABLE.format(other=sharded))
    # the other arm still counts
    assert "missing-distributed-sampler" in _ids(tmp_path, ITERABLE.format(other="DataLoader(data, shuffle=True)"))


OWN_LOADER = HEAD + """

def main(model, data, opt, path):
    dist.init_process_group("nccl")
    {load}
    model = DDP(model.cuda())
    loader = DataLoader(data, sampler=DistributedSampler(data))
    for x in loader:
        model(x).sum().backward()
        opt.step()
    if dist.get_rank() == 0:
        torch.save(model.state_dict(), "ckpt.pt")


if __name__ == "__main__":
    main(None, None, None, "init.pt")
"""


def test_weights_loaded_through_the_models_own_method_may_rename_keys(tmp_path):
    assert "checkpoint-without-module" not in _ids(tmp_path, OWN_LOADER.format(
        load="model.load_weight(torch.load(path))"))
    assert "checkpoint-without-module" in _ids(tmp_path, OWN_LOADER.format(
        load="model.load_state_dict(torch.load(path))"))
