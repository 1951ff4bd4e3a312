# expect: hf-cache-contention
# source: https://github.com/vllm-project/llm-compressor/issues/2984
# reason: Labelled a bug: every DDP rank calls from_pretrained right after init, racing on the shared HF cache; the linked fix has rank 0 fill the cache behind a barrier first.
import os

import torch
import torch.distributed as dist
from transformers import AutoModelForCausalLM, AutoTokenizer


def init_dist():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
    dist.barrier()
    return local_rank


def main(model_id="Qwen/Qwen3-30B-A3B"):
    local_rank = init_dist()
    model = AutoModelForCausalLM.from_pretrained(model_id, torch_dtype="auto")
    tokenizer = AutoTokenizer.from_pretrained(model_id)
    model.to(torch.device("cuda", local_rank))
    batch = tokenizer(["calibration sample"] * 4, return_tensors="pt").to(model.device)
    with torch.no_grad():
        model(**batch)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
