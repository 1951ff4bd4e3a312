# expect: logging-from-all-ranks
# source: https://github.com/TorchDR/TorchDR/pull/318
# reason: Under torchrun every rank builds the same estimator and runs the same fit, and the estimator's logger emitted its INFO progress (seed, affinity, per-iteration [k/max_iter] loss) on every rank, so an 8-GPU run printed 8 interleaved copies; the merged fix (closing #317) gates INFO to rank 0 in set_logger.
import logging
import os

import torch
import torch.distributed as dist
import torch.nn as nn


def set_logger(name, verbose):
    logger = logging.getLogger(name)
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("[%(name)s] %(message)s"))
        logger.addHandler(handler)
    logger.setLevel(logging.INFO if verbose else logging.WARNING)
    return logger


class AffinityMatcher(nn.Module):
    """Embeds points so that their low-dimensional affinities match the input ones."""

    def __init__(self, n_components=2, max_iter=500, lr=1.0, verbose=True, device="cuda"):
        super().__init__()
        self.n_components = n_components
        self.max_iter = max_iter
        self.lr = lr
        self.device = device
        self.logger = set_logger(self.__class__.__name__, verbose)

    def _affinity(self, x):
        dist2 = torch.cdist(x, x) ** 2
        p = torch.softmax(-dist2, dim=1)
        return (p + p.T) / (2 * p.shape[0])

    def fit_transform(self, x, seed=0):
        self.logger.info(f"Initializing embedding with seed {seed}.")
        generator = torch.Generator(device="cpu").manual_seed(seed)
        x = x.to(self.device)
        target = self._affinity(x)
        self.logger.info("Symmetrized the input affinity.")
        embedding = torch.randn(x.shape[0], self.n_components, generator=generator).to(self.device).requires_grad_()
        optimizer = torch.optim.Adam([embedding], lr=self.lr)
        for k in range(self.max_iter):
            optimizer.zero_grad()
            q = self._affinity(embedding)
            loss = (target * (torch.log(target + 1e-12) - torch.log(q + 1e-12))).sum()
            loss.backward()
            optimizer.step()
            if k % 50 == 0:
                self.logger.info(f"[{k}/{self.max_iter}] Loss: {loss.item():.4e}")
        return embedding.detach()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = torch.randn(2000, 50)
    model = AffinityMatcher(device=f"cuda:{local_rank}")
    out = model.fit_transform(data, seed=0)
    gathered = [torch.empty_like(out) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, out)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
