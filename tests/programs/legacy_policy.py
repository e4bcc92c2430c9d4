"""Older-style PyTorch code, as REINFORCE-like scripts were written: legacy tensor constructors
(`torch.FloatTensor`, `torch.LongTensor`, `x.new(...)`, `x.type(...)`), a `deque` of rewards
turned into a tensor, indexing with a `range`, `f"{loss:.4f}"` on a 0-d tensor. A linear policy
on a small deterministic chain, greedy actions (no sampling), so PyTorch and coretorch print the
same numbers."""

import sys
from collections import deque

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

N_STATES, N_ACTIONS, GAMMA = 5, 2, 0.9


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine = nn.Linear(N_STATES, N_ACTIONS)
        rng = np.random.default_rng(0)
        self.affine.weight.data = torch.FloatTensor(rng.standard_normal((N_ACTIONS, N_STATES)))
        self.affine.bias.data.zero_()

    def forward(self, x):
        return F.softmax(self.affine(x), dim=1)


def one_hot(state):
    x = torch.Tensor(1, N_STATES).zero_()  # legacy: an uninitialized tensor, then zeroed
    x[0, state] = 1
    return x


def run_episode(policy, max_steps=8):
    state, states, actions = 0, [], []
    rewards = deque(maxlen=max_steps)
    for _ in range(max_steps):
        probs = policy(one_hot(state))
        action = int(probs.argmax(1))
        states.append(state)
        actions.append(action)
        state = min(state + 1, N_STATES - 1) if action == 1 else max(state - 1, 0)
        rewards.append(state / (N_STATES - 1) - 0.5)
    return states, actions, rewards


def discounted(rewards):
    r = torch.tensor(rewards)  # a deque of floats
    out = r.new(len(rewards)).zero_()  # legacy x.new(size)
    running = 0.0
    for i in reversed(range(len(rewards))):
        running = float(r[i]) + GAMMA * running
        out[i] = running
    return out


def main():
    episodes = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    policy = Policy()
    optimizer = optim.SGD(policy.parameters(), lr=0.1)
    print("weight type:", policy.affine.weight.data.type())
    for episode in range(episodes):
        states, actions, rewards = run_episode(policy)
        returns = discounted(rewards)
        returns = (returns - returns.mean()) / (returns.std() + 1e-6)
        inputs = torch.cat([one_hot(s) for s in states])
        log_probs = torch.log(policy(inputs))
        steps = torch.tensor(range(len(actions)))  # a range as data
        chosen = log_probs[steps, torch.LongTensor(actions)]
        first_half = log_probs[range(len(actions) // 2)]  # a range as an index
        loss = -(chosen * returns).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total = torch.DoubleTensor([sum(rewards)]).type(torch.FloatTensor)
        print(
            f"episode {episode}: loss {loss:.4f} return {total.item():.2f} "
            f"first-half rows {first_half.shape[0]} last state {states[-1]}"
        )
    bias = policy.affine.bias.data.type("torch.DoubleTensor")
    print("double bias:", str(bias.dtype).split(".")[-1], [f"{b:.6f}" for b in bias.tolist()])


if __name__ == "__main__":
    main()
