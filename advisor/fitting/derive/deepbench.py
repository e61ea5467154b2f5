"""Derive the GPU kernel rows advisor fits on from baidu-research/DeepBench's training results.

    python -m advisor.fitting.derive.deepbench DEEPBENCH_CHECKOUT COMMIT > data/gpu-kernels-deepbench.csv

Reads the FP32 sheets of ``results/train/DeepBench_NV_*.xlsx`` with the standard library (an xlsx
file is a zip of XML) and writes one CSV row per dense matrix product and cuDNN recurrent layer,
each with its repository, commit, file, sheet and spreadsheet row. Convolutions and all-reduce
rows are left out: nothing fits on them yet (docs/SOURCES.md, "GPU kernel measurements")."""

from __future__ import annotations

import csv
import re
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

_M = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_SECTIONS = {
    "Dense Matrix Multiplication": "gemm",
    "Recurrent Layers - Vanilla": "vanilla",
    "Recurrent Layers - LSTM": "lstm",
    "Recurrent Layers - GRU": "gru",
}
FIELDS = (
    "gpu", "kernel", "m", "n", "k", "a_transpose", "b_transpose", "hidden", "batch", "timesteps",
    "time_ms", "repo", "commit", "file", "sheet", "row",
)  # fmt: skip


def _shared_strings(book: zipfile.ZipFile) -> list[str]:
    if "xl/sharedStrings.xml" not in book.namelist():
        return []
    root = ET.fromstring(book.read("xl/sharedStrings.xml"))
    return [
        "".join(t.text or "" for t in si.iter(f"{{{_M}}}t")) for si in root.findall(f"{{{_M}}}si")
    ]


def sheets(path: Path) -> dict[str, list[tuple[int, dict[str, str]]]]:
    """Every sheet of a workbook: (row number, {column letter: cell text}) in order."""
    book = zipfile.ZipFile(path)
    strings = _shared_strings(book)
    workbook = ET.fromstring(book.read("xl/workbook.xml"))
    rels = ET.fromstring(book.read("xl/_rels/workbook.xml.rels"))
    targets = {rel.get("Id"): rel.get("Target", "") for rel in rels}
    out = {}
    for sheet in workbook.find(f"{{{_M}}}sheets") or []:
        target = targets[sheet.get(f"{{{_R}}}id")].lstrip("/")
        target = target if target.startswith("xl/") else "xl/" + target
        rows = []
        for row in ET.fromstring(book.read(target)).iter(f"{{{_M}}}row"):
            cells = {}
            for cell in row.findall(f"{{{_M}}}c"):
                value = cell.find(f"{{{_M}}}v")
                if value is None or value.text is None:
                    continue
                text = strings[int(value.text)] if cell.get("t") == "s" else value.text
                column = re.match(r"[A-Z]+", cell.get("r", ""))
                if column is not None:
                    cells[column.group()] = text.strip()
            rows.append((int(row.get("r", 0)), cells))
        out[sheet.get("name", "")] = rows
    return out


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def kernel_rows(path: Path, commit: str) -> list[dict[str, object]]:
    book = sheets(path)
    gpu = next(c["B"] for _, c in book.get("Specs", []) if c.get("A") == "GPU Model")
    name = next(n for n in book if "16" not in n and n != "Specs")  # the FP32 sheet
    section, rows = None, []
    for number, cells in book[name]:
        if cells.get("A"):
            section = _SECTIONS.get(cells["A"])
            continue
        first = _number(cells.get("C"))
        if section is None or first is None:
            continue
        base = {"gpu": gpu, "kernel": section, "repo": "baidu-research/DeepBench",
                "commit": commit, "file": f"results/train/{path.name}", "sheet": name,
                "row": number}  # fmt: skip
        if section == "gemm":
            time_ms = _number(cells.get("I"))
            if time_ms:
                rows.append({**base, "m": int(first), "n": int(float(cells["D"])),
                             "k": int(float(cells["E"])), "a_transpose": cells.get("F", ""),
                             "b_transpose": cells.get("G", ""), "time_ms": time_ms})  # fmt: skip
            continue
        parts = [_number(cells.get(col)) for col in ("G", "H", "I")]
        if all(parts):
            rows.append({**base, "hidden": int(first), "batch": int(float(cells["D"])),
                         "timesteps": int(float(cells["E"])),
                         "time_ms": round(sum(p for p in parts if p), 6)})  # fmt: skip
    return rows


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    checkout, commit = Path(argv[0]), argv[1]
    writer = csv.DictWriter(sys.stdout, FIELDS, lineterminator="\n")
    writer.writeheader()
    for path in sorted((checkout / "results" / "train").glob("DeepBench_NV_*.xlsx")):
        writer.writerows(kernel_rows(path, commit))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
