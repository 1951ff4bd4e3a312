# expect:
# seen-in: https://github.com/facebookresearch/detectron2/blob/02b5c4e295e990042a714712c21dc79b731e8833/tools/plain_train_net.py
# (in its detectron2/evaluation/coco_evaluation.py)
# An evaluator gathers the predictions when distributed, the other ranks return, and what follows (writing the
# predictions file) runs on the main process only; the else arm is the one-process path.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Evaluator:
    def __init__(self, output_dir, distributed):
        self.output_dir = output_dir
        self.distributed = distributed
        self.predictions = []

    def process(self, outputs):
        self.predictions.extend(outputs.detach().cpu().tolist())

    def evaluate(self):
        if self.distributed:
            dist.barrier()
            gathered = [None] * dist.get_world_size()
            dist.all_gather_object(gathered, self.predictions)
            predictions = [p for part in gathered for p in part]
            if dist.get_rank() != 0:
                return {}
        else:
            predictions = self.predictions
        os.makedirs(self.output_dir, exist_ok=True)
        torch.save(predictions, os.path.join(self.output_dir, "predictions.pth"))
        return {"count": len(predictions)}


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(nn.Linear(8, 1).cuda(), device_ids=[local_rank])
    data = TensorDataset(torch.randn(256, 8), torch.randn(256, 1))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    optim = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())
            optim.zero_grad()
            loss.backward()
            optim.step()
    evaluator = Evaluator("/tmp/eval", distributed=True)
    with torch.no_grad():
        for x, _ in loader:
            evaluator.process(model.module(x.cuda()))
    print(evaluator.evaluate())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
