# expect: grad-accum-without-no-sync
# source: https://github.com/Chris-hughes10/pytorch-accelerated/pull/30
# reason: The trainer class accumulated gradients without disabling DDP gradient sync on the intermediate steps; the merged PR wraps them in no_sync.
import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


class Trainer:
    def __init__(self, model, loss_func, optimizer, gradient_accumulation_steps=1):
        self._accelerator = Accelerator()
        self.model, self.loss_func, self.optimizer = model, loss_func, optimizer
        self.gradient_accumulation_steps = gradient_accumulation_steps

    def _perform_forward_and_backward_passes(self, batch):
        xb, yb = batch
        loss = self.loss_func(self.model(xb), yb) / self.gradient_accumulation_steps
        self._accelerator.backward(loss)

    def _run_train_epoch(self, train_dl):
        self.model.train()
        for step, batch in enumerate(train_dl):
            self._perform_forward_and_backward_passes(batch)
            if (step + 1) % self.gradient_accumulation_steps == 0 or step + 1 == len(train_dl):
                self.optimizer.step()
                self.optimizer.zero_grad()

    def train(self, train_dataset, num_epochs, per_device_batch_size):
        train_dl = DataLoader(train_dataset, batch_size=per_device_batch_size, shuffle=True)
        self.model, self.optimizer, train_dl = self._accelerator.prepare(self.model, self.optimizer, train_dl)
        for epoch in range(num_epochs):
            self._run_train_epoch(train_dl)


if __name__ == "__main__":
    net = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 3))
    trainer = Trainer(net, nn.CrossEntropyLoss(), torch.optim.Adam(net.parameters(), 1e-3), gradient_accumulation_steps=8)
    trainer.train(TensorDataset(torch.randn(10000, 32), torch.randint(0, 3, (10000,))), 10, 32)
