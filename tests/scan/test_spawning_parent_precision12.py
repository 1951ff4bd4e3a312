"""A Hub load (or a ``datasets`` map) in the process that spawns the workers runs once per node, before any worker
starts: not every rank at once (direct-preference-optimization's train.py loads the policy in ``main()`` and hands
it to ``mp.spawn``). The same load inside the spawned worker still warns."""

from __future__ import annotations

import pytest

from tests.scan.conftest import shows

TEMPLATE = '''import os
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
from transformers import AutoModelForCausalLM, AutoTokenizer


def worker(rank, world_size, model_name, model):
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "29500")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
{in_worker}
    ddp = DDP(model.cuda(rank), device_ids=[rank])
    opt = torch.optim.AdamW(ddp.parameters(), lr=1e-5)
    for step in range(10):
        ids = torch.randint(0, 100, (2, 16), device=rank)
        loss = ddp(input_ids=ids, labels=ids).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


{launcher}
'''
IN_MAIN = '''def main(model_name="gpt2"):
    world_size = torch.cuda.device_count()
    model = AutoModelForCausalLM.from_pretrained(model_name)
    if world_size > 1:
        mp.spawn(worker, args=(world_size, model_name, model), nprocs=world_size, join=True)
    else:
        worker(0, 1, model_name, model)


if __name__ == "__main__":
    main()'''
IN_MAIN_BLOCK = '''if __name__ == "__main__":
    name = "gpt2"
    model = AutoModelForCausalLM.from_pretrained(name)
    AutoTokenizer.from_pretrained(name)
    torch.multiprocessing.spawn(fn=worker, args=(torch.cuda.device_count(), name, model),
                                nprocs=torch.cuda.device_count())'''
START_PROCESSES = '''def launch():
    n = torch.cuda.device_count()
    model = AutoModelForCausalLM.from_pretrained("gpt2")
    mp.start_processes(worker, args=(n, "gpt2", model), nprocs=n, start_method="spawn")


if __name__ == "__main__":
    launch()'''
CASES = {
    "loaded in main() before mp.spawn": ("    pass", IN_MAIN, False),
    "loaded in the __main__ block before spawn(fn=...)": ("    pass", IN_MAIN_BLOCK, False),
    "loaded before start_processes": ("    pass", START_PROCESSES, False),
    "loaded again in the worker": ("    model = AutoModelForCausalLM.from_pretrained(model_name)", IN_MAIN, True),
}


@pytest.mark.parametrize("in_worker, launcher, warns", CASES.values(), ids=CASES.keys())
def test_the_spawning_process_loads_once(tmp_path, in_worker, launcher, warns):
    code = TEMPLATE.format(in_worker=in_worker, launcher=launcher)
    assert shows(tmp_path, "hf-cache-contention", code) is warns
