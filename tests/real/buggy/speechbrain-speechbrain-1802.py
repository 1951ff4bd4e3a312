# expect: grad-accum-without-no-sync
# source: https://github.com/speechbrain/speechbrain/issues/1802
# reason: The recipe's Brain.fit_batch accumulated gradients over several batches and wrapped only the backward in the DDP no_sync context (`with self.no_sync(not should_step): loss.backward()`) while compute_forward ran outside it; DDP decides in the forward whether the coming backward all-reduces, so every micro-batch still synchronised and DDP on X GPUs ran slower than one GPU; the maintainers (bug label) found the forward has to sit inside no_sync too.
import argparse
import contextlib
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class AcousticEncoder(nn.Module):
    def __init__(self, feats=80, hidden=512, vocab=1000):
        super().__init__()
        self.rnn = nn.LSTM(feats, hidden, num_layers=3, batch_first=True, bidirectional=True)
        self.ctc_head = nn.Linear(2 * hidden, vocab)

    def forward(self, wavs_feats):
        encoded, _ = self.rnn(wavs_feats)
        return self.ctc_head(encoded).log_softmax(-1)


class SpeechTrainer:
    """A small Brain-like trainer: modules in a dict, wrapped in DDP when distributed."""

    def __init__(self, modules, lr, grad_accumulation_factor, local_rank):
        self.device = torch.device("cuda", local_rank)
        self.modules = nn.ModuleDict(modules).to(self.device)
        self.distributed = dist.is_initialized()
        if self.distributed:
            for name, module in self.modules.items():
                self.modules[name] = DistributedDataParallel(module, device_ids=[local_rank])
        self.optimizer = torch.optim.Adam(self.modules.parameters(), lr=lr)
        self.grad_accumulation_factor = grad_accumulation_factor
        self.step = 0
        self.ctc_loss = nn.CTCLoss(blank=0, zero_infinity=True)

    @contextlib.contextmanager
    def no_sync(self, active=True):
        """Skip the DDP gradient all-reduce of every wrapped module while active."""
        with contextlib.ExitStack() as stack:
            if active and self.distributed:
                for module in self.modules.values():
                    stack.enter_context(module.no_sync())
            yield

    def compute_forward(self, batch):
        feats, _, _ = batch
        return self.modules["encoder"](feats.to(self.device))

    def compute_objectives(self, log_probs, batch):
        _, tokens, token_lens = batch
        input_lens = torch.full((log_probs.size(0),), log_probs.size(1), dtype=torch.long)
        return self.ctc_loss(log_probs.transpose(0, 1), tokens.to(self.device), input_lens, token_lens)

    def fit_batch(self, batch):
        self.step += 1
        should_step = self.step % self.grad_accumulation_factor == 0
        outputs = self.compute_forward(batch)
        loss = self.compute_objectives(outputs, batch)
        with self.no_sync(not should_step):
            (loss / self.grad_accumulation_factor).backward()
        if should_step:
            torch.nn.utils.clip_grad_norm_(self.modules.parameters(), 5.0)
            self.optimizer.step()
            self.optimizer.zero_grad()
        return loss.detach()

    def fit(self, train_set, epochs, batch_size):
        sampler = DistributedSampler(train_set) if self.distributed else None
        loader = DataLoader(train_set, batch_size=batch_size, sampler=sampler, shuffle=sampler is None)
        for epoch in range(epochs):
            if sampler is not None:
                sampler.set_epoch(epoch)
            self.modules.train()
            for batch in loader:
                loss = self.fit_batch(batch)
            if not self.distributed or dist.get_rank() == 0:
                print(f"epoch {epoch}: last loss {loss.item():.3f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--grad_accumulation_factor", type=int, default=4)
    args = parser.parse_args()

    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if "WORLD_SIZE" in os.environ:
        dist.init_process_group("nccl")
    torch.cuda.set_device(local_rank)

    feats = torch.randn(2000, 200, 80)
    tokens = torch.randint(1, 1000, (2000, 40))
    token_lens = torch.full((2000,), 40, dtype=torch.long)
    trainer = SpeechTrainer({"encoder": AcousticEncoder()}, 1e-3, args.grad_accumulation_factor, local_rank)
    trainer.fit(TensorDataset(feats, tokens, token_lens), args.epochs, args.batch_size)
    if dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
