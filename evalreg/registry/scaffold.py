"""A new registry directory with one example family, to start a framework's registry from.

`init_registry` writes the manifest (version marker, fingerprint, file-name pattern and a
declarative rule), two schema versions, the migration step between them, a rule in Python, the
lock that releases both versions, and two example records (one at each version), such that
`evalreg check` passes on the directory and `evalreg validate` accepts the examples. Every file
says what it is for; a framework author renames the family and edits from there.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalreg.errors import RegistryError
from evalreg.registry.lock import LOCK_NAME, Lock, digest

DEFAULT_FAMILY = "acme.run"
_NAME = re.compile(r"[a-z][a-z0-9_-]*(?:\.[a-z][a-z0-9_-]*)+")
_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

_MANIFEST = """\
# The manifest of {family}: how evalreg recognises its records, and what they must satisfy
# beyond their schemas. Its file name is the family's name; see the documentation's page
# "Registry directories" (docs/registry-directories.md).
name: {family}
title: {title}
description: One run of an evaluation harness, with the model and a score per task.
kind: json                           # the usual file kind: json, jsonl or yaml
files: ["*.{family}.json"]           # file names that suggest the family
markers:                             # where a record states its version
  - pointer: /schema_version
    template: "{{version}}"            # how `evalreg migrate` writes it
structure:                           # what a record of the family looks like, for files
  required: [/model, /results]       # that state no version
versioning:
  bump_check: error                  # a breaking change needs a major or minor release
rules:                               # checks beyond JSON Schema, by `evalreg validate`
  - id: {family}.bounds
    message: each score lies within its bounds
    each: /results/*                 # every item the pointer reaches
    when: [{{present: /score}}]
    require:
      - le: [/min, /score]
      - le: [/score, /max]
"""

_STEP = '''\
"""Give the model as an object with its id, and record the harness that produced the run."""

from __future__ import annotations

from typing import Any

from evalreg import Param, StepContext

FROM = "1.0.0"
TO = "2.0.0"
PARAMS = (
    Param("harness", help="Name of the harness that produced the run.", default="unknown"),
)


def upgrade(record: dict[str, Any], ctx: StepContext) -> dict[str, Any]:
    out = dict(record)  # a new record: never change the one given
    out["model"] = {{"id": record["model"]}}
    ctx.moved("/model", "/model/id")
    out["harness"] = ctx.params["harness"]
    return out


# A `downgrade(record, ctx)` beside it would take 2.0.0 records back to 1.0.0; each value it
# cannot carry is reported with ctx.lose(pointer, reason), and fails the record unless
# `--allow-loss` is given.
'''

_RULE = '''\
"""Each task appears once in a run's results."""

from __future__ import annotations

from typing import Any

ID = "{family}.unique-tasks"
# SEVERITY = "warning" would leave such records valid; VERSIONS = ["2.0.0"] would limit the rule.


def check(record: Any, ctx: Any) -> None:
    seen = set()
    for index, result in enumerate(record.get("results", [])):
        task = result.get("task") if isinstance(result, dict) else None
        if task in seen:
            ctx.report(f"/results/{{index}}/task", f"task {{task!r}} appears more than once")
        seen.add(task)
'''

_README = """\
# {family}: a registry directory made by `evalreg init`

    registry/{family}.yaml                    the manifest, with a declarative rule
    schemas/{family}/1.0.0.schema.json        the first version
    schemas/{family}/2.0.0.schema.json        the second: the model as an object, a harness
    migrations/{family}/1.0.0_to_2.0.0.py     the step between them
    rules/{family}/unique_tasks.py            a rule written in Python
    registry.lock                             the digests of the released versions
    examples/                                 a record at each version

Try it:

    evalreg --registry {directory} validate {directory}/examples
    evalreg --registry {directory} migrate {directory}/examples --to 2.0.0 --dry-run
    evalreg check --registry {directory}

Then rename the family (the manifest's file name and `name`, the folders, the rule ids), edit
the schemas, and start each new version with `evalreg --registry {directory} new-version
{family} VERSION` and finish it with `evalreg --registry {directory} release {family} VERSION`.
"""


def _result() -> dict[str, Any]:
    return {
        "type": "object",
        "description": "The score of one task, with the bounds the score lies within.",
        "required": ["task", "score"],
        "properties": {
            "task": {"type": "string", "minLength": 1},
            "score": {"type": "number"},
            "min": {"type": "number"},
            "max": {"type": "number"},
        },
        "additionalProperties": False,
    }


def _schema(family: str, title: str, version: str) -> dict[str, Any]:
    model: dict[str, Any] = {
        "type": "string",
        "minLength": 1,
        "description": "The model evaluated.",
    }
    properties: dict[str, Any] = {
        "schema_version": {"const": version, "description": "The version of this schema."},
        "model": model,
        "results": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/result"}},
    }
    required = ["schema_version", "model", "results"]
    if version == "2.0.0":
        properties["model"] = {
            "type": "object",
            "description": "The model evaluated: its id, and the revision where known.",
            "required": ["id"],
            "properties": {"id": model, "revision": {"type": "string"}},
            "additionalProperties": False,
        }
        properties["harness"] = {
            "type": "string",
            "minLength": 1,
            "description": "The harness that produced the run.",
        }
        required.append("harness")
    return {
        "$schema": _SCHEMA_DIALECT,
        "title": f"{title} {version}",
        "description": f"One run of an evaluation harness ({family} {version}).",
        "type": "object",
        "required": required,
        "properties": properties,
        "additionalProperties": False,
        "$defs": {"result": _result()},
    }


def _examples() -> dict[str, dict[str, Any]]:
    results = [
        {"task": "arithmetic", "score": 0.82, "min": 0, "max": 1},
        {"task": "reading", "score": 0.67, "min": 0, "max": 1},
    ]
    return {
        "1.0.0": {"schema_version": "1.0.0", "model": "tiny-model-1", "results": results},
        "2.0.0": {
            "schema_version": "2.0.0",
            "model": {"id": "tiny-model-2", "revision": "main"},
            "results": results,
            "harness": "acme-harness",
        },
    }


@dataclass(frozen=True)
class Scaffold:
    """What `init_registry` wrote."""

    directory: Path
    family: str
    files: tuple[Path, ...]
    examples: tuple[Path, ...]


def _dump(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def init_registry(directory: str | Path, family: str = DEFAULT_FAMILY) -> Scaffold:
    """Write a registry directory with one example family under `directory`.

    The directory may exist, but none of the files to write may: nothing is overwritten.

    Raises:
        RegistryError: the family name is not a dotted lower-case name such as `acme.run`, a
            file to write exists already, or a file cannot be written.
    """
    if not _NAME.fullmatch(family):
        raise RegistryError(
            str(directory),
            f"family name {family!r}: use dotted lower-case words such as {DEFAULT_FAMILY}",
        )
    root = Path(directory)
    title = f"{family} evaluation runs"
    schemas = {v: _schema(family, title, v) for v in ("1.0.0", "2.0.0")}
    lock = Lock(root)
    for version, document in schemas.items():
        lock = lock.with_entry(family, version, digest(document))
    examples = {
        root / "examples" / f"run-{version}.{family}.json": _dump(record)
        for version, record in _examples().items()
    }
    files: dict[Path, str] = {
        root / "registry" / f"{family}.yaml": _MANIFEST.format(family=family, title=title),
        **{root / "schemas" / family / f"{v}.schema.json": _dump(d) for v, d in schemas.items()},
        root / "migrations" / family / "1.0.0_to_2.0.0.py": _STEP.format(),
        root / "rules" / family / "unique_tasks.py": _RULE.format(family=family),
        root / LOCK_NAME: lock.dumps(),
        **examples,
        root / "README.md": _README.format(family=family, directory=root.as_posix()),
    }
    existing = [path for path in files if path.exists()]
    if existing:
        raise RegistryError(str(existing[0]), "already exists; init writes into a new directory")
    for path, text in files.items():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8", newline="\n")
        except OSError as err:
            raise RegistryError(str(path), f"cannot write: {err}") from err
    return Scaffold(root, family, tuple(files), tuple(examples))
