# expect: gradient-checkpointing-conflict
# source: https://github.com/wenet-e2e/wenet/pull/2215
# reason: The ASR recipe wrapped the model with DistributedDataParallel(find_unused_parameters=True) while the conformer encoder ran each layer through torch.utils.checkpoint (reentrant by default) when gradient_checkpointing was enabled in the config; the maintainers found that gradient checkpointing requires find_unused_parameters=False (the reentrant backward marks parameters ready twice) and set it to False whenever grad_ckpt is on.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint as ckpt
import yaml
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class ConformerEncoder(nn.Module):
    def __init__(self, input_dim=80, d_model=256, num_blocks=12, gradient_checkpointing=False):
        super().__init__()
        self.embed = nn.Linear(input_dim, d_model)
        self.encoders = nn.ModuleList(nn.TransformerEncoderLayer(d_model, 4, 2048, batch_first=True)
                                      for _ in range(num_blocks))
        self.gradient_checkpointing = gradient_checkpointing

    def forward_layers(self, xs):
        for layer in self.encoders:
            xs = layer(xs)
        return xs

    @torch.jit.unused
    def forward_layers_checkpointed(self, xs):
        for layer in self.encoders:
            xs = ckpt.checkpoint(layer.__call__, xs)
        return xs

    def forward(self, xs):
        xs = self.embed(xs)
        if self.gradient_checkpointing and self.training:
            return self.forward_layers_checkpointed(xs)
        return self.forward_layers(xs)


class ASRModel(nn.Module):
    def __init__(self, vocab_size, encoder):
        super().__init__()
        self.encoder = encoder
        self.ctc = nn.Linear(256, vocab_size)

    def forward(self, feats, targets, feat_lens, target_lens):
        log_probs = self.ctc(self.encoder(feats)).log_softmax(-1).transpose(0, 1)
        return F.ctc_loss(log_probs, targets, feat_lens, target_lens)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    args = parser.parse_args()
    with open(args.config) as fin:
        configs = yaml.safe_load(fin)
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    encoder = ConformerEncoder(**configs["encoder_conf"])
    model = ASRModel(configs["vocab_size"], encoder).cuda()
    model = torch.nn.parallel.DistributedDataParallel(model, find_unused_parameters=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=configs.get("lr", 1e-3))
    data = TensorDataset(torch.randn(2000, 200, 80), torch.randint(1, 5000, (2000, 30)))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    for epoch in range(configs.get("max_epoch", 100)):
        sampler.set_epoch(epoch)
        for feats, targets in loader:
            feats, targets = feats.cuda(), targets.cuda()
            feat_lens = torch.full((feats.size(0),), feats.size(1), dtype=torch.long)
            target_lens = torch.full((feats.size(0),), targets.size(1), dtype=torch.long)
            loss = model(feats, targets, feat_lens, target_lens)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
