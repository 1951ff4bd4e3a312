# expect: hf-cache-contention
# source: https://github.com/huggingface/transformers/issues/44
# reason: With two processes per node both ranks found the pretrained archive missing, downloaded it and copied it into the same cache entry at once, occasionally corrupting it; the fix was to keep ranks from preparing the same cache file concurrently.
import argparse
import logging
import os

import torch
from pytorch_pretrained_bert import BertAdam, BertForSequenceClassification
from torch.utils.data import DataLoader, RandomSampler, TensorDataset
from torch.utils.data.distributed import DistributedSampler

logger = logging.getLogger(__name__)


def load_features(max_seq_length, n=25000):
    input_ids = torch.randint(0, 30522, (n, max_seq_length))
    return TensorDataset(input_ids, torch.ones_like(input_ids), torch.zeros_like(input_ids), torch.randint(0, 2, (n,)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bert_model", default="bert-base-uncased")
    parser.add_argument("--output_dir", default="out")
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--train_batch_size", type=int, default=32)
    parser.add_argument("--learning_rate", type=float, default=5e-5)
    parser.add_argument("--num_train_epochs", type=float, default=3.0)
    parser.add_argument("--local_rank", type=int, default=-1)
    args = parser.parse_args()

    if args.local_rank == -1:
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        n_gpu = torch.cuda.device_count()
    else:
        torch.cuda.set_device(args.local_rank)
        device = torch.device("cuda", args.local_rank)
        n_gpu = 1
        torch.distributed.init_process_group(backend="nccl")
    logging.basicConfig(level=logging.INFO if args.local_rank in [-1, 0] else logging.WARN)

    model = BertForSequenceClassification.from_pretrained(args.bert_model, num_labels=2)
    model.to(device)
    if args.local_rank != -1:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank],
                                                          output_device=args.local_rank)
    elif n_gpu > 1:
        model = torch.nn.DataParallel(model)

    train_data = load_features(args.max_seq_length)
    train_sampler = RandomSampler(train_data) if args.local_rank == -1 else DistributedSampler(train_data)
    train_dataloader = DataLoader(train_data, sampler=train_sampler, batch_size=args.train_batch_size)
    optimizer = BertAdam(model.parameters(), lr=args.learning_rate, warmup=0.1,
                         t_total=int(len(train_dataloader) * args.num_train_epochs))
    model.train()
    for epoch in range(int(args.num_train_epochs)):
        if args.local_rank != -1:
            train_sampler.set_epoch(epoch)
        for input_ids, input_mask, segment_ids, label_ids in train_dataloader:
            loss = model(input_ids.to(device), segment_ids.to(device), input_mask.to(device), label_ids.to(device))
            if n_gpu > 1:
                loss = loss.mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()

    if args.local_rank in [-1, 0]:
        os.makedirs(args.output_dir, exist_ok=True)
        model_to_save = model.module if hasattr(model, "module") else model
        torch.save(model_to_save.state_dict(), os.path.join(args.output_dir, "pytorch_model.bin"))
    if args.local_rank != -1:
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
