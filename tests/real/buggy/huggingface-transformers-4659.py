# expect: gradient-checkpointing-conflict
# source: https://github.com/huggingface/transformers/pull/4659
# reason: BERT pre-training with gradient checkpointing turned on in the model config and DDP built with find_unused_parameters=True fails in backward with "Expected to mark a variable ready only once"; the PR author's reproduction and answer: with find_unused_parameters=False it works.
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from transformers import BertConfig, BertForPreTraining


class PretrainingSet(torch.utils.data.Dataset):
    def __init__(self, n=4096, seq_len=128, vocab=30522):
        self.ids = torch.randint(0, vocab, (n, seq_len))

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        ids = self.ids[i]
        return {"input_ids": ids, "labels": ids.clone(), "next_sentence_label": torch.tensor(0)}


def build_model(use_checkpointing):
    config = BertConfig.from_pretrained("bert-base-uncased")
    config.gradient_checkpointing = use_checkpointing
    return BertForPreTraining.from_pretrained("bert-base-uncased", config=config)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = build_model(use_checkpointing=True).cuda(local_rank)
    model = DistributedDataParallel(model, device_ids=[local_rank], find_unused_parameters=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    dataset = PretrainingSet()
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=16, sampler=sampler)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for batch in loader:
            batch = {k: v.cuda(local_rank) for k, v in batch.items()}
            loss = model(**batch).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
