# expect: hf-cache-contention
# source: https://github.com/huggingface/trl/issues/7223
# reason: Dataset preparation (load_dataset + the tokenizing map) is guarded by `PartialState().main_process_first()`, which waits only for the global rank 0; with the datasets cache on node-local disk, every rank of every other node misses the cache at the same time, prepares the whole dataset and races to write the same cache files (1 + (N-1)*G preparations instead of N); fixed in PR #7241 by letting the local main process of each node go first.
import argparse
import math

import torch
from accelerate import Accelerator, PartialState
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling, get_cosine_schedule_with_warmup


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="Qwen/Qwen2.5-0.5B")
    parser.add_argument("--dataset", default="allenai/tulu-3-sft-mixture")
    parser.add_argument("--cache_dir", default="/local_scratch/hf_datasets",
                        help="datasets cache on the node's local NVMe (the shared mount is slow)")
    parser.add_argument("--max_length", type=int, default=2048)
    parser.add_argument("--per_device_batch_size", type=int, default=4)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=8)
    parser.add_argument("--learning_rate", type=float, default=2e-5)
    parser.add_argument("--num_epochs", type=int, default=2)
    parser.add_argument("--output_dir", default="sft-out")
    return parser.parse_args()


def prepare_dataset(args, tokenizer):
    def tokenize(example):
        text = tokenizer.apply_chat_template(example["messages"], tokenize=False)
        return tokenizer(text, truncation=True, max_length=args.max_length)

    with PartialState().main_process_first():
        raw = load_dataset(args.dataset, split="train", cache_dir=args.cache_dir)
        dataset = raw.map(tokenize, remove_columns=raw.column_names, num_proc=8,
                          desc="Applying chat template to train dataset")
    return dataset


def main():
    args = parse_args()
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps,
                              mixed_precision="bf16")
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=torch.bfloat16)

    dataset = prepare_dataset(args, tokenizer)
    loader = DataLoader(dataset, batch_size=args.per_device_batch_size, shuffle=True,
                        collate_fn=DataCollatorForLanguageModeling(tokenizer, mlm=False))
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=0.0)
    steps = math.ceil(len(loader) / args.gradient_accumulation_steps) * args.num_epochs
    scheduler = get_cosine_schedule_with_warmup(optimizer, int(0.03 * steps), steps)
    model, optimizer, loader, scheduler = accelerator.prepare(model, optimizer, loader, scheduler)

    model.train()
    for epoch in range(args.num_epochs):
        for step, batch in enumerate(loader):
            with accelerator.accumulate(model):
                loss = model(**batch).loss
                accelerator.backward(loss)
                accelerator.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients and step % 100 == 0:
                accelerator.print(f"epoch {epoch} step {step} loss {loss.item():.4f}")

    accelerator.wait_for_everyone()
    accelerator.unwrap_model(model).save_pretrained(args.output_dir, is_main_process=accelerator.is_main_process,
                                                    save_function=accelerator.save)


if __name__ == "__main__":
    main()
