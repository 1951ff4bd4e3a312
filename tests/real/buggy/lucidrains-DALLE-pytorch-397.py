# expect: batch-size-mismatch
# source: https://github.com/lucidrains/DALLE-pytorch/pull/397
# reason: With --wds the training data is a WebDataset that every rank builds and batches itself with .batched(BATCH_SIZE), while DeepSpeed is told train_batch_size=BATCH_SIZE (the global batch), so each rank fed a full global batch and the real batch was world_size times too big; the merged fix batches BATCH_SIZE // world_size per rank.
import argparse

import deepspeed
import torch
import webdataset as wds
from torch import nn
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

parser = argparse.ArgumentParser()
parser.add_argument("--image_text_folder", type=str, required=True)
parser.add_argument("--wds", type=str, default="", help="comma separated column names of a WebDataset")
parser.add_argument("--batch_size", type=int, default=4)
parser.add_argument("--epochs", type=int, default=20)
parser.add_argument("--learning_rate", type=float, default=3e-4)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()

BATCH_SIZE = args.batch_size
EPOCHS = args.epochs
ENABLE_WEBDATASET = bool(args.wds)

deepspeed.init_distributed()
world_size = torch.distributed.get_world_size()
rank = torch.distributed.get_rank()


class TinyDalle(nn.Module):
    def __init__(self, vocab=512, dim=64):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, text, image):
        h = self.emb(text).mean(1) + image.flatten(1)[:, : self.emb.embedding_dim]
        return self.out(h).logsumexp(-1).mean()


def decode_sample(sample):
    return torch.randint(0, 512, (32,)), torch.rand(3, 16, 16)


if ENABLE_WEBDATASET:
    ds = (
        wds.WebDataset(args.image_text_folder)
        .map(decode_sample)
        .batched(BATCH_SIZE, partial=True)
    )
else:
    ds = [decode_sample(None) for _ in range(1024)]

dalle = TinyDalle()
opt = torch.optim.Adam(dalle.parameters(), lr=args.learning_rate)

deepspeed_config = {
    "train_batch_size": BATCH_SIZE,
    "gradient_accumulation_steps": 1,
    "gradient_clipping": 0.5,
}

if ENABLE_WEBDATASET:
    dl = wds.WebLoader(ds, batch_size=None, shuffle=False, num_workers=4)
else:
    data_sampler = DistributedSampler(ds, num_replicas=world_size, rank=rank)
    dl = DataLoader(ds, batch_size=BATCH_SIZE // world_size, shuffle=False, drop_last=True, sampler=data_sampler)

distr_dalle, distr_opt, _, _ = deepspeed.initialize(
    args=args, model=dalle, optimizer=opt, model_parameters=dalle.parameters(), config=deepspeed_config,
)

for epoch in range(EPOCHS):
    if not ENABLE_WEBDATASET:
        data_sampler.set_epoch(epoch)
    for i, (text, images) in enumerate(dl):
        text, images = text.to(distr_dalle.device), images.to(distr_dalle.device)
        loss = distr_dalle(text, images)
        distr_dalle.backward(loss)
        distr_dalle.step()
        if i % 10 == 0 and rank == 0:
            print(epoch, i, f"loss - {loss.item()}")
