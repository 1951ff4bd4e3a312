# expect: grad-accum-without-no-sync
# source: https://github.com/huggingface/transformers/pull/7742
# reason: With gradient_accumulation_steps > 1 the trainer ran backward through the DDP model on every micro-batch, so gradients were all-reduced on every step instead of once per optimizer step; the merged PR wraps the non-final micro-steps in model.no_sync() (wiki-2 epoch 111 s -> 85 s).
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoModelForCausalLM


class Trainer:
    def __init__(self, model, args, train_dataset):
        self.model = model
        self.args = args
        self.train_dataset = train_dataset
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)

    def get_train_dataloader(self):
        sampler = DistributedSampler(self.train_dataset) if self.args.local_rank != -1 else None
        return DataLoader(self.train_dataset, batch_size=self.args.per_device_train_batch_size, sampler=sampler,
                          shuffle=sampler is None)

    def train(self):
        model = self.model
        if self.args.local_rank != -1:
            model = DistributedDataParallel(model, device_ids=[self.args.local_rank],
                                            output_device=self.args.local_rank)
        loader = self.get_train_dataloader()
        for epoch in range(self.args.num_train_epochs):
            if isinstance(loader.sampler, DistributedSampler):
                loader.sampler.set_epoch(epoch)
            for step, (input_ids,) in enumerate(loader):
                loss = self.training_step(model, input_ids.to(self.args.device))
                if (step + 1) % self.args.gradient_accumulation_steps == 0:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), self.args.max_grad_norm)
                    self.optimizer.step()
                    model.zero_grad()

    def training_step(self, model, input_ids):
        model.train()
        loss = model(input_ids=input_ids, labels=input_ids).loss
        loss = loss / self.args.gradient_accumulation_steps
        loss.backward()
        return loss.detach()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name_or_path", default="gpt2")
    parser.add_argument("--per_device_train_batch_size", type=int, default=6)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=32)
    parser.add_argument("--learning_rate", type=float, default=5e-5)
    parser.add_argument("--max_grad_norm", type=float, default=1.0)
    parser.add_argument("--num_train_epochs", type=int, default=3)
    parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", -1)))
    args = parser.parse_args()
    if args.local_rank != -1:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group(backend="nccl")
        args.device = torch.device("cuda", args.local_rank)
    else:
        args.device = torch.device("cuda")
    if args.local_rank not in (-1, 0):
        dist.barrier()  # the first process downloads the model, the others wait and read the cache
    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path)
    if args.local_rank == 0:
        dist.barrier()
    model = model.to(args.device)
    dataset = TensorDataset(torch.randint(0, 50257, (2000, 512)))
    Trainer(model, args, dataset).train()


if __name__ == "__main__":
    main()
