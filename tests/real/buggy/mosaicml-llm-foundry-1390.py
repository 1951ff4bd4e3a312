# expect: hf-cache-contention
# source: https://github.com/mosaicml/llm-foundry/pull/1390
# reason: Every process of the distributed conversion loaded the tokenizer with AutoTokenizer.from_pretrained at the same time into an empty Hugging Face cache and raced on its files; the merged fix loads it once on the main process first so the cache is filled before the other processes read it.
import os

import torch.distributed as dist
from transformers import AutoTokenizer


def convert_text_to_tokens(tokenizer_name, input_files, output_folder):
    dist.init_process_group(backend="gloo")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_name)
    for path in input_files[rank::world_size]:
        with open(path) as f:
            ids = tokenizer(f.read())["input_ids"]
        with open(os.path.join(output_folder, os.path.basename(path) + ".ids"), "w") as out:
            out.write(" ".join(map(str, ids)))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    convert_text_to_tokens("EleutherAI/gpt-neox-20b", sorted(os.listdir("texts")), "tokens")
