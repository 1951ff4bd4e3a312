# expect: collective-mismatch
# source: https://github.com/huggingface/transformers-bloom-inference/pull/40
# reason: The DeepSpeed inference script called dist.barrier() inside a rank-0-only block, so rank 0 waited for ranks that never reach it and the run deadlocked; the maintainer merged the fix that makes every rank reach the barrier.
import argparse
import os

import deepspeed
import torch
import torch.distributed as dist
from huggingface_hub import snapshot_download
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

parser = argparse.ArgumentParser()
parser.add_argument("--name", default="bigscience/bloom")
parser.add_argument("--local_rank", type=int, default=0)
parser.add_argument("--batch_size", type=int, default=1)
args = parser.parse_args()

local_rank = int(os.getenv("LOCAL_RANK", "0"))
world_size = int(os.getenv("WORLD_SIZE", "1"))
deepspeed.init_distributed("nccl")
rank = dist.get_rank()


def get_repo_root(model_name_or_path):
    if rank == 0:
        snapshot_download(model_name_or_path, allow_patterns=["*"])
        dist.barrier()
    return snapshot_download(model_name_or_path, allow_patterns=["*"], local_files_only=True)


repo_root = get_repo_root(args.name)
tokenizer = AutoTokenizer.from_pretrained(repo_root)
config = AutoConfig.from_pretrained(repo_root)
with deepspeed.OnDevice(dtype=torch.float16, device="meta"):
    model = AutoModelForCausalLM.from_config(config, torch_dtype=torch.bfloat16)
model = model.eval()
model = deepspeed.init_inference(model, mp_size=world_size, dtype=torch.float16, replace_with_kernel_inject=True,
                                 base_dir=repo_root)
model = model.module

inputs = tokenizer(["DeepSpeed is"] * args.batch_size, return_tensors="pt", padding=True)
inputs = {k: v.to(torch.cuda.current_device()) for k, v in inputs.items()}
outputs = model.generate(**inputs, max_new_tokens=100, do_sample=False)
if rank == 0:
    print(tokenizer.batch_decode(outputs, skip_special_tokens=True))
