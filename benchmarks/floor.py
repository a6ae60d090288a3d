"""The parse floor: what reading the input and `orjson.loads`-ing it costs, and no more.

    python benchmarks/floor.py parse PATH            # PATH: a directory of JSON files, or JSONL
    python benchmarks/floor.py rewrite PATH OUT      # also orjson.dumps and write every record
    python benchmarks/floor.py check SCHEMA PATH     # parse, re-encode, jsonschema-rs is_valid
    python benchmarks/floor.py route STEPS FROM TO SCHEMA PATH OUT   # also migrate, write
    python benchmarks/floor.py spin UNITS JOBS       # pure-Python work in JOBS processes

Directories are walked like `evalreg` walks them (sorted, hidden names skipped, `*.json` files);
`rewrite` mirrors the tree under OUT (indented, as the files were) or writes one JSONL file.
`check` is the least a validator built like evalreg does per record: parse, re-encode to prove
the text canonical (no key named twice, every number as written), and ask jsonschema-rs whether
the record is valid against SCHEMA (a schema that refers only into itself).
`route` is the least a migrator that runs evalreg's own steps does per record: parse, re-encode
to prove the text canonical, run the steps of STEPS (a family's folder of migrations) from FROM
to TO on the record in place, ask jsonschema-rs whether the result is valid against SCHEMA (TO's
schema), serialise it and write it plainly (as `rewrite` does): no detection, no report of the
changes the steps note, no atomic or durable write.
`spin` measures the machine rather than the input: how much faster equal, independent pieces of
pure-Python work get done by JOBS processes than by one, the most any `--jobs` can gain here.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

import orjson


def _files(root: str) -> Iterator[str]:
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if name.endswith(".json") and not name.startswith("."):
                yield os.path.join(folder, name)


def _loads(data: bytes) -> object:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None  # counted all the same: evalreg reports it and goes on


def parse(path: str) -> int:
    """Read and parse every record; return how many."""
    count = 0
    if os.path.isdir(path):
        for name in _files(path):
            with open(name, "rb") as stream:
                _loads(stream.read())
            count += 1
        return count
    with open(path, "rb") as stream:
        for line in stream:
            _loads(line)
            count += 1
    return count


def check(schema: str, path: str) -> int:
    """Parse, re-encode and validate every record with jsonschema-rs; return how many."""
    import jsonschema_rs

    with open(schema, "rb") as stream:
        is_valid = jsonschema_rs.validator_for(orjson.loads(stream.read())).is_valid
    count = 0
    if os.path.isdir(path):
        for name in _files(path):
            with open(name, "rb") as stream:
                record = _loads(stream.read())
            orjson.dumps(record, option=orjson.OPT_INDENT_2)
            is_valid(record)
            count += 1
        return count
    with open(path, "rb") as stream:
        for line in stream:
            record = _loads(line)
            orjson.dumps(record)
            is_valid(record)
            count += 1
    return count


def rewrite(path: str, out: str) -> int:
    """Read, parse, serialise and write every record; return how many."""
    return _mirror(path, out, orjson.dumps)


def _mirror(path: str, out: str, encode: Callable[..., bytes]) -> int:
    """Read and parse every record, write `encode(record, option=...)` of each under `out` (a
    tree like `path`'s, or one JSONL file; indented by two for files); return how many."""
    count = 0
    if os.path.isdir(path):
        for name in _files(path):
            with open(name, "rb") as stream:
                record = _loads(stream.read())
            target = os.path.join(out, os.path.relpath(name, path))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as stream:
                stream.write(encode(record, option=orjson.OPT_INDENT_2) + b"\n")
            count += 1
        return count
    os.makedirs(out, exist_ok=True)
    with (
        open(path, "rb") as stream,
        open(os.path.join(out, os.path.basename(path)), "wb") as target,
    ):
        for line in stream:
            target.write(encode(_loads(line), option=0) + b"\n")
            count += 1
    return count


def _steps(folder: str, source: str, target: str) -> list[Callable[[Any, Any], Any]]:
    """Return the `upgrade` of each step of `folder` from `source` to `target`, in order."""
    import importlib.util

    found, version = [], source
    while version != target:
        (name,) = (
            n for n in os.listdir(folder) if n.startswith(f"{version}_to_") and n.endswith(".py")
        )
        spec = importlib.util.spec_from_file_location(
            f"step_{len(found)}", os.path.join(folder, name)
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        found.append(module.upgrade)
        version = module.TO
    return found


def route(folder: str, source: str, target: str, schema: str, path: str, out: str) -> int:
    """Parse, re-encode, migrate, validate, serialise and write every record; return how many."""
    import jsonschema_rs

    from evalreg import StepContext

    steps = _steps(folder, source, target)
    with open(schema, "rb") as stream:
        is_valid = jsonschema_rs.validator_for(orjson.loads(stream.read())).is_valid

    def migrated(record: Any, *, option: int) -> bytes:
        orjson.dumps(record, option=option)  # the proof that the text was canonical
        ctx = StepContext(owned=True)
        for upgrade in steps:
            record = upgrade(record, ctx)
        is_valid(record)
        return orjson.dumps(record, option=option)

    return _mirror(path, out, migrated)


def _unit(seed: int) -> int:
    """One piece of pure-Python work (about 0.1 s): dict and integer operations."""
    table: dict[int, int] = {}
    total = seed
    for i in range(600_000):
        table[i & 1023] = i
        total += table.get(i % 997, 0)
    return total


def spin(units: int, jobs: int) -> int:
    """Do `units` pieces of work in `jobs` processes; return how many were done."""
    if jobs <= 1:
        return len([_unit(i) for i in range(units)])
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        return len(pool.map(_unit, range(units), chunksize=1))


if __name__ == "__main__":
    mode, *args = sys.argv[1:]
    if mode == "spin":
        print(spin(int(args[0]), int(args[1])))
    else:
        print({"parse": parse, "check": check, "rewrite": rewrite, "route": route}[mode](*args))
