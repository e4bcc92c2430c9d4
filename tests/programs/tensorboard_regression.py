"""Linear regression logged to TensorBoard the way PyTorch tutorials do it: loss scalars, weight
histograms, an image, text and hyperparameters through torch.utils.tensorboard.SummaryWriter.
Usage: tensorboard_regression.py LOG_DIR"""

import sys

import numpy as np
import torch
import torch.nn as nn
from torch.utils.tensorboard import SummaryWriter


def main():
    log_dir = sys.argv[1]
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.standard_normal((32, 3)).astype(np.float32))
    true_w = torch.tensor([[1.5], [-2.0], [0.5]])
    y = x @ true_w + 0.1
    model = nn.Linear(3, 1)
    with torch.no_grad():
        model.weight.copy_(torch.zeros(1, 3))
        model.bias.fill_(0.0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.MSELoss()
    with SummaryWriter(log_dir) as writer:
        writer.add_text("setup", f"{len(x)} samples, {model}")
        for step in range(10):
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            writer.add_scalar("loss/train", loss.item(), step)
            writer.add_histogram("weight", model.weight, step)
        writer.add_image("inputs", (x[:8].T.reshape(1, 3, 8) + 3) / 6, 0)
        writer.add_hparams(
            {"lr": 0.1, "optimizer": "sgd"}, {"hparam/loss": loss.item()}, run_name="hparams"
        )
    print(f"final loss {loss.item():.6f} weight {model.weight.detach().numpy().round(4).tolist()}")


if __name__ == "__main__":
    main()
