# expect: collective-mismatch
# source: https://github.com/NVIDIA-NeMo/Automodel/pull/2468
# reason: The draft-model trainer raised an error when every sample of a micro-batch was too short to form a block, and the training loop caught it with a per-rank `continue`, skipping that rank's backward; under DDP the backward is the gradient all-reduce, so the other ranks wait in a reduction this rank never joins (hang). The merged fix decides the skip on all ranks together (an all-reduce of a per-rank flag).
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class NoValidAnchorsError(RuntimeError):
    pass


class VariableLengthSet(Dataset):
    def __init__(self, n=2048, max_len=256):
        self.lengths = torch.randint(4, max_len, (n,))

    def __len__(self):
        return len(self.lengths)

    def __getitem__(self, i):
        tokens = torch.zeros(256, dtype=torch.long)
        tokens[: self.lengths[i]] = torch.randint(1, 32000, (int(self.lengths[i]),))
        return tokens


class DraftTrainer:
    def __init__(self, block_size=16):
        self.block_size = block_size
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        dist.init_process_group("nccl")
        draft = nn.Sequential(nn.Embedding(32000, 512), nn.Linear(512, 32000)).cuda()
        self.model = DDP(draft, device_ids=[self.local_rank])
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=3e-4)

    def compute_loss(self, tokens):
        lengths = (tokens != 0).sum(dim=1)
        anchors = lengths >= self.block_size
        if not anchors.any():
            raise NoValidAnchorsError("no sample in this micro-batch is long enough for a block")
        logits = self.model(tokens[anchors])
        return nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), tokens[anchors][:, 1:].flatten())

    def fit(self, dataset, epochs=1):
        sampler = DistributedSampler(dataset)
        loader = DataLoader(dataset, batch_size=8, sampler=sampler)
        for epoch in range(epochs):
            sampler.set_epoch(epoch)
            for tokens in loader:
                try:
                    loss = self.compute_loss(tokens.cuda())
                except NoValidAnchorsError:
                    continue
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()


if __name__ == "__main__":
    DraftTrainer().fit(VariableLengthSet())
