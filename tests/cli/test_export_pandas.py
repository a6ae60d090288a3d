"""`evalreg export` keeps pandas out of its processes (pyarrow would import it for nothing)."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_export_keeps_pandas_out_while_it_runs_and_only_then() -> None:
    pytest.importorskip("pandas")
    code = (
        "import sys, pyarrow as pa\n"
        "from evalreg.cli.exporting import _pandas_kept_out\n"
        "with _pandas_kept_out(True):\n"
        "    pa.RecordBatch.from_pylist([{'a': 'x', 'b': [1.5]}])\n"
        "    pa.array([{'a': 'x'}])\n"
        "    assert 'pandas' not in sys.modules\n"
        "    try:\n"
        "        import pandas\n"
        "    except ImportError:\n"
        "        pass\n"
        "    else:\n"
        "        sys.exit(3)\n"
        "import pandas\n"  # as before, once the export is done
        "assert pa.table({'a': ['x']}).to_pandas()['a'].tolist() == ['x']\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
