# expect: collective-mismatch
# source: https://github.com/huggingface/trl/issues/1103
# reason: The PPO trainer's log_stats gathered the batch's queries and responses with accelerate's gather_object inside `if self.accelerator.is_main_process:`, so only the main process entered the all-gather and it hung when logging to wandb on several GPUs; a maintainer found the gather_object inside the main-process block and moved it out (trl#1177).
import torch
import torch.nn as nn
from accelerate import Accelerator
from accelerate.utils import gather_object
from torch.utils.data import DataLoader, TensorDataset


class PolicyTrainer:
    def __init__(self, model, dataset, lr=1.4e-5, log_with="wandb"):
        self.accelerator = Accelerator(log_with=log_with)
        self.log_with = log_with
        optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        loader = DataLoader(dataset, batch_size=16, shuffle=True)
        self.model, self.optimizer, self.dataloader = self.accelerator.prepare(model, optimizer, loader)
        self.accelerator.init_trackers("ppo")

    def step(self, queries, rewards):
        values = self.model(queries).squeeze(-1)
        loss = ((values - rewards) ** 2).mean()
        self.optimizer.zero_grad()
        self.accelerator.backward(loss)
        self.optimizer.step()
        return {"ppo/loss/value": loss.detach()}

    def log_stats(self, stats, batch, rewards):
        if self.accelerator.is_main_process:
            logs = {}
            if self.log_with == "wandb":
                batch_rows = [[q.tolist(), r.item()] for q, r in zip(batch["query"], rewards)]
                all_rows = gather_object(batch_rows)
                logs["game_log_rows"] = len(all_rows)
            logs.update({k: v.item() for k, v in stats.items()})
            logs["env/reward_mean"] = rewards.mean().item()
            self.accelerator.log(logs)


def main():
    dataset = TensorDataset(torch.randn(2048, 64), torch.randn(2048))
    model = nn.Sequential(nn.Linear(64, 128), nn.Tanh(), nn.Linear(128, 1))
    trainer = PolicyTrainer(model, dataset)
    for epoch in range(3):
        for queries, rewards in trainer.dataloader:
            stats = trainer.step(queries, rewards)
            trainer.log_stats(stats, {"query": queries}, rewards)
    trainer.accelerator.end_training()


if __name__ == "__main__":
    main()
