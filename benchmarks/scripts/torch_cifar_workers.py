"""A PyTorch CIFAR-10-shaped convnet (the PyTorch tutorial's classifier, widened) fed by a
DataLoader with two worker processes that augment each image (a padded random crop and a flip,
as torchvision's transforms do), SGD with momentum and a cosine schedule stepped each batch."""

import torch
import torch.nn.functional as F
from _args import sizes
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Augmented(Dataset):
    def __init__(self, samples):
        self.images = torch.randint(0, 256, (samples, 3, 32, 32), dtype=torch.uint8)
        self.labels = torch.randint(0, 10, (samples,))

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        image = F.pad(self.images[index].float() / 255, (4, 4, 4, 4), mode="reflect")
        top, left = torch.randint(0, 9, (2,)).tolist()
        image = image[:, top : top + 32, left : left + 32]
        if torch.rand(()) < 0.5:
            image = image.flip(2)
        return (image - 0.5) / 0.25, self.labels[index]


net = nn.Sequential(
    nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(64 * 8 * 8, 256), nn.ReLU(), nn.Linear(256, 10),
)  # fmt: skip
args = sizes(epochs=3, samples=6_400)
loader = DataLoader(Augmented(args.samples), batch_size=64, shuffle=True, num_workers=2)
optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs * len(loader))
for _epoch in range(args.epochs):
    for images, labels in loader:
        optimizer.zero_grad()
        F.cross_entropy(net(images), labels).backward()
        optimizer.step()
        schedule.step()
