"""A Lightning module as Lightning's image-classifier examples write one: a small convnet, its
``training_step``, a ``validation_step`` run each epoch, Adam, ``Trainer.fit`` on a CPU with
DataLoaders of one worker. The Trainer says its epochs; PyTorch's hooks see its steps."""

import lightning as L
import torch
from _args import sizes
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(64 * 8 * 8, 10),
        )  # fmt: skip

    def training_step(self, batch, index):
        images, labels = batch
        return nn.functional.cross_entropy(self.net(images), labels)

    def validation_step(self, batch, index):
        images, labels = batch
        self.log("val_loss", nn.functional.cross_entropy(self.net(images), labels))

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def loader(samples, shuffle):
    data = TensorDataset(torch.rand(samples, 3, 32, 32), torch.randint(0, 10, (samples,)))
    return DataLoader(data, batch_size=32, shuffle=shuffle, num_workers=1)


args = sizes(epochs=4, samples=3_200)
trainer = L.Trainer(
    max_epochs=args.epochs, accelerator="cpu", enable_progress_bar=False, logger=False,
    enable_checkpointing=False, enable_model_summary=False,
)  # fmt: skip
trainer.fit(Classifier(), loader(args.samples, shuffle=True), loader(640, shuffle=False))
