"""A PyTorch MNIST-style training script (the shape of pytorch/examples' mnist/main.py) on
synthetic 12x12 digits, written for PyTorch only: the tests run it under real PyTorch and under
`python -m coretorch.compat` and compare what it prints."""

import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(2 * dropout)
        self.fc1 = nn.Linear(256, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        return F.log_softmax(self.fc2(x), dim=1)


def load_pretrained(model, seed):
    """Weights from a fixed numpy stream, as if read from a checkpoint."""
    rng = np.random.default_rng(seed)
    state = {
        k: torch.from_numpy((0.2 * rng.standard_normal(tuple(v.shape))).astype(np.float32))
        for k, v in model.state_dict().items()
    }
    model.load_state_dict(state)


def train(args, model, device, loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            print(
                "Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}".format(
                    epoch,
                    batch_idx * len(data),
                    len(loader.dataset),
                    100.0 * batch_idx / len(loader),
                    loss.item(),
                )
            )


def test(model, device, loader):
    model.eval()
    test_loss, correct = 0, 0
    with torch.no_grad():
        for data, target in loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= len(loader.dataset)
    print(
        "Test set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)".format(
            test_loss, correct, len(loader.dataset), 100.0 * correct / len(loader.dataset)
        )
    )


def main():
    parser = argparse.ArgumentParser(description="MNIST-shaped example")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1.0)
    parser.add_argument("--gamma", type=float, default=0.7)
    parser.add_argument("--dropout", type=float, default=0.25)
    parser.add_argument("--no-accel", action="store_true")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--log-interval", type=int, default=2)
    parser.add_argument("--save-model", default=None)
    args = parser.parse_args()

    use_accel = not args.no_accel and torch.accelerator.is_available()
    torch.manual_seed(args.seed)
    torch.backends.cudnn.benchmark = True
    if use_accel:
        device = torch.accelerator.current_accelerator()
    elif torch.backends.mps.is_available():
        device = torch.device("mps")
    else:
        device = torch.device("cpu")
    print(f"device: {device.type}")

    rng = np.random.default_rng(args.seed)
    images = rng.standard_normal((96, 1, 12, 12)).astype(np.float32)
    labels = rng.integers(0, 10, 96)
    train_set = TensorDataset(torch.from_numpy(images[:64]), torch.from_numpy(labels[:64]))
    test_set = TensorDataset(torch.from_numpy(images[64:]), torch.from_numpy(labels[64:]))
    train_loader = DataLoader(train_set, batch_size=args.batch_size)
    test_loader = DataLoader(test_set, batch_size=args.batch_size)

    model = Net(args.dropout).to(device)
    load_pretrained(model, args.seed)
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch)
        test(model, device, test_loader)
        scheduler.step()

    if args.save_model:
        torch.save(model.state_dict(), args.save_model)
        reloaded = Net(args.dropout)
        reloaded.load_state_dict(torch.load(args.save_model))
        same = all(
            torch.equal(a, b)
            for a, b in zip(model.state_dict().values(), reloaded.state_dict().values())
        )
        print(f"reloaded checkpoint matches: {same}")


if __name__ == "__main__":
    main()
