# expect: missing-set-epoch
# source: https://github.com/huggingface/transformers/issues/3721
# reason: The language-modeling example (transformers 2.8) trained with a DistributedSampler when --local_rank != -1 but never called train_sampler.set_epoch(epoch) before each epoch, so every epoch replayed the same shuffled order on every rank; the reporter pointed to the PyTorch ImageNet example's set_epoch call as the fix and the issue was closed.
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, RandomSampler, TensorDataset
from torch.utils.data.distributed import DistributedSampler
from tqdm import tqdm, trange


def set_seed(args):
    torch.manual_seed(args.seed)
    if args.n_gpu > 0:
        torch.cuda.manual_seed_all(args.seed)


class MaskedLM(nn.Module):
    def __init__(self, vocab=30522, dim=768, layers=6):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, dim)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(dim, 12, 4 * dim, batch_first=True), layers)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids, labels):
        logits = self.lm_head(self.encoder(self.embeddings(input_ids)))
        return (nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1), ignore_index=-100),)


def train(args, train_dataset, model):
    args.train_batch_size = args.per_gpu_train_batch_size * max(1, args.n_gpu)
    train_sampler = RandomSampler(train_dataset) if args.local_rank == -1 else DistributedSampler(train_dataset)
    train_dataloader = DataLoader(train_dataset, sampler=train_sampler, batch_size=args.train_batch_size)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, eps=1e-8)
    if args.local_rank != -1:
        model = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[args.local_rank], output_device=args.local_rank)

    global_step, tr_loss = 0, 0.0
    model.zero_grad()
    train_iterator = trange(0, int(args.num_train_epochs), desc="Epoch", disable=args.local_rank not in [-1, 0])
    set_seed(args)
    for _ in train_iterator:
        epoch_iterator = tqdm(train_dataloader, desc="Iteration", disable=args.local_rank not in [-1, 0])
        for step, (inputs, labels) in enumerate(epoch_iterator):
            inputs, labels = inputs.to(args.device), labels.to(args.device)
            model.train()
            loss = model(inputs, labels=labels)[0]
            if args.gradient_accumulation_steps > 1:
                loss = loss / args.gradient_accumulation_steps
            loss.backward()
            tr_loss += loss.item()
            if (step + 1) % args.gradient_accumulation_steps == 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                optimizer.step()
                model.zero_grad()
                global_step += 1
    return global_step, tr_loss / max(global_step, 1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--per_gpu_train_batch_size", type=int, default=4)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--learning_rate", type=float, default=5e-5)
    parser.add_argument("--max_grad_norm", type=float, default=1.0)
    parser.add_argument("--num_train_epochs", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--local_rank", type=int, default=-1)
    args = parser.parse_args()

    if args.local_rank == -1:
        args.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        args.n_gpu = torch.cuda.device_count()
    else:
        torch.cuda.set_device(args.local_rank)
        args.device = torch.device("cuda", args.local_rank)
        torch.distributed.init_process_group(backend="nccl")
        args.n_gpu = 1
    set_seed(args)

    if args.local_rank not in [-1, 0]:
        torch.distributed.barrier()
    model = MaskedLM()
    if args.local_rank == 0:
        torch.distributed.barrier()
    model.to(args.device)

    ids = torch.randint(0, 30522, (20000, 128))
    train_dataset = TensorDataset(ids, ids.clone())
    global_step, tr_loss = train(args, train_dataset, model)
    if args.local_rank in [-1, 0]:
        print(f" global_step = {global_step}, average loss = {tr_loss}")


if __name__ == "__main__":
    main()
