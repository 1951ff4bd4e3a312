# expect: collective-mismatch
# source: https://github.com/dmlc/dgl/pull/4385
# reason: The multi-GPU graph-prediction example evaluated the validation and test sets under `if rank == 0:` by passing the DDP-wrapped model to evaluate(); the DDP forward of a model with BatchNorm buffers broadcasts them, so rank 0 waited for ranks that had gone on to the next epoch and training got stuck; the author confirmed and passed model.module instead.
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class MLP(nn.Module):
    def __init__(self, in_dim, hidden, out_dim):
        super().__init__()
        self.lin1 = nn.Linear(in_dim, hidden)
        self.norm = nn.BatchNorm1d(hidden)
        self.lin2 = nn.Linear(hidden, out_dim)

    def forward(self, h):
        return self.lin2(F.relu(self.norm(self.lin1(h))))


class GIN(nn.Module):
    def __init__(self, in_dim=32, hidden=300, n_tasks=1, n_layers=5):
        super().__init__()
        dims = [in_dim] + [hidden] * n_layers
        self.layers = nn.ModuleList(MLP(dims[i], hidden, hidden) for i in range(n_layers))
        self.readout = nn.Linear(hidden, n_tasks)

    def forward(self, feats):
        h = feats
        for layer in self.layers:
            h = layer(h)
        return self.readout(h)


@torch.no_grad()
def evaluate(loader, device, model):
    model.eval()
    y_true, y_pred = [], []
    for feats, labels in loader:
        y_pred.append(model(feats.to(device)).cpu())
        y_true.append(labels)
    y_true, y_pred = torch.cat(y_true), torch.cat(y_pred)
    return {"rocauc": float(((y_pred.squeeze(-1) > 0).float() == y_true).float().mean())}


def run(rank, world_size, train_set, valid_set, test_set):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:12347", world_size=world_size, rank=rank)
    torch.cuda.set_device(rank)
    device = torch.device("cuda", rank)
    model = DistributedDataParallel(GIN().to(device), device_ids=[rank], output_device=rank)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=50, gamma=0.5)
    sampler = DistributedSampler(train_set, num_replicas=world_size, rank=rank, shuffle=True)
    train_loader = DataLoader(train_set, batch_size=32, sampler=sampler)
    valid_loader = DataLoader(valid_set, batch_size=32)
    test_loader = DataLoader(test_set, batch_size=32)
    for epoch in range(100):
        sampler.set_epoch(epoch)
        model.train()
        for feats, labels in train_loader:
            logits = model(feats.to(device))
            loss = F.binary_cross_entropy_with_logits(logits.squeeze(-1), labels.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()
        if rank == 0:
            val_metric = evaluate(valid_loader, device, model)["rocauc"]
            test_metric = evaluate(test_loader, device, model)["rocauc"]
            print(f"epoch {epoch}: valid {val_metric:.4f} test {test_metric:.4f}")
    dist.destroy_process_group()


def main():
    train_set = TensorDataset(torch.randn(4096, 32), torch.randint(0, 2, (4096,)).float())
    valid_set = TensorDataset(torch.randn(512, 32), torch.randint(0, 2, (512,)).float())
    test_set = TensorDataset(torch.randn(512, 32), torch.randint(0, 2, (512,)).float())
    world_size = torch.cuda.device_count()
    mp.spawn(run, args=(world_size, train_set, valid_set, test_set), nprocs=world_size)


if __name__ == "__main__":
    main()
