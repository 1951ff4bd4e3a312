# expect: missing-set-epoch
# source: https://github.com/01-ai/Yi/issues/132
# reason: The SFT fine-tuning script (DeepSpeed-Chat style: --local_rank argument, DistributedSampler when distributed, RandomSampler otherwise, deepspeed.initialize) ran `for epoch in range(args.num_train_epochs)` without ever calling train_sampler.set_epoch(epoch), so every epoch saw the same order; a maintainer confirmed ("yes, it can be added").
import argparse
import math
import os
import sys

import deepspeed
import torch
from torch.utils.data import DataLoader, RandomSampler, SequentialSampler
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoModelForCausalLM, default_data_collator, get_scheduler

sys.path.append(os.path.abspath(os.path.join(os.path.dirname(__file__), os.path.pardir)))
from utils.data.data_utils import create_prompt_dataset  # noqa: E402
from utils.model.model_utils import create_hf_model  # noqa: E402
from utils.utils import load_hf_tokenizer, print_rank_0, set_random_seed, to_device  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description="supervised fine-tuning")
    p.add_argument("--data_path", nargs="*", default=["yi_example_dataset"])
    p.add_argument("--model_name_or_path", type=str, required=True)
    p.add_argument("--per_device_train_batch_size", type=int, default=2)
    p.add_argument("--per_device_eval_batch_size", type=int, default=2)
    p.add_argument("--max_seq_len", type=int, default=4096)
    p.add_argument("--learning_rate", type=float, default=2e-6)
    p.add_argument("--num_train_epochs", type=int, default=4)
    p.add_argument("--gradient_accumulation_steps", type=int, default=1)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--local_rank", type=int, default=-1)
    p.add_argument("--zero_stage", type=int, default=2)
    p.add_argument("--output_dir", type=str, default=None)
    p = deepspeed.add_config_arguments(p)
    return p.parse_args()


def ds_config_for(args):
    world = torch.distributed.get_world_size()
    return {
        "train_micro_batch_size_per_gpu": args.per_device_train_batch_size,
        "train_batch_size": args.per_device_train_batch_size * world * args.gradient_accumulation_steps,
        "zero_optimization": {"stage": args.zero_stage},
        "bf16": {"enabled": True},
        "gradient_clipping": 1.0,
    }


def evaluate(engine, loader, device):
    engine.eval()
    total = 0.0
    steps = 0
    for batch in loader:
        batch = to_device(batch, device)
        with torch.no_grad():
            total += engine(**batch).loss.float()
        steps += 1
    mean = total / max(steps, 1)
    torch.distributed.all_reduce(mean)
    mean = mean / torch.distributed.get_world_size()
    return mean.item(), math.exp(min(mean.item(), 20.0))


def main():
    args = parse_args()
    if args.local_rank == -1:
        device = torch.device("cuda")
    else:
        torch.cuda.set_device(args.local_rank)
        device = torch.device("cuda", args.local_rank)
        deepspeed.init_distributed()
    args.global_rank = torch.distributed.get_rank()

    ds_config = ds_config_for(args)
    set_random_seed(args.seed)
    torch.distributed.barrier()

    tokenizer = load_hf_tokenizer(args.model_name_or_path)
    model = create_hf_model(AutoModelForCausalLM, args.model_name_or_path, tokenizer, ds_config)

    train_dataset, eval_dataset = create_prompt_dataset(
        args.local_rank, args.data_path, args.seed, tokenizer, args.max_seq_len
    )
    if args.local_rank == -1:
        train_sampler = RandomSampler(train_dataset)
        eval_sampler = SequentialSampler(eval_dataset)
    else:
        train_sampler = DistributedSampler(train_dataset)
        eval_sampler = DistributedSampler(eval_dataset)
    train_loader = DataLoader(
        train_dataset, sampler=train_sampler, batch_size=args.per_device_train_batch_size, collate_fn=default_data_collator
    )
    eval_loader = DataLoader(
        eval_dataset, sampler=eval_sampler, batch_size=args.per_device_eval_batch_size, collate_fn=default_data_collator
    )

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, betas=(0.9, 0.95))
    updates_per_epoch = math.ceil(len(train_loader) / args.gradient_accumulation_steps)
    scheduler = get_scheduler(
        "cosine", optimizer=optimizer, num_warmup_steps=0, num_training_steps=args.num_train_epochs * updates_per_epoch
    )
    engine, optimizer, _, scheduler = deepspeed.initialize(
        model=model, optimizer=optimizer, args=args, config=ds_config, lr_scheduler=scheduler, dist_init_required=True
    )

    print_rank_0("***** Running training *****", args.global_rank)
    for epoch in range(args.num_train_epochs):
        print_rank_0(
            f"Beginning of Epoch {epoch + 1}/{args.num_train_epochs}, Total Micro Batches {len(train_loader)}",
            args.global_rank,
        )
        engine.train()
        for step, batch in enumerate(train_loader):
            batch = to_device(batch, device)
            loss = engine(**batch, use_cache=False).loss
            engine.backward(loss)
            engine.step()

        eval_loss, ppl = evaluate(engine, eval_loader, device)
        print_rank_0(f"epoch {epoch + 1}: eval_loss {eval_loss:.4f} ppl {ppl:.2f}", args.global_rank)

    if args.output_dir is not None and args.global_rank == 0:
        engine.module.save_pretrained(args.output_dir)
        tokenizer.save_pretrained(args.output_dir)


if __name__ == "__main__":
    main()
