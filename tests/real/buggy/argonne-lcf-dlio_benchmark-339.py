# expect: uneven-last-batch
# source: https://github.com/argonne-lcf/dlio_benchmark/pull/339
# reason: The benchmark splits the sample files across ranks with `files[rank::world_size]` and runs `len(local_files) // batch_size` steps with a barrier every step; when the file count is not divisible by the number of ranks one rank runs one step fewer, leaves the epoch loop early, and the others wait at the barrier forever; the merged PR aligns the file count across ranks at initialization.
import argparse
import glob
import os
import time

import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset


class NpzSampleDataset(Dataset):
    def __init__(self, files):
        self.files = files

    def __len__(self):
        return len(self.files)

    def __getitem__(self, idx):
        with np.load(self.files[idx]) as sample:
            return torch.from_numpy(sample["x"]).float()


class Benchmark:
    def __init__(self, args):
        self.args = args
        self.rank = int(os.environ["RANK"])
        self.world_size = int(os.environ["WORLD_SIZE"])
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        dist.init_process_group(backend="nccl")

    def local_files(self):
        files = sorted(glob.glob(os.path.join(self.args.data_dir, "*.npz")))
        return files[self.rank::self.world_size]

    def emulate_compute(self, batch):
        batch = batch.cuda(non_blocking=True)
        torch.cuda.synchronize()
        time.sleep(self.args.computation_time)
        return batch.mean()

    def run_epoch(self, epoch, loader):
        steps = len(loader.dataset) // self.args.batch_size
        start = time.time()
        for step, batch in enumerate(loader):
            if step >= steps:
                break
            self.emulate_compute(batch)
            dist.barrier()
        if self.rank == 0:
            print(f"epoch {epoch}: {steps} steps in {time.time() - start:.2f}s")

    def run(self):
        dataset = NpzSampleDataset(self.local_files())
        loader = DataLoader(dataset, batch_size=self.args.batch_size, shuffle=False,
                            num_workers=self.args.read_threads, drop_last=False)
        for epoch in range(self.args.epochs):
            self.run_epoch(epoch, loader)
        dist.barrier()
        dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", default="data/train")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--read-threads", type=int, default=4)
    parser.add_argument("--computation-time", type=float, default=0.05)
    Benchmark(parser.parse_args()).run()


if __name__ == "__main__":
    main()
