"""David Page's ResNet-9 on CIFAR-10 as cifar10-fast's ``dawn.py`` trains it (DAWNBench, 2018):
the data padded, normalised and transposed once, then a random crop, flip and cutout per image
in Python (``Transform``), a ``DataLoader`` with no workers, batches of 512 (the last partial one
dropped); the network of ``dawn_utils.net()`` (prep 64, layer1 128 with a residual block, layer2
256, layer3 512 with a residual block, a 4x4 max pool, a linear layer without bias scaled by
0.125), in half precision but its batch norms (``--half``, on a GPU); a summed cross-entropy,
SGD with Nesterov momentum 0.9 and weight decay 5e-4 x 512, a learning rate rising linearly to
0.4 at epoch 5 and back to 0 at the last, over 512; a test pass each epoch. Random images of
CIFAR-10's shapes stand for the data (davidcpage/cifar10-fast@a78fd5e, dawn.py and utils.py).
Its last line is the training epochs' time, test passes apart: ``{"train_seconds": ..., "steps": ...}``.
"""

import argparse
import json
import time

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=24)
parser.add_argument("--samples", type=int, default=50_000)
parser.add_argument("--test-samples", type=int, default=10_000)
parser.add_argument("--half", action="store_true", help="fp16 weights and inputs on a GPU")
args = parser.parse_args()
device = "cuda" if torch.cuda.is_available() else "cpu"
BATCH = 512


def prepared(count: int, border: int) -> np.ndarray:
    """Images padded by ``border``, normalised and transposed to NCHW, once (``dawn.py``)."""
    images = np.random.randint(0, 256, (count, 32, 32, 3), dtype=np.uint8)
    images = np.pad(images, [(0, 0), (border, border), (border, border), (0, 0)], mode="reflect")
    mean, std = np.array([125.3, 123.0, 113.9]), np.array([63.0, 62.1, 66.7])
    return ((images - mean) / std).astype(np.float32).transpose(0, 3, 1, 2).copy()


class Transform:
    """A random crop, flip and cutout each image, their choices drawn for an epoch at once."""

    def __init__(self, images: np.ndarray, labels: np.ndarray) -> None:
        self.images, self.labels = images, labels

    def __len__(self) -> int:
        return len(self.labels)

    def new_epoch(self) -> None:
        n = len(self)
        self.crop = np.random.randint(0, 9, (n, 2))
        self.flip = np.random.rand(n) < 0.5
        self.cut = np.random.randint(0, 25, (n, 2))

    def __getitem__(self, index: int):
        (y0, x0), (cy, cx) = self.crop[index], self.cut[index]
        image = self.images[index][:, y0 : y0 + 32, x0 : x0 + 32]
        if self.flip[index]:
            image = image[:, :, ::-1]
        image = image.copy()
        image[:, cy : cy + 8, cx : cx + 8] = 0.0
        return image, self.labels[index]


def conv_bn(c_in: int, c_out: int) -> list[nn.Module]:
    return [nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(True)]


class Residual(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.body = nn.Sequential(*conv_bn(channels, channels), *conv_bn(channels, channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.body(x)


class Scale(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 0.125


net = nn.Sequential(
    *conv_bn(3, 64),
    *conv_bn(64, 128), nn.MaxPool2d(2), Residual(128),
    *conv_bn(128, 256), nn.MaxPool2d(2),
    *conv_bn(256, 512), nn.MaxPool2d(2), Residual(512),
    nn.MaxPool2d(4), nn.Flatten(), nn.Linear(512, 10, bias=False), Scale(),
).to(device)  # fmt: skip
half = args.half and device == "cuda"  # a CPU trains in fp32, as hf_run_glue.py's --fp16 does
dtype = torch.float16 if half else torch.float32
if half:
    for module in net.modules():
        if not isinstance(module, nn.BatchNorm2d):
            module.half()  # the batch norms stay fp32 (cifar10-fast@f00c6ba)

train = Transform(prepared(args.samples, 4), np.random.randint(0, 10, args.samples))
test = list(
    zip(prepared(args.test_samples, 0), np.random.randint(0, 10, args.test_samples), strict=True)
)
pin = device == "cuda"
train_batches = DataLoader(train, BATCH, shuffle=True, drop_last=True, pin_memory=pin)
test_batches = DataLoader(test, BATCH, shuffle=False, pin_memory=pin)
loss_of = nn.CrossEntropyLoss(reduction="sum")
optimizer = torch.optim.SGD(
    net.parameters(), lr=0.0, momentum=0.9, nesterov=True, weight_decay=5e-4 * BATCH
)
steps = args.epochs * len(train_batches)


def rate(step: int) -> float:
    """0.4 at epoch 5, 0 at the first and the last, linear between, over the batch."""
    epoch = step / len(train_batches)
    return float(np.interp(epoch, [0, 5, args.epochs], [0.0, 0.4, 0.0])) / BATCH


step, training = 0, 0.0
for _epoch in range(args.epochs):
    started = time.perf_counter()
    train.new_epoch()
    net.train()
    for images, labels in train_batches:
        images, labels = images.to(device).to(dtype), labels.to(device).long()
        for group in optimizer.param_groups:
            group["lr"] = rate(step)
        loss_of(net(images), labels).backward()
        optimizer.step()
        optimizer.zero_grad()
        step += 1
    if device == "cuda":
        torch.cuda.synchronize()
    training += time.perf_counter() - started
    net.eval()
    with torch.no_grad():
        for images, _labels in test_batches:
            net(images.to(device).to(dtype))
# the training epochs' time, test passes apart, for a real run's training alone
print(json.dumps({"train_seconds": training, "steps": step}))
