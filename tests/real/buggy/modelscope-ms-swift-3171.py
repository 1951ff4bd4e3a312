# expect: gradient-checkpointing-conflict, unnecessary-find-unused-parameters
# source: https://github.com/modelscope/ms-swift/issues/3171
# reason: DDP training crashed with "Expected to mark a variable ready only once"; the maintainer's known answer is gradient checkpointing with use_reentrant=False (or DeepSpeed). Every parameter of this reduced model is used, so find_unused_parameters=True is also unnecessary here.
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoModelForCausalLM


def main(model_dir="/models/Qwen2.5-7B-Instruct"):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    if local_rank != 0:
        dist.barrier()
    model = AutoModelForCausalLM.from_pretrained(model_dir, torch_dtype=torch.bfloat16)
    if local_rank == 0:
        dist.barrier()
    model.gradient_checkpointing_enable()
    model.config.use_cache = False
    model = DDP(model.to(device), device_ids=[local_rank], find_unused_parameters=True)
    data = TensorDataset(torch.randint(0, 32000, (2000, 512)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=1, sampler=sampler)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-6)
    for epoch in range(1):
        sampler.set_epoch(epoch)
        for (input_ids,) in loader:
            input_ids = input_ids.to(device)
            loss = model(input_ids=input_ids, labels=input_ids).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
