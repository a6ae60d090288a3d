"""`evalreg export`, `evalreg.to_arrow` and their readers: pandas, polars, DuckDB, datasets."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import evalreg
from evalreg.batch import parallel, tabulate
from evalreg.cli import main
from evalreg.io.codec import loads
from evalreg.tables.rows import json_equal
from tests.conftest import EXAMPLES

DEMO = Path(evalreg.__file__).parent / "examples" / "eee"
AGGREGATES = sorted((EXAMPLES / "eee.aggregate" / "valid").glob("*.json"))
INSTANCE = next((EXAMPLES / "eee.instance" / "valid").glob("*.jsonl"))


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A datastore of aggregates at 0.1.0, 0.2.0 and later, and an instance file."""
    root = tmp_path / "data"
    shutil.copytree(DEMO / "data", root / "demo")
    for index, source in enumerate(AGGREGATES * 3):
        target = root / "runs" / f"m{index % 4}" / f"{index:03d}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, target)
    return root


def _migrated(capsys: pytest.CaptureFixture[str], store: Path, out: Path) -> list[Any]:
    """Return what `evalreg migrate --to latest` writes for the aggregates, in walk order."""
    code, _, _ = run(capsys, "migrate", str(store), "--to", "latest", "--out", str(out))
    assert code == 0
    files = [p for p in sorted(evalreg.batch.walk.iter_files([str(out)], ["*.json"]))]
    return [loads(Path(p).read_bytes()) for p in files]


def test_export_writes_one_typed_parquet_file_that_comes_back_as_migrate_writes(
    capsys: pytest.CaptureFixture[str], store: Path, tmp_path: Path
) -> None:
    out = tmp_path / "aggregates.parquet"
    code, stdout, err = run(
        capsys, "export", str(store), "--family", "eee.aggregate", "--out", str(out)
    )
    assert code == 0 and stdout == ""
    assert err.startswith("14 files: 14 rows written to ") and err.endswith("; 0 records failed\n")
    table = pq.read_table(out)
    schema = evalreg.arrow_schema("eee.aggregate", "0.3.0")
    assert table.schema.equals(schema, check_metadata=True)
    back = list(evalreg.from_arrow(table))
    migrated = _migrated(capsys, store, tmp_path / "migrated")
    assert len(back) == len(migrated) == 14
    assert all(json_equal(a, b) for a, b in zip(back, migrated, strict=True))


def test_the_readers_take_the_table_as_it_is(
    capsys: pytest.CaptureFixture[str], store: Path, tmp_path: Path
) -> None:
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    duckdb = pytest.importorskip("duckdb")
    datasets = pytest.importorskip("datasets")
    out = tmp_path / "t.parquet"
    assert run(capsys, "export", str(store), "--family", "eee.aggregate", "--out", str(out))[0] == 0
    schema = evalreg.arrow_schema("eee.aggregate", "0.3.0")
    frame = pd.read_parquet(out)
    assert list(frame.columns) == schema.names and len(frame) == 14
    polars = pl.read_parquet(out)
    assert polars.columns == schema.names and polars.height == 14
    [count] = duckdb.sql(
        f"select count(*), count(distinct evaluation_id) from read_parquet('{out}')"
    ).fetchall()
    assert count[0] == 14
    scores = duckdb.sql(
        f"select r.score_details.score from read_parquet('{out}'), "
        "unnest(evaluation_results) as t(r)"
    ).fetchall()
    assert len(scores) == sum(
        len(r["evaluation_results"]) for r in evalreg.from_arrow(pq.read_table(out))
    )
    hf = datasets.load_dataset(
        "parquet", data_files=str(out), split="train", cache_dir=str(tmp_path / "hf")
    )
    assert hf.num_rows == 14
    assert hf.features == datasets.Features.from_arrow_schema(schema)


def test_explode_gives_a_row_per_evaluation_result(
    capsys: pytest.CaptureFixture[str], store: Path, tmp_path: Path
) -> None:
    out = tmp_path / "results.parquet"
    code, _, _ = run(
        capsys,
        "export",
        str(store),
        "--family",
        "eee.aggregate",
        "--explode",
        "/evaluation_results",
        "--provenance",
        "--out",
        str(out),
    )
    assert code == 0
    table = pq.read_table(out)
    expected = sum(
        len(r["evaluation_results"]) for r in evalreg.load(store, include=["*.json"], to="latest")
    )
    assert table.num_rows == expected > 14
    assert pa.types.is_struct(table.schema.field("evaluation_results").type)
    assert set(table.column("_index").to_pylist()) >= {0, 1}


def test_records_that_fail_are_named_left_out_and_exit_1(
    capsys: pytest.CaptureFixture[str], store: Path, tmp_path: Path
) -> None:
    (store / "runs" / "bad.json").write_text(
        '{"schema_version": "0.0.7", "evaluation_results": []}'
    )
    (store / "runs" / "cut.json").write_text('{"schema_version": ')
    out = tmp_path / "t.parquet"
    code, stdout, err = run(
        capsys, "export", str(store), "--family", "eee.aggregate", "--out", str(out)
    )
    assert code == 1
    lines = stdout.splitlines()
    assert lines[0].endswith(
        "bad.json: failed: version '0.0.7' of eee.aggregate is not known "
        "(known: 0.1.0, 0.2.0, 0.2.1, 0.2.2, 0.2.3, 0.3.0)"
    )
    assert lines[1].endswith("cut.json: unreadable: not valid JSON: Input data was truncated")
    assert "14 rows written" in err and err.endswith("; 2 records failed\n")
    assert pq.read_table(out).num_rows == 14
    code, stdout, _ = run(
        capsys,
        "export",
        str(store),
        "--family",
        "eee.aggregate",
        "--out",
        str(out),
        "--report",
        "json",
    )
    rows = [json.loads(line) for line in stdout.splitlines()]
    assert [r.get("status") for r in rows[:2]] == ["failed", "unreadable"]
    assert rows[-1]["summary"]["rows"] == 14 and rows[-1]["summary"]["failed"] == 2


def test_jsonl_and_csv_hold_the_same_rows(
    capsys: pytest.CaptureFixture[str], store: Path, tmp_path: Path
) -> None:
    import csv

    code, _, _ = run(
        capsys, "export", str(store), "--family", "eee.instance", "--out", str(tmp_path / "i.jsonl")
    )
    assert code == 0
    lines = (tmp_path / "i.jsonl").read_text().splitlines()
    expected = list(evalreg.load(store, include=["*.jsonl"], to="latest"))
    assert len(lines) == len(expected) > 0
    assert json.loads(lines[0])["sample_id"] == expected[0]["sample_id"]
    code, _, _ = run(
        capsys, "export", str(store), "--family", "eee.aggregate", "--out", str(tmp_path / "a.csv")
    )
    assert code == 0
    with open(tmp_path / "a.csv", newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert len(rows) == 14
    results = json.loads(rows[0]["evaluation_results"])  # nested values as JSON text
    assert isinstance(results, list) and "score_details" in results[0]


def test_a_write_that_fails_leaves_nothing_and_says_so(
    capsys: pytest.CaptureFixture[str], store: Path, tmp_path: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = run(
        capsys,
        "export",
        str(store),
        "--family",
        "eee.aggregate",
        "--out",
        str(blocker / "t.parquet"),
    )
    assert code == 1 and err.startswith(f"evalreg: error: cannot write {blocker / 't.parquet'}: ")
    assert list(tmp_path.glob("**/*.parquet")) == []
    code, _, err = run(capsys, "export", str(store), "--family", "nope", "--out", "x.parquet")
    assert code == 2 and "unknown family 'nope'" in err
    code, _, err = run(
        capsys,
        "export",
        str(store),
        "--family",
        "eee.aggregate",
        "--explode",
        "/model_info",
        "--out",
        str(tmp_path / "x.parquet"),
    )
    assert code == 2 and "cannot explode /model_info: it is a struct column" in err


def test_several_jobs_give_the_rows_of_one(
    capsys: pytest.CaptureFixture[str],
    store: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    big = store / "runs" / "big_samples.jsonl"
    lines = INSTANCE.read_text().splitlines()
    big.write_text("\n".join(lines[i % len(lines)] for i in range(600)) + "\n")
    common = ["--family", "eee.instance", "--provenance"]
    assert (
        run(
            capsys,
            "export",
            str(store),
            *common,
            "--out",
            str(tmp_path / "one.parquet"),
            "--jobs",
            "1",
        )[0]
        == 0
    )
    monkeypatch.setattr(parallel, "POOL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "RANGE_MIN_BYTES", 20_000)
    monkeypatch.setattr(tabulate, "UNIT_OUT_BYTES", 20_000)
    assert (
        run(
            capsys,
            "export",
            str(store),
            *common,
            "--out",
            str(tmp_path / "two.parquet"),
            "--jobs",
            "2",
        )[0]
        == 0
    )
    one, two = pq.read_table(tmp_path / "one.parquet"), pq.read_table(tmp_path / "two.parquet")
    assert two.column("_line").to_pylist()[-3:] == [598, 599, 600]
    assert one.equals(two, check_metadata=True)


@pytest.mark.cluster
def test_a_dask_cluster_writes_a_dataset_of_the_rows_of_one_process(
    capsys: pytest.CaptureFixture[str], store: Path, tmp_path: Path
) -> None:
    pytest.importorskip("distributed")
    common = [
        "export",
        str(store),
        "--family",
        "eee.aggregate",
        "--provenance",
        "--row-group-size",
        "1",
    ]
    assert run(capsys, *common, "--out", str(tmp_path / "one.parquet"), "--jobs", "1")[0] == 0
    code, _, err = run(
        capsys, *common, "--out", str(tmp_path / "parts"), "--scheduler", "local", "--jobs", "2"
    )
    assert code == 0 and "in 2 parts" in err
    parts = sorted(p.name for p in (tmp_path / "parts").iterdir())
    assert parts == ["part-00000.parquet", "part-00001.parquet"]
    one = pq.read_table(tmp_path / "one.parquet")
    dataset = pq.read_table(tmp_path / "parts")
    assert dataset.schema.equals(one.schema, check_metadata=True)
    assert dataset.to_pylist() == one.to_pylist()


def test_dask_dataframes_have_the_arrow_schema_as_meta() -> None:
    pd = pytest.importorskip("pandas")
    ed = pytest.importorskip("evalreg.dask")
    bag = ed.read_records([str(DEMO / "data")])
    frame = ed.to_dataframe(bag, "eee.aggregate", provenance=True)
    schema = evalreg.arrow_schema("eee.aggregate", provenance=True)
    assert list(frame.columns) == schema.names
    assert str(frame.dtypes["evaluation_results"]).startswith("list<element: struct<")
    computed = frame.compute(scheduler="sync").reset_index(drop=True)
    expected = evalreg.to_arrow(DEMO / "data", family="eee.aggregate", provenance=True)
    assert computed.equals(expected.to_pandas(types_mapper=pd.ArrowDtype))
