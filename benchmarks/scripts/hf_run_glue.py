"""transformers/examples' ``run_glue.py`` (and ``run_xnli.py``) as their READMEs run them, for the
published training times on a GPU: BERT-base fine-tuned for sequence classification, sequences
padded to 128 tokens (the scripts' ``pad_to_max_length``), batches of 32 a device, AdamW, the
Trainer's loop, no evaluation during training. The weights come from the model's config (the
same shapes as ``bert-base-cased``, or ``bert-base-multilingual-cased`` with ``--multilingual``),
not a download, and the sentences are random token ids of the task's size: what a GPU computes
is the same, only the accuracy is not. ``--fp16`` asks the Trainer for mixed precision where it
runs on a GPU; on a CPU it trains in fp32, as it must. Its last line is the Trainer's own
timing of its loop, ``{"train_seconds": ..., "steps": ...}``.

    python benchmarks/scripts/hf_run_glue.py --samples 3668 --epochs 5   # MRPC
"""

import argparse
import json
import sys
import tempfile

import torch
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments

parser = argparse.ArgumentParser()
parser.add_argument("--samples", type=int, default=3_668)  # MRPC's training set
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--learning-rate", type=float, default=2e-5)
parser.add_argument("--multilingual", action="store_true")
parser.add_argument("--fp16", action="store_true")
args = parser.parse_args()

VOCAB = 119_547 if args.multilingual else 28_996  # bert-base-multilingual-cased / bert-base-cased


class Padded(torch.utils.data.Dataset):
    """Tokenised sentence pairs padded to 128, as ``run_glue.py``'s preprocessing leaves them."""

    def __init__(self, samples: int, length: int = 128) -> None:
        generator = torch.Generator().manual_seed(0)
        self.ids = torch.randint(1000, VOCAB, (samples, length), generator=generator)
        self.labels = torch.randint(0, 2, (samples,), generator=generator)

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        ids = self.ids[index]
        return {
            "input_ids": ids,
            "attention_mask": torch.ones_like(ids),
            "token_type_ids": torch.zeros_like(ids),
            "labels": self.labels[index],
        }


torch.manual_seed(0)
model = BertForSequenceClassification(BertConfig(vocab_size=VOCAB, num_labels=2))
gpu = torch.cuda.is_available()
with tempfile.TemporaryDirectory() as output:
    training = TrainingArguments(
        output_dir=output, num_train_epochs=args.epochs,
        per_device_train_batch_size=args.batch_size, learning_rate=args.learning_rate,
        fp16=args.fp16 and gpu, use_cpu=not gpu, report_to=[], save_strategy="no",
        logging_strategy="no", eval_strategy="no", disable_tqdm=True,
    )  # fmt: skip
    done = Trainer(model=model, args=training, train_dataset=Padded(args.samples)).train()
# what the Trainer timed of its loop, for a real run's training alone (benchmarks/gpu/script_runs.py)
print(json.dumps({"train_seconds": done.metrics["train_runtime"], "steps": done.global_step}))
sys.stdout.flush()
