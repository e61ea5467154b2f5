"""Fit the GPU kernel paths on DeepBench's measured kernels and print (or write) the fit.

    .venv/bin/python benchmarks/gpu_kernel_fit.py [--write]

``--write`` rewrites ``data/gpu-kernel-fit.json`` (what ``advisor.estimate.kernels.shipped_fit``
reads); a test checks that the committed file is this fit. See ``advisor/estimate/kernels.py``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from advisor.estimate import kernels
from advisor.locations import shipped_data_dir


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"rewrite data/{kernels.FIT_FILE}")
    args = parser.parse_args()
    text = json.dumps(kernels.rounded(kernels.fit()), indent=2, sort_keys=True) + "\n"
    print(text, end="")
    if args.write:
        (shipped_data_dir() / kernels.FIT_FILE).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
