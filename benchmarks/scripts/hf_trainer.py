"""A Hugging Face ``Trainer`` fine-tune for sequence classification, as transformers/examples'
``run_glue.py`` runs one: a small BERT (two layers of 128, from its config, so that it needs no
download) on 128-token sequences, batches of 16 with two accumulated a step, evaluated each
epoch. The Trainer says its epochs; PyTorch's hooks see its steps and its data."""

import sys
import tempfile

import torch
from _args import sizes
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments


class Sentences(torch.utils.data.Dataset):
    def __init__(self, samples, seed, length=128):
        generator = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(1000, 30522, (samples, length), generator=generator)
        self.labels = torch.randint(0, 2, (samples,), generator=generator)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        ids = self.ids[index]
        return {
            "input_ids": ids,
            "attention_mask": torch.ones_like(ids),
            "labels": self.labels[index],
        }


args = sizes(epochs=3, samples=1_280)
config = BertConfig(
    hidden_size=128, num_hidden_layers=2, num_attention_heads=2, intermediate_size=512
)
with tempfile.TemporaryDirectory() as output:
    training = TrainingArguments(
        output_dir=output, num_train_epochs=args.epochs, per_device_train_batch_size=16,
        gradient_accumulation_steps=2, per_device_eval_batch_size=64, eval_strategy="epoch",
        learning_rate=5e-5, report_to=[], save_strategy="no", logging_strategy="no",
        use_cpu=True, disable_tqdm=True,
    )  # fmt: skip
    trainer = Trainer(
        model=BertForSequenceClassification(config), args=training,
        train_dataset=Sentences(args.samples, seed=0), eval_dataset=Sentences(256, seed=1),
    )  # fmt: skip
    trainer.train()
sys.stdout.flush()
