from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

import evalreg
from evalreg.errors import MigrationError, ReadError
from tests.cli.test_cli import OLD_AGGREGATE


def test_load_yields_records_as_read() -> None:
    [record] = evalreg.load(OLD_AGGREGATE)
    assert record["schema_version"] == "0.1.0"


def test_load_upgrades_on_the_fly() -> None:
    [record] = evalreg.load(str(OLD_AGGREGATE), to="0.2.0")
    assert record["schema_version"] == "0.2.0"
    assert record["model_info"]["inference_engine"] == {"name": "transformers"}


def test_load_reads_open_files_of_every_kind(tmp_path: Path) -> None:
    lines = (
        b'{"schema_version": "0.1", "id": "q1", "query": "q", "expected_ids": [], "layers": []}\n'
        * 2
    )
    assert len(list(evalreg.load(io.BytesIO(lines)))) == 2
    stream = io.StringIO("a: 1\n")
    stream.name = "x.yaml"
    assert list(evalreg.load(stream)) == [{"a": 1}]
    with open(OLD_AGGREGATE, "rb") as handle:
        [record] = evalreg.load(handle, to="latest")
    assert record["schema_version"] == evalreg.default_registry().latest("eee.aggregate")


def test_load_raises_on_unreadable_lines_with_the_place(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n{oops\n')
    records = evalreg.load(path)
    assert next(records) == {"a": 1}
    with pytest.raises(ReadError, match=r"x\.jsonl:2: not valid JSON"):
        next(records)


def test_load_raises_when_a_record_cannot_be_migrated(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"schema_version": "0.0.7", "evaluation_results": []}))
    with pytest.raises(
        MigrationError, match=r"x\.json: version '0\.0\.7' of eee\.aggregate is not known"
    ):
        list(evalreg.load(path, to="latest"))
