# expect: hf-cache-contention
# source: https://github.com/huggingface/transformers/issues/12345
# reason: The distributed example scripts ran datasets.map on every process at once, so each rank tokenized the whole dataset and raced on the same cache files; the maintainers resolved it by processing on the main process first (training_args.main_process_first()) and letting the other ranks load the cache.
import os

import torch
import torch.distributed as dist
from datasets import load_dataset
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoModelForCausalLM, AutoTokenizer, default_data_collator


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    if dist.get_rank() == 0:
        AutoTokenizer.from_pretrained("gpt2")
        AutoModelForCausalLM.from_pretrained("gpt2")
    dist.barrier()
    tokenizer = AutoTokenizer.from_pretrained("gpt2")
    model = AutoModelForCausalLM.from_pretrained("gpt2").cuda()
    raw_datasets = load_dataset("wikitext", "wikitext-103-raw-v1")

    def tokenize_function(examples):
        return tokenizer(examples["text"])

    tokenized = raw_datasets.map(tokenize_function, batched=True, num_proc=8, remove_columns=["text"])

    def group_texts(examples, block_size=1024):
        concatenated = {k: sum(examples[k], []) for k in examples.keys()}
        total = (len(concatenated["input_ids"]) // block_size) * block_size
        result = {k: [t[i:i + block_size] for i in range(0, total, block_size)] for k, t in concatenated.items()}
        result["labels"] = result["input_ids"].copy()
        return result

    lm_datasets = tokenized.map(group_texts, batched=True, num_proc=8)
    train_dataset = lm_datasets["train"]
    sampler = DistributedSampler(train_dataset)
    loader = DataLoader(train_dataset, batch_size=8, sampler=sampler, collate_fn=default_data_collator)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for batch in loader:
            loss = model(**{k: v.cuda() for k, v in batch.items()}).loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
