# expect: missing-distributed-sampler
# source: https://github.com/pyg-team/pytorch_geometric/pull/6312
# reason: The multi-GPU NeighborLoader example gave every spawned rank the whole set of training nodes (input_nodes=train_idx with no per-rank split and no distributed sampler), so each GPU trained on the same seeds and nothing was split across GPUs; the merged fix splits the index into world_size chunks and takes this rank's chunk.
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch_geometric.data import Data
from torch_geometric.loader import NeighborLoader
from torch_geometric.nn import SAGEConv


class SAGE(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels):
        super().__init__()
        self.conv1 = SAGEConv(in_channels, hidden_channels)
        self.conv2 = SAGEConv(hidden_channels, out_channels)

    def forward(self, x, edge_index):
        x = F.dropout(self.conv1(x, edge_index).relu(), p=0.5, training=self.training)
        return self.conv2(x, edge_index)


def make_graph(num_nodes=5000, num_features=64, num_classes=10):
    data = Data(x=torch.randn(num_nodes, num_features),
                edge_index=torch.randint(0, num_nodes, (2, 20 * num_nodes)),
                y=torch.randint(0, num_classes, (num_nodes,)))
    data.train_mask = torch.rand(num_nodes) < 0.6
    return data, num_features, num_classes


def run(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world_size)

    data, num_features, num_classes = make_graph()
    data = data.to(rank, "x", "y")
    train_idx = data.train_mask.nonzero(as_tuple=False).view(-1)
    train_loader = NeighborLoader(data, input_nodes=train_idx, num_neighbors=[25, 10], shuffle=True,
                                  drop_last=True, batch_size=1024, num_workers=4, persistent_workers=True)

    torch.manual_seed(12345)
    model = SAGE(num_features, 256, num_classes).to(rank)
    model = DistributedDataParallel(model, device_ids=[rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
    for epoch in range(1, 21):
        model.train()
        for batch in train_loader:
            optimizer.zero_grad()
            out = model(batch.x, batch.edge_index.to(rank))[:batch.batch_size]
            loss = F.cross_entropy(out, batch.y[:batch.batch_size])
            loss.backward()
            optimizer.step()
        dist.barrier()
        if rank == 0:
            print(f"Epoch: {epoch:02d}, Loss: {loss:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    world_size = torch.cuda.device_count()
    mp.spawn(run, args=(world_size,), nprocs=world_size, join=True)
