"""collective-mismatch on the rank-0 evaluation of the HF legacy example scripts (run_squad / run_glue and their
many forks, e.g. castorini/DeeBERT examples/run_glue.py): ``evaluate()`` runs under a rank-0 guard and loads its
data with ``load_and_cache_examples(..., evaluate=True)``, whose barriers are guarded by ``and not evaluate``. The
call's constant arguments decide the callee's guards, so no collective is reached; calls that reach one still warn."""

from __future__ import annotations

from pathlib import Path

from tests.scan.quality import shown_findings

SCRIPT = '''
import os
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def load_features(local_rank, split{default}):
    {guard_in}
        dist.barrier()  # the other ranks wait until rank 0 has written the cache
    data = TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,)))
    {guard_out}
        dist.barrier()
    return data


def evaluate(local_rank, model):
    data = load_features(local_rank, {eval_arg})
    with torch.no_grad():
        return sum(model(x).sum().item() for x, _ in DataLoader(data, batch_size=8))


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)
    data = load_features(local_rank, {train_arg})
    loader = DataLoader(data, batch_size=8, sampler=DistributedSampler(data))
    model = DDP(nn.Linear(8, 2).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        loader.sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    if local_rank in [-1, 0]:
        print(evaluate(local_rank, model.module))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''

FLAG_GUARDS = ("if local_rank not in [-1, 0] and not evaluate:", "if local_rank == 0 and not evaluate:")
MODE_GUARDS = ('if local_rank not in [-1, 0] and split == "train":', 'if local_rank == 0 and split == "train":')


def _collective_hits(tmp_path: Path, **parts) -> list:
    path = tmp_path / "train.py"
    path.write_text(SCRIPT.format(**parts), encoding="utf-8")
    hits, facts = shown_findings([str(path)])
    assert facts["scan.uses_distributed"] is True
    return hits.get("collective-mismatch", [])


def _parts(guards, default, eval_arg, train_arg):
    return dict(guard_in=guards[0], guard_out=guards[1], default=default, eval_arg=eval_arg, train_arg=train_arg)


def test_a_literal_argument_that_skips_the_callees_barriers_clears_the_rank0_evaluation(tmp_path):
    spellings = [
        _parts(FLAG_GUARDS, ", evaluate=False", '"dev", evaluate=True', '"train"'),  # keyword literal, default
        _parts(FLAG_GUARDS, ", evaluate=False", '"dev", True', '"train", False'),  # positional literals
        _parts(MODE_GUARDS, "", '"dev"', '"train"'),  # a comparison on the parameter
        _parts(MODE_GUARDS, '="train"', 'split="test"', ""),  # a keyword against a default
    ]
    for parts in spellings:
        assert _collective_hits(tmp_path, **parts) == [], parts


def test_a_call_that_reaches_the_barrier_on_rank_0_still_warns(tmp_path):
    near_misses = [
        _parts(FLAG_GUARDS, ", evaluate=False", '"dev", evaluate=False', '"train"'),  # the literal enables it
        _parts(FLAG_GUARDS, ", evaluate=False", '"dev"', '"train"'),  # the default enables it
        _parts(FLAG_GUARDS, ", evaluate=False", '"dev", evaluate=os.environ.get("EVAL") == "1"', '"train"'),  # unknown
        _parts(MODE_GUARDS, "", '"train"', '"train"'),
        _parts(("if local_rank not in [-1, 0]:", "if local_rank == 0:"), ", evaluate=False",
               '"dev", evaluate=True', '"train"'),  # a guard without the flag: rank 0 waits in the barrier
    ]
    for parts in near_misses:
        hits = _collective_hits(tmp_path, **parts)
        assert len(hits) == 1 and "evaluate()" in str(hits[0]), (parts, hits)


def test_a_flag_passed_on_by_name_keeps_its_literal(tmp_path):
    parts = _parts(FLAG_GUARDS, ", evaluate=False", '"dev", evaluate=True', '"train"')
    code = SCRIPT.format(**parts).replace(
        "def evaluate(local_rank, model):\n    data = load_features(local_rank, \"dev\", evaluate=True)",
        "def evaluate(local_rank, model, final=True):\n    data = load_features(local_rank, \"dev\", evaluate=final)")
    assert "evaluate=final" in code
    path = tmp_path / "train.py"
    path.write_text(code, encoding="utf-8")
    assert shown_findings([str(path)])[0].get("collective-mismatch") is None
    path.write_text(code.replace("final=True", "final=False"), encoding="utf-8")
    assert shown_findings([str(path)])[0].get("collective-mismatch")


def test_a_module_function_named_like_the_flag_is_truthy(tmp_path):
    """``not evaluate`` where ``evaluate`` is no parameter but the module's own function: always false, so the
    barrier never runs (the run_ner.py variant of the family)."""
    parts = _parts(FLAG_GUARDS, "", '"dev"', '"train"')
    assert _collective_hits(tmp_path, **parts) == []


def test_an_imported_function_renamed_like_a_local_one_is_not_that_function(tmp_path):
    """``from squad_metrics import main as evaluate_on_squad``: a call of it does not run this file's ``main``."""
    parts = _parts(FLAG_GUARDS, ", evaluate=False", '"dev", evaluate=True', '"train"')
    code = SCRIPT.format(**parts).replace(
        "import os\n", "import os\nfrom squad_metrics import main as evaluate_on_squad\n").replace(
        "        return sum(model(x).sum().item() for x, _ in DataLoader(data, batch_size=8))",
        "        outputs = [model(x) for x, _ in DataLoader(data, batch_size=8)]\n    return evaluate_on_squad(outputs)")
    path = tmp_path / "train.py"
    path.write_text(code, encoding="utf-8")
    assert shown_findings([str(path)])[0].get("collective-mismatch") is None


BAR_SCRIPT = '''
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset
from tqdm.auto import tqdm


def evaluate(model, loader, accelerator):
    outputs = [accelerator.gather_for_metrics(model(x)) for x, in loader]
    return torch.cat(outputs).mean().item()


def main(quiet=False, eval_steps=100):
    accelerator = Accelerator()
    model = torch.nn.Linear(8, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train = DataLoader(TensorDataset(torch.randn(640, 8)), batch_size=8, shuffle=True)
    valid = DataLoader(TensorDataset(torch.randn(64, 8)), batch_size=8)
    model, optimizer, train, valid = accelerator.prepare(model, optimizer, train, valid)
    bar = tqdm(range(len(train)), disable={disable})
    steps = 0
    for x, in train:
        accelerator.backward(model(x).pow(2).mean())
        optimizer.step()
        optimizer.zero_grad()
        bar.update(1)
        steps += 1
        if {counter} % eval_steps == 0:
            print(evaluate(model, valid, accelerator))


if __name__ == "__main__":
    main()
'''


def test_a_counter_of_a_progress_bar_disabled_off_the_main_process_is_a_rank_test(tmp_path):
    """A tqdm bar made with ``disable=not accelerator.is_main_process`` does not count on the other processes: a
    collective triggered from its counter runs on some processes only (transformers#31532)."""
    path = tmp_path / "train.py"
    for disable, counter, warns in [("not accelerator.is_main_process", "bar.n", True),
                                    ("not accelerator.is_local_main_process", "bar.n", True),
                                    ("accelerator.process_index != 0", "bar.n", True),
                                    ("quiet", "bar.n", False),  # a switch the same on every process
                                    ("not accelerator.is_main_process", "steps", False)]:  # a counter of its own
        path.write_text(BAR_SCRIPT.format(disable=disable, counter=counter), encoding="utf-8")
        hits, facts = shown_findings([str(path)])
        assert facts["scan.uses_distributed"] is True
        assert bool(hits.get("collective-mismatch")) is warns, (disable, counter, hits)


def test_a_local_name_holding_only_evaluation_splits_decides_the_callees_guards(tmp_path):
    """``split = "dev"`` / ``split = "test"`` then ``evaluate(..., split=split)`` on rank 0 (MERIt's trainers): each
    value the name can hold is tried; one that reaches the training split's barrier still warns."""
    construct = Path(__file__).resolve().parents[1] / "real" / "constructs" / "rank0_evaluation_of_a_literal_split.py"
    code = construct.read_text(encoding="utf-8")
    path = tmp_path / "train.py"
    for old, new, warns in [("", "", False),
                            ('split = "test"', 'split = "train"', True),  # one of the values reaches the barrier
                            ('split = "test"', 'split = os.environ["SPLIT"]', True),  # not a literal: unknown
                            ('        split = "dev"\n', '        split = "dev"\n        split += "2"\n', True)]:
        assert old in code
        path.write_text(code.replace(old, new) if old else code, encoding="utf-8")
        hits, _ = shown_findings([str(path)])
        assert bool(hits.get("collective-mismatch")) is warns, (new, hits)


FSDP_LOAD = '''
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, StateDictType


def load_model(args, fsdp_plugin, model, path):
    dist.barrier()
    if {test}:
        if type(model) is not FSDP and dist.get_rank() != 0:
            return
        state = torch.load(path)
    else:
        state = torch.load(f"{{path}}.rank{{dist.get_rank()}}")
    model.load_state_dict(state)
    dist.barrier()


def main():
    dist.init_process_group("nccl")
    model = FSDP(torch.nn.Linear(8, 8).cuda())
    load_model(None, None, model, "ckpt.pt")


main()
'''


def test_a_setting_of_an_object_named_like_a_distributed_flag_is_not_the_distributed_arm(tmp_path):
    """``if fsdp_plugin.state_dict_type == FULL_STATE_DICT:`` (accelerate's fsdp_utils) tests a setting, not whether
    the run is distributed: an early return off rank 0 inside it does not make the code after the ``if``
    rank-0-only. A test on the flag itself (``if args.distributed:``) still does."""
    path = tmp_path / "train.py"
    for test, warns in [("fsdp_plugin.state_dict_type == StateDictType.FULL_STATE_DICT", False),
                        ("args.distributed", True),
                        ("dist.is_initialized()", True)]:
        path.write_text(FSDP_LOAD.format(test=test), encoding="utf-8")
        hits, _ = shown_findings([str(path)])
        assert bool(hits.get("collective-mismatch")) is warns, (test, hits)


EARLY_STOP = '''
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

DATA = TensorDataset(torch.randn(512, 8), torch.randn(512, 1))


def get_train_dataloader():
    return DataLoader(DATA, batch_size=16, sampler=DistributedSampler(DATA))


def validate(model):
    with torch.no_grad():
        return sum(torch.nn.functional.mse_loss(model(x), y).item() for x, y in get_train_dataloader())


def main(max_steps=1000):
    dist.init_process_group("gloo")
    model = DDP(torch.nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = get_train_dataloader()
    steps = 0
    for epoch in range(10):
        loader.sampler.set_epoch(epoch)
        for x, y in loader:
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
            optimizer.zero_grad()
            steps += 1
        {stop}
        if should_stop:
            break


main()
'''


def test_a_stop_on_the_loaders_length_is_the_same_on_every_rank(tmp_path):
    """A DataLoader over a DistributedSampler has the same length on every rank (HF Trainer's
    ``should_training_stop`` from steps counted against ``len(get_train_dataloader())``): not a per-rank metric.
    A stop on a local evaluation's result still warns."""
    path = tmp_path / "train.py"
    for stop, warns in [("should_stop = steps >= len(get_train_dataloader()) * 3", False),
                        ("should_stop = validate(model) < 0.01", True)]:
        path.write_text(EARLY_STOP.format(stop=stop), encoding="utf-8")
        hits, _ = shown_findings([str(path)])
        assert bool(hits.get("collective-mismatch")) is warns, (stop, hits)


def test_what_the_call_sites_own_tests_establish_reaches_the_callee(tmp_path):
    """``if args.local_rank == -1 and args.evaluate_during_training: evaluate(args, ...)`` inside the rank-0 logging
    branch (older HF legacy scripts, whose loader's second barrier is ``if args.local_rank == 0:`` alone): the call
    runs only without a process group, so the callee's rank-0 barrier is not reached. The same call without that
    test still warns (the scripts' distributed ``--do_eval`` path hangs there)."""
    parts = _parts(("if local_rank not in [-1, 0]:", "if local_rank == 0:"), "", '"dev"', '"train"')
    code = SCRIPT.format(**parts)
    old = "    if local_rank in [-1, 0]:\n        print(evaluate(local_rank, model.module))"
    assert old in code
    path = tmp_path / "train.py"
    for new, warns in [("    if local_rank in [-1, 0]:\n        if local_rank == -1:\n"
                        "            print(evaluate(local_rank, model.module))", False),
                       ("    if local_rank in [-1, 0]:\n        if local_rank != -1:\n"
                        "            print(evaluate(local_rank, model.module))", True),
                       (old, True)]:
        path.write_text(code.replace(old, new), encoding="utf-8")
        hits, _ = shown_findings([str(path)])
        assert bool(hits.get("collective-mismatch")) is warns, (new, hits)
