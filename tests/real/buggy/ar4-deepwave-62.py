# expect: missing-set-device
# source: https://github.com/ar4/deepwave/issues/62
# reason: The distributed FWI example gave wrong inversion results under DDP on 2-3 GPUs: every process sent its model and shot chunk to cuda:rank but never selected that GPU as the current device, so the propagator's CUDA work ran against the default device; adding torch.cuda.set_device(rank) at the end of setup() fixed it and the maintainer updated the example.
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP


def setup(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"
    dist.init_process_group("nccl", rank=rank, world_size=world_size)


def cleanup():
    dist.destroy_process_group()


class Prop(torch.nn.Module):
    def __init__(self, model, dx, dt, freq):
        super().__init__()
        self.model = torch.nn.Parameter(model)
        self.dx = dx
        self.dt = dt
        self.freq = freq

    def forward(self, source_amplitudes, source_locations, receiver_locations):
        wavefield = torch.einsum("ij,sk->sik", self.model, source_amplitudes)
        return wavefield.sum(1)[:, : receiver_locations.shape[1]] * self.dt


def run_rank(rank, world_size, v_init, observed, source_amplitudes, source_locations, receiver_locations):
    print(f"Running DDP on rank {rank}.")
    setup(rank, world_size)
    source_amplitudes = torch.chunk(source_amplitudes, world_size)[rank].to(rank)
    source_locations = torch.chunk(source_locations, world_size)[rank].to(rank)
    receiver_locations = torch.chunk(receiver_locations, world_size)[rank].to(rank)
    observed = torch.chunk(observed, world_size)[rank].to(rank)

    prop = Prop(v_init, dx=4.0, dt=0.004, freq=25).to(rank)
    prop = DDP(prop, device_ids=[rank])

    optimiser = torch.optim.SGD(prop.parameters(), lr=1e9, momentum=0.9)
    loss_fn = torch.nn.MSELoss()

    for epoch in range(250):
        def closure():
            optimiser.zero_grad()
            out = prop(source_amplitudes, source_locations, receiver_locations)
            loss = 1e10 * loss_fn(out, observed)
            loss.backward()
            return loss

        optimiser.step(closure)

    if rank == 0:
        torch.save(prop.module.model.detach().cpu(), "v_inverted.pt")
    cleanup()


def run(world_size):
    ny, nx, n_shots, nt = 100, 30, 24, 300
    v_init = torch.full((ny, nx), 1500.0)
    observed = torch.rand(n_shots, nt)
    source_amplitudes = torch.rand(n_shots, nx)
    source_locations = torch.zeros(n_shots, 1, 2, dtype=torch.long)
    receiver_locations = torch.zeros(n_shots, nt, 2, dtype=torch.long)
    mp.spawn(run_rank, args=(world_size, v_init, observed, source_amplitudes, source_locations, receiver_locations),
             nprocs=world_size, join=True)


if __name__ == "__main__":
    n_gpus = torch.cuda.device_count()
    run(n_gpus)
