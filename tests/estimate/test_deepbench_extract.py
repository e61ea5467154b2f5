"""advisor/fitting/derive/deepbench.py reads DeepBench's workbooks (xlsx: a zip of XML) with the
standard library. The workbook here is written in the same layout as DeepBench's
``results/train/DeepBench_NV_V100.xlsx`` (shared strings, a Specs sheet, section rows in column A),
with two of its rows."""

from __future__ import annotations

import csv
import io
import zipfile
from pathlib import Path

import pytest

import advisor.fitting.derive.deepbench as deepbench_extract

_M = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
_R = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'


def _cell(ref: str, value: str | float, strings: list[str]) -> str:
    if isinstance(value, str):
        strings.append(value)
        return f'<c r="{ref}" t="s"><v>{len(strings) - 1}</v></c>'
    return f'<c r="{ref}"><v>{value}</v></c>'


def _sheet(rows: dict[int, dict[str, str | float]], strings: list[str]) -> str:
    body = "".join(
        f'<row r="{n}">'
        + "".join(_cell(f"{c}{n}", v, strings) for c, v in cells.items())
        + "</row>"
        for n, cells in rows.items()
    )
    return f"<worksheet {_M}><sheetData>{body}</sheetData></worksheet>"


def _workbook(path: Path) -> None:
    strings: list[str] = []
    results = _sheet(
        {
            4: {"A": "Dense Matrix Multiplication", "C": "M", "I": "Time (msec)"},
            5: {"B": "DeepSpeech", "C": 1760, "D": 16, "E": 1760, "F": "N", "G": "N", "I": 0.038},
            291: {"A": "Recurrent Layers - LSTM", "C": "Hidden Units"},
            292: {"B": "MT", "C": 512, "D": 16, "E": 25, "G": 1.095, "H": 0.937, "I": 0.165},
            339: {"A": "All-Reduce", "C": "Size # floats"},
            340: {"C": 100000, "D": 8, "G": 0.1},
        },
        strings,
    )
    specs = _sheet({2: {"A": "GPU Model", "B": "NVIDIA V100"}}, strings)
    shared = "".join(f"<si><t>{s}</t></si>" for s in strings)
    rels = (
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Id="rId1" Target="worksheets/sheet1.xml"/>'
        '<Relationship Id="rId2" Target="worksheets/sheet2.xml"/></Relationships>'
    )
    workbook = (
        f'<workbook {_M} {_R}><sheets><sheet name="Results FP32" r:id="rId1"/>'
        '<sheet name="Specs" r:id="rId2"/></sheets></workbook>'
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as book:
        book.writestr("xl/workbook.xml", workbook)
        book.writestr("xl/_rels/workbook.xml.rels", rels)
        book.writestr("xl/sharedStrings.xml", f"<sst {_M}>{shared}</sst>")
        book.writestr("xl/worksheets/sheet1.xml", results)
        book.writestr("xl/worksheets/sheet2.xml", specs)
    path.write_bytes(buffer.getvalue())


def test_matrix_products_and_recurrent_layers_come_out_with_their_provenance(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "results" / "train").mkdir(parents=True)
    _workbook(tmp_path / "results" / "train" / "DeepBench_NV_V100.xlsx")
    commit = "da81ba7820739e2e506dc27f382d15be5479f98f"
    assert deepbench_extract.main([str(tmp_path), commit]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["kernel"] for r in rows] == ["gemm", "lstm"]  # the all-reduce row is left out
    gemm, lstm = rows
    assert (gemm["m"], gemm["n"], gemm["k"], float(gemm["time_ms"])) == (
        "1760",
        "16",
        "1760",
        0.038,
    )
    assert (lstm["hidden"], lstm["batch"], lstm["timesteps"]) == ("512", "16", "25")
    assert float(lstm["time_ms"]) == pytest.approx(1.095 + 0.937 + 0.165)
    assert {r["gpu"] for r in rows} == {"NVIDIA V100"}
    assert (lstm["commit"], lstm["sheet"], lstm["row"]) == (commit, "Results FP32", "292")
    assert lstm["file"] == "results/train/DeepBench_NV_V100.xlsx"


def test_a_wrong_number_of_arguments_is_a_usage_error() -> None:
    assert deepbench_extract.main([]) == 2
