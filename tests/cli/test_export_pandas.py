"""`evalreg export` keeps pandas out of its processes (pyarrow would import it for nothing)."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_export_processes_keep_pandas_out() -> None:
    pytest.importorskip("pandas")
    code = (
        "import sys, pyarrow as pa\n"
        "from evalreg.cli.exporting import _keep_pandas_out\n"
        "_keep_pandas_out()\n"
        "pa.RecordBatch.from_pylist([{'a': 'x', 'b': [1.5]}])\n"
        "pa.array([{'a': 'x'}])\n"
        "assert 'pandas' not in sys.modules\n"
        "try:\n"
        "    import pandas\n"
        "except ImportError:\n"
        "    sys.exit(0)\n"
        "sys.exit(3)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
