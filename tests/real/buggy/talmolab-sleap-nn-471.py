# expect: collective-mismatch
# source: https://github.com/talmolab/sleap-nn/pull/471
# reason: A Lightning callback polled a ZMQ socket on the global-zero rank only and set trainer.should_stop there when a stop command arrived, then called trainer.strategy.barrier(), which synchronises position but not the flag: rank 0 left the training loop while the other ranks went on to the next batch and its collectives, a 30-second NCCL deadlock on multi-GPU runs; the merged fix reduces the decision with reduce_boolean_decision.
import jsonpickle
import lightning.pytorch as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
import zmq
from lightning.pytorch.callbacks import Callback
from torch.utils.data import DataLoader, TensorDataset


class TrainingControllerZMQ(Callback):
    def __init__(self, address="tcp://127.0.0.1:9000", topic="", poll_timeout=10):
        super().__init__()
        self.address = address
        self.topic = topic
        self.timeout = poll_timeout
        self.context = None
        self.socket = None

    def on_train_start(self, trainer, pl_module):
        if trainer.is_global_zero:
            self.context = zmq.Context()
            self.socket = self.context.socket(zmq.SUB)
            self.socket.subscribe(self.topic)
            self.socket.connect(self.address)

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if trainer.is_global_zero and self.socket is not None:
            if self.socket.poll(self.timeout, zmq.POLLIN):
                msg = jsonpickle.decode(self.socket.recv_string())
                if msg.get("command") == "stop":
                    trainer.should_stop = True
        trainer.strategy.barrier()


class ConfmapModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 13, 3, padding=1))

    def training_step(self, batch, batch_idx):
        imgs, confmaps = batch
        loss = F.mse_loss(self.net(imgs), confmaps)
        self.log("train_loss", loss, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-4)


def main():
    data = TensorDataset(torch.randn(800, 1, 64, 64), torch.randn(800, 13, 64, 64))
    trainer = pl.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_epochs=200,
                         callbacks=[TrainingControllerZMQ()])
    trainer.fit(ConfmapModel(), DataLoader(data, batch_size=4, shuffle=True))


if __name__ == "__main__":
    main()
