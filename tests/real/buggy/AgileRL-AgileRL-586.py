# expect: collective-mismatch
# source: https://github.com/AgileRL/AgileRL/pull/586
# reason: report_metrics() was called on the main process only, but the logger inside it waits at a barrier every rank must reach; the merged fix calls it on every rank and prints on the main one.
import torch
import torch.nn as nn
from accelerate import Accelerator


class Logger:
    def __init__(self, accelerator):
        self.accelerator = accelerator

    def on_main_process(self, metrics):
        self.accelerator.wait_for_everyone()
        if self.accelerator.is_main_process:
            print(metrics)


class Population:
    def __init__(self, agents, logger):
        self.agents = agents
        self.logger = logger

    def report_metrics(self, step):
        metrics = {f"agent{i}/loss": a.last_loss for i, a in enumerate(self.agents)}
        self.logger.on_main_process({"step": step, **metrics})


class Agent:
    def __init__(self, accelerator):
        self.accelerator = accelerator
        policy = nn.Sequential(nn.Linear(64, 256), nn.Tanh(), nn.Linear(256, 8))
        optimizer = torch.optim.Adam(policy.parameters(), lr=3e-4)
        self.policy, self.optimizer = accelerator.prepare(policy, optimizer)
        self.last_loss = 0.0

    def learn(self, obs, adv):
        loss = -(self.policy(obs).log_softmax(-1).max(-1).values * adv).mean()
        self.accelerator.backward(loss)
        self.optimizer.step()
        self.optimizer.zero_grad()
        self.last_loss = loss.item()


def train(steps=1000):
    accelerator = Accelerator()
    population = Population([Agent(accelerator) for _ in range(2)], Logger(accelerator))
    for step in range(steps):
        for agent in population.agents:
            agent.learn(torch.randn(512, 64, device=accelerator.device), torch.randn(512, device=accelerator.device))
        if accelerator.is_main_process:
            population.report_metrics(step)


if __name__ == "__main__":
    train()
