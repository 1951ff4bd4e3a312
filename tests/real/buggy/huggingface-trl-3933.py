# expect: collective-mismatch
# source: https://github.com/huggingface/trl/issues/3933
# reason: The entropy mask gathers each process's non-padding token entropies with accelerator.gather, but their number differs from rank to rank (sequences of different lengths), so the ranks enter the all-gather with different shapes and multi-GPU training hangs; the fix pads across processes before gathering.
import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


def entropy_from_logits(logits):
    logp = torch.log_softmax(logits, dim=-1)
    return -(logp.exp() * logp).sum(-1)


class PolicyTrainer:
    def __init__(self, quantile=0.2):
        self.accelerator = Accelerator()
        self.quantile = quantile
        model = nn.Sequential(nn.Embedding(1000, 64), nn.Linear(64, 1000))
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
        ids = torch.randint(1, 1000, (512, 32))
        ids[torch.rand(512, 32) < 0.3] = 0
        loader = DataLoader(TensorDataset(ids), batch_size=8, shuffle=True)
        self.model, self.optimizer, self.loader = self.accelerator.prepare(model, optimizer, loader)

    def high_entropy_mask(self, entropies, mask):
        non_pad_entropies = entropies[mask.bool()]
        all_entropies = self.accelerator.gather(non_pad_entropies)
        threshold = torch.quantile(all_entropies.float(), 1 - self.quantile)
        return (entropies >= threshold) & mask.bool()

    def train(self):
        for (ids,) in self.loader:
            logits = self.model(ids)
            mask = ids != 0
            keep = self.high_entropy_mask(entropy_from_logits(logits).detach(), mask)
            loss = nn.functional.cross_entropy(logits[keep], ids[keep])
            self.accelerator.backward(loss)
            self.optimizer.step()
            self.optimizer.zero_grad()


if __name__ == "__main__":
    PolicyTrainer().train()
