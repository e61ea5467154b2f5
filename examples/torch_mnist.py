"""A PyTorch training script as people write it (pytorch/examples' "Basic MNIST Example": its
network, Adadelta with a StepLR schedule, a DataLoader with workers, a test pass each epoch), on
tensors of MNIST's shapes with a random shift for augmentation, so that it runs without a
download. Probe it without editing it:

    advisor probe -- python examples/torch_mnist.py --epochs 14
    advisor recommend --model torch_mnist --deadline 1h

The optimizer's steps, the DataLoader's batches and the wait for them, and one step's FLOPs are
read by hooks PyTorch offers; ``--epochs`` is the script's own loop, so the probe is told it.
``--accumulate N`` takes N batches a step (gradient accumulation). ``benchmarks/own_scripts.py``
runs it too, smaller.
"""

import argparse

import torch
import torch.nn.functional as F
from torch import nn
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, Dataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = torch.flatten(self.dropout1(x), 1)
        x = self.dropout2(F.relu(self.fc1(x)))
        return F.log_softmax(self.fc2(x), dim=1)


class ShiftedDigits(Dataset):
    """Images of MNIST's shape, each shifted by up to two pixels as it is read (augmentation)."""

    def __init__(self, samples, seed):
        generator = torch.Generator().manual_seed(seed)
        self.images = torch.rand(samples, 1, 28, 28, generator=generator)
        self.labels = torch.randint(0, 10, (samples,), generator=generator)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        dx, dy = torch.randint(-2, 3, (2,)).tolist()
        image = torch.roll(self.images[index], shifts=(dy, dx), dims=(1, 2))
        return (image - 0.1307) / 0.3081, self.labels[index]


def train(model, loader, optimizer, accumulate):
    model.train()
    for index, (data, target) in enumerate(loader):
        loss = F.nll_loss(model(data), target) / accumulate
        loss.backward()
        if (index + 1) % accumulate == 0:
            optimizer.step()
            optimizer.zero_grad()


def test(model, loader):
    model.eval()
    correct = 0
    with torch.no_grad():
        for data, target in loader:
            correct += model(data).argmax(dim=1).eq(target).sum().item()
    return correct / len(loader.dataset)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=14)
    parser.add_argument("--samples", type=int, default=60_000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--accumulate", type=int, default=1)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    torch.manual_seed(1)
    loader = DataLoader(ShiftedDigits(args.samples, seed=1), batch_size=args.batch_size,
                        shuffle=True, num_workers=args.workers)  # fmt: skip
    test_loader = DataLoader(ShiftedDigits(args.samples // 6, seed=2), batch_size=1000)
    model = Net()
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    for epoch in range(1, args.epochs + 1):
        train(model, loader, optimizer, args.accumulate)
        print(f"epoch {epoch}: test accuracy {test(model, test_loader):.3f}", flush=True)
        scheduler.step()


if __name__ == "__main__":
    main()
