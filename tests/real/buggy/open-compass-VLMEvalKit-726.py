# expect: collective-mismatch
# source: https://github.com/open-compass/VLMEvalKit/issues/726
# reason: In the multi-GPU evaluation runner, rank 0 merges the per-rank predictions inside `if rank == 0:` and, in infer-only mode, leaves that block with `continue` before the `dist.barrier()` at the bottom of the dataset loop; the other ranks reach the barrier and wait until the NCCL timeout; a maintainer acknowledged it and a fix PR was opened to move the barrier.
import argparse
import json
import os
import os.path as osp

import torch
import torch.distributed as dist
import torch.nn as nn


class TinyCaptioner(nn.Module):
    def __init__(self, vocab=1000, dim=256):
        super().__init__()
        self.encoder = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, dim), nn.GELU())
        self.head = nn.Linear(dim, vocab)

    @torch.no_grad()
    def generate(self, image):
        return self.head(self.encoder(image)).argmax(-1).tolist()


def build_dataset(name, size=256):
    generator = torch.Generator().manual_seed(hash(name) % 1000)
    return [{"index": i, "image": torch.randn(1, 3, 32, 32, generator=generator)} for i in range(size)]


def infer_shard(model, dataset, rank, world_size, device):
    results = {}
    for sample in dataset[rank::world_size]:
        results[sample["index"]] = model.generate(sample["image"].to(device))
    return results


def merge_predictions(work_dir, name, world_size):
    merged = {}
    for r in range(world_size):
        with open(osp.join(work_dir, f"{r}_{name}.json")) as f:
            merged.update(json.load(f))
    return merged


def evaluate(predictions):
    return {"num_predictions": len(predictions)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", nargs="+", default=["MMBench", "SEEDBench", "TextVQA"])
    parser.add_argument("--mode", choices=["all", "infer"], default="all")
    parser.add_argument("--work-dir", default="./outputs")
    args = parser.parse_args()

    rank = int(os.environ.get("RANK", 0))
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if world_size > 1:
        torch.cuda.set_device(local_rank)
        dist.init_process_group(backend="nccl")
    device = torch.device("cuda", local_rank)
    os.makedirs(args.work_dir, exist_ok=True)

    model = TinyCaptioner().to(device).eval()
    for name in args.data:
        dataset = build_dataset(name)
        shard = infer_shard(model, dataset, rank, world_size, device)
        with open(osp.join(args.work_dir, f"{rank}_{name}.json"), "w") as f:
            json.dump(shard, f)
        if world_size > 1:
            dist.barrier()

        if rank == 0:
            predictions = merge_predictions(args.work_dir, name, world_size)
            with open(osp.join(args.work_dir, f"{name}.json"), "w") as f:
                json.dump(predictions, f)
            if args.mode == "infer":
                continue
            print(name, evaluate(predictions))

        if world_size > 1:
            dist.barrier()

    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
