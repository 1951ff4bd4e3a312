# expect: unused-parameters-error
# source: https://github.com/wenet-e2e/wenet/pull/206
# reason: With ctc_weight set to 0.0 (or 1.0) the model skipped the CTC (or attention-decoder) branch, so that branch's parameters got no gradient and DDP raised "Expected to have finished reduction in the prior iteration"; the merged fix only builds/uses the branches whose weight is non-zero.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class ASRModel(nn.Module):
    def __init__(self, vocab_size, ctc_weight=0.3):
        super().__init__()
        self.ctc_weight = ctc_weight
        self.encoder = nn.LSTM(80, 256, batch_first=True)
        self.decoder = nn.Linear(256, vocab_size)
        self.ctc = nn.Linear(256, vocab_size)

    def forward(self, speech, target):
        enc, _ = self.encoder(speech)
        if self.ctc_weight != 1.0:
            loss_att = nn.functional.cross_entropy(self.decoder(enc).transpose(1, 2), target)
        else:
            loss_att = None
        if self.ctc_weight != 0.0:
            loss_ctc = nn.functional.cross_entropy(self.ctc(enc).transpose(1, 2), target)
        else:
            loss_ctc = None
        if loss_ctc is None:
            return loss_att
        if loss_att is None:
            return loss_ctc
        return self.ctc_weight * loss_ctc + (1 - self.ctc_weight) * loss_att


def main(configs):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = ASRModel(vocab_size=4233, ctc_weight=configs["ctc_weight"]).cuda()
    model = DistributedDataParallel(model, device_ids=[local_rank])
    dataset = TensorDataset(torch.randn(512, 100, 80), torch.randint(0, 4233, (512, 100)))
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=16, sampler=sampler)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(configs["max_epoch"]):
        sampler.set_epoch(epoch)
        for speech, target in loader:
            loss = model(speech.cuda(), target.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main({"ctc_weight": 0.0, "max_epoch": 80})
