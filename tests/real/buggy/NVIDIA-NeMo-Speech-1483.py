# expect: hardcoded-cuda0
# source: https://github.com/NVIDIA-NeMo/Speech/pull/1483
# reason: The Megatron BERT encoder's restore_weights() read its checkpoint with torch.load(restore_path) and no map_location in every training process, so the tensors saved on CUDA were deserialised onto the GPU they were saved from and the main device held a large amount of unnecessary memory; the merged fix loads with map_location='cpu' (as Megatron-LM does).
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class TokenDataset(Dataset):
    def __init__(self, n=4096, seq=64, vocab=1000):
        self.ids = torch.randint(0, vocab, (n, seq))
        self.labels = torch.randint(0, 2, (n,))

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return self.ids[i], self.labels[i]


class MegatronEncoder(nn.Module):
    def __init__(self, vocab=1000, hidden=256, layers=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        block = nn.TransformerEncoderLayer(hidden, 4, 4 * hidden, batch_first=True)
        self.encoder = nn.TransformerEncoder(block, layers)
        self._restore_path = None

    def forward(self, ids):
        return self.encoder(self.embed(ids))

    def restore_weights(self, restore_path):
        """Restore from a single file, or from a directory of model-parallel shards."""
        self._restore_path = restore_path
        if os.path.isfile(restore_path):
            state_dict = torch.load(restore_path)
        else:
            mp_rank = 0
            shard = os.path.join(restore_path, f"mp_rank_{mp_rank:02d}", "model_optim_rng.pt")
            state_dict = torch.load(shard)
        if "model" in state_dict:
            state_dict = state_dict["model"]
        self.load_state_dict(state_dict, strict=False)


class Classifier(nn.Module):
    def __init__(self, encoder, hidden=256):
        super().__init__()
        self.encoder = encoder
        self.head = nn.Linear(hidden, 2)

    def forward(self, ids):
        return self.head(self.encoder(ids)[:, 0])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pretrained", required=True)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")

    encoder = MegatronEncoder()
    encoder.restore_weights(args.pretrained)
    model = Classifier(encoder).cuda()
    model = DDP(model, device_ids=[local_rank])

    dataset = TokenDataset()
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-5)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for ids, labels in loader:
            ids, labels = ids.cuda(non_blocking=True), labels.cuda(non_blocking=True)
            loss = F.cross_entropy(model(ids), labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
