# expect: unused-parameters-error
# source: https://github.com/princeton-nlp/SimCSE/pull/78
# reason: The contrastive sentence encoder takes the [CLS] vector of the last hidden state (or the mean of it) and never uses the BERT pooler's output, and its own MLP runs only for one pooler type; under DistributedDataParallel those parameters get no gradient, so training fails with "Expected to have finished reduction in the prior iteration". The reporter's fix removes the unused parameters (no pooling layer).
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from transformers import BertModel, BertTokenizerFast


class Pooler(nn.Module):
    def __init__(self, pooler_type):
        super().__init__()
        self.pooler_type = pooler_type

    def forward(self, attention_mask, outputs):
        last = outputs.last_hidden_state
        if self.pooler_type in ("cls", "cls_before_pooler"):
            return last[:, 0]
        mask = attention_mask.unsqueeze(-1)
        return (last * mask).sum(1) / mask.sum(1)


class BertForCL(nn.Module):
    def __init__(self, name, pooler_type="cls_before_pooler", temp=0.05):
        super().__init__()
        self.bert = BertModel.from_pretrained(name)
        hidden = self.bert.config.hidden_size
        self.mlp = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh())
        self.pooler = Pooler(pooler_type)
        self.pooler_type = pooler_type
        self.temp = temp

    def forward(self, input_ids, attention_mask):
        batch, views, seq = input_ids.shape
        flat_ids, flat_mask = input_ids.view(-1, seq), attention_mask.view(-1, seq)
        outputs = self.bert(input_ids=flat_ids, attention_mask=flat_mask)
        emb = self.pooler(flat_mask, outputs)
        if self.pooler_type == "cls":
            emb = self.mlp(emb)
        emb = emb.view(batch, views, -1)
        sim = F.cosine_similarity(emb[:, 0].unsqueeze(1), emb[:, 1].unsqueeze(0), dim=-1) / self.temp
        return F.cross_entropy(sim, torch.arange(batch, device=sim.device))


class PairSet(Dataset):
    def __init__(self, sentences, tokenizer):
        self.enc = tokenizer(sentences, padding="max_length", truncation=True, max_length=32, return_tensors="pt")

    def __len__(self):
        return self.enc["input_ids"].size(0)

    def __getitem__(self, i):
        ids, mask = self.enc["input_ids"][i], self.enc["attention_mask"][i]
        return torch.stack([ids, ids]), torch.stack([mask, mask])


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    tokenizer = BertTokenizerFast.from_pretrained("bert-base-uncased")
    model = BertForCL("bert-base-uncased").cuda(local_rank)
    model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-5)
    dataset = PairSet(["an example sentence"] * 1000, tokenizer)
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler)
    for epoch in range(1):
        sampler.set_epoch(epoch)
        for ids, mask in loader:
            loss = model(ids.cuda(local_rank), mask.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
