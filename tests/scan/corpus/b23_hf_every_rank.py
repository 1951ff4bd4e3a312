# expect: hf-cache-contention
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from transformers import AutoModelForCausalLM, AutoTokenizer


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    tokenizer = AutoTokenizer.from_pretrained("gpt2")
    model = AutoModelForCausalLM.from_pretrained("gpt2").cuda()
    model = DDP(model, device_ids=[local_rank])
    batch = tokenizer(["hello world"], return_tensors="pt").to("cuda")
    out = model(**batch, labels=batch["input_ids"])
    out.loss.backward()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
