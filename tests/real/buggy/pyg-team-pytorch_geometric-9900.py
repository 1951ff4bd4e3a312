# expect: missing-set-epoch
# source: https://github.com/pyg-team/pytorch_geometric/pull/9900
# reason: The multi-GPU graph-batching example shards its training set with a shuffling DistributedSampler but never calls set_epoch in its epoch loop, so every epoch iterates the samples in the same order on every rank; the merged fix adds train_sampler.set_epoch(epoch).
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch.nn import BatchNorm1d, Linear, ReLU, Sequential
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data.distributed import DistributedSampler
from torch_geometric.datasets import TUDataset
from torch_geometric.loader import DataLoader
from torch_geometric.nn import GINConv, global_mean_pool


class GIN(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels, num_layers=3):
        super().__init__()
        self.convs = torch.nn.ModuleList()
        for i in range(num_layers):
            mlp = Sequential(
                Linear(in_channels if i == 0 else hidden_channels, hidden_channels),
                BatchNorm1d(hidden_channels),
                ReLU(),
                Linear(hidden_channels, hidden_channels),
            )
            self.convs.append(GINConv(mlp, train_eps=True))
        self.lin = Linear(hidden_channels, out_channels)

    def forward(self, x, edge_index, batch):
        for conv in self.convs:
            x = F.relu(conv(x, edge_index))
        return self.lin(global_mean_pool(x, batch))


def run(rank: int, world_size: int, root: str):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"
    dist.init_process_group("nccl", rank=rank, world_size=world_size)

    dataset = TUDataset(root, name="PROTEINS").shuffle()
    train_dataset = dataset[: int(0.9 * len(dataset))]
    train_sampler = DistributedSampler(train_dataset, num_replicas=world_size, rank=rank)
    train_loader = DataLoader(train_dataset, batch_size=128, sampler=train_sampler)

    torch.manual_seed(12345)
    model = GIN(dataset.num_features, 64, dataset.num_classes).to(rank)
    model = DistributedDataParallel(model, device_ids=[rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=0.001)

    if rank == 0:
        test_loader = DataLoader(dataset[int(0.9 * len(dataset)):], batch_size=256)

    for epoch in range(1, 51):
        model.train()
        total_loss = torch.zeros(2, device=rank)
        for data in train_loader:
            data = data.to(rank)
            optimizer.zero_grad()
            logits = model(data.x, data.edge_index, data.batch)
            loss = F.cross_entropy(logits, data.y)
            loss.backward()
            optimizer.step()
            total_loss[0] += float(loss) * data.num_graphs
            total_loss[1] += data.num_graphs

        dist.all_reduce(total_loss, op=dist.ReduceOp.SUM)
        loss = float(total_loss[0] / total_loss[1])

        if rank == 0:
            model.eval()
            correct = 0
            for data in test_loader:
                data = data.to(rank)
                with torch.no_grad():
                    pred = model.module(data.x, data.edge_index, data.batch).argmax(dim=-1)
                correct += int((pred == data.y).sum())
            print(f"Epoch: {epoch:03d}, Loss: {loss:.4f}, Test: {correct / len(test_loader.dataset):.4f}")

        dist.barrier()

    dist.destroy_process_group()


if __name__ == "__main__":
    root = "../../data/TU"
    TUDataset(root, name="PROTEINS")
    world_size = torch.cuda.device_count()
    print("Let's use", world_size, "GPUs!")
    mp.spawn(run, args=(world_size, root), nprocs=world_size, join=True)
