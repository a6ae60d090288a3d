"""Baselines: the findings a datastore already has, so that a check fails only on new ones.

`write_baseline` records the findings of a validate run in a JSON file; `Baseline.filter` then
takes the results of a later run and marks those the baseline holds as known (`status
"known"`, `known` counts), leaving the new ones to be reported.

A finding is keyed by its file, what found it (a rule's id, or `schema` and its keyword,
`version`, `detect`, `unreadable`), its JSON pointer, and a digest of the value there
(`check.value_digest`): a record's line may move, and the same problem of another value is a
new finding. A file holds each key as many times as it was found. Files are named relative to
the baseline's folder, with the SHA-256 of their bytes: a file that is not where the baseline
has it takes the findings of the baseline's file with the same bytes, when that one is no
longer where it was (a file moved, or renamed, keeps its findings).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from evalreg.batch.records import RecordCheck, RuleFinding, ValidRun
from evalreg.batch.summary import code
from evalreg.engine.validators import Issue
from evalreg.errors import ReadError
from evalreg.io import remote
from evalreg.io.readers import read_whole
from evalreg.io.writers import write_atomic

FORMAT = 1
"""The version of the baseline file's format."""
MAX_MESSAGE = 200
"""The longest message kept beside a finding (for people reading the file; matching ignores it)."""

Key = tuple[str, str, str, str]
"""`(what found it, keyword, pointer, value digest)`."""
Checked = RecordCheck | ValidRun | RuleFinding


def _key(issue: Issue, digest: str) -> Key:
    return (code(issue), issue.keyword, issue.pointer, digest)


_UNREADABLE: Key = ("unreadable", "unreadable", "", "")


def _keys(check: RecordCheck | RuleFinding) -> list[tuple[Key, Issue | None]]:
    if isinstance(check, RuleFinding):
        return [(_key(check.issue, ""), check.issue)]
    if check.status == "unreadable":
        return [(_UNREADABLE, None)]
    digests = check.digests or ("",) * len(check.issues)
    return [(_key(i, d), i) for i, d in zip(check.issues, digests, strict=True)]


def file_digest(path: str) -> str | None:
    """Return the SHA-256 of a file's bytes (None if it cannot be read)."""
    try:
        return hashlib.sha256(read_whole(path)).hexdigest()
    except OSError:
        return None


@dataclass
class _File:
    """The findings a baseline holds for one file."""

    digest: str | None
    counts: Counter[Key] = field(default_factory=Counter)
    messages: dict[Key, str] = field(default_factory=dict)


class Baseline:
    """The findings of a baseline file, and what a run matched of them."""

    def __init__(self, path: str, files: dict[str, _File]) -> None:
        self.path = path
        self.folder = os.path.dirname(os.path.abspath(path))
        self.files = files
        self._left: dict[str, Counter[Key]] = {}
        """Per file of the baseline taken by a file of the run: the findings not yet matched."""
        self._taken: dict[str, str | None] = {}
        """Per file of the run: the baseline file whose findings it takes (None: none)."""
        self._names: dict[str, str] = {}
        self._by_digest: dict[str, list[str]] = {}
        for name, entry in files.items():
            if entry.digest:
                self._by_digest.setdefault(entry.digest, []).append(name)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Baseline:
        """Read a baseline file.

        Raises:
            ReadError: it cannot be read, or is not a baseline of this format.
        """
        where = os.fspath(path)
        try:
            data = json.loads(Path(where).read_bytes())
        except OSError as err:
            raise ReadError(where, f"cannot read the baseline: {err.strerror or err}") from err
        except ValueError as err:
            raise ReadError(where, f"not a baseline: not valid JSON ({err})") from err
        if not isinstance(data, dict) or data.get("evalreg-baseline") != FORMAT:
            raise ReadError(where, f'not a baseline: no "evalreg-baseline": {FORMAT}')
        files: dict[str, _File] = {}
        try:
            for name, entry in data["files"].items():
                found = files[name] = _File(entry.get("sha256"))
                for item in entry["findings"]:
                    key = (item["rule"], item["keyword"], item["pointer"], item["value"])
                    found.counts[key] += int(item.get("count", 1))
        except (KeyError, TypeError, AttributeError, ValueError) as err:
            raise ReadError(where, f"not a baseline: malformed entry ({err!r})") from err
        return cls(where, files)

    def name(self, path: str) -> str:
        """Return how the baseline names a file of a run: relative to its folder, with `/`."""
        found = self._names.get(path)
        if found is None:
            found = self._names[path] = self._name(path)
        return found

    def _name(self, path: str) -> str:
        if remote.is_url(path):
            return path
        full = os.path.abspath(path)
        base = self.folder.rstrip(os.sep) + os.sep
        relative = full[len(base) :] if full.startswith(base) else os.path.relpath(full, base)
        return relative.replace(os.sep, "/")

    def _entry(self, path: str) -> Counter[Key] | None:
        """Return the findings left for a file of the run (those of its moved self, if moved)."""
        if path not in self._taken:
            self._taken[path] = self._find(path)
        name = self._taken[path]
        if name is None:
            return None
        left = self._left.get(name)
        if left is None:
            left = self._left[name] = Counter(self.files[name].counts)
        return left

    def _read(self, path: str) -> None:
        """Note a file of the run, by its name alone (`fixed` counts what it no longer has)."""
        name = self.name(path)
        if name in self.files and name not in self._left:
            self._left[name] = Counter(self.files[name].counts)
            self._taken.setdefault(path, name)

    def _find(self, path: str) -> str | None:
        name = self.name(path)
        if name in self.files:
            return name
        digest = file_digest(path)
        for other in self._by_digest.get(digest or "", ()):
            # The same bytes: the file moved, if the baseline's file is gone from its place.
            gone = not os.path.exists(os.path.join(self.folder, other))
            if gone and other not in self._left:
                return other
        return None

    def filter(self, checks: Iterable[Checked]) -> Iterator[Checked]:
        """Yield the results of a run with the findings the baseline holds marked known."""
        last = None
        for check in checks:
            if isinstance(check, ValidRun) or (
                isinstance(check, RecordCheck) and not check.issues and check.status != "unreadable"
            ):
                if check.path is not last:  # a file read whose findings may all be gone
                    last = check.path
                    self._read(check.path)
                yield check
                continue
            left = self._entry(check.path)
            if left is None:
                yield check
                continue
            yield self._marked(check, left)

    @staticmethod
    def _marked(check: RecordCheck | RuleFinding, left: Counter[Key]) -> Checked:
        if isinstance(check, RuleFinding):
            key = _key(check.issue, "")
            if left[key] > 0:
                left[key] -= 1
                return replace(check, known=True)
            return check
        if check.status == "unreadable":
            if left[_UNREADABLE] > 0:
                left[_UNREADABLE] -= 1
                return replace(check, status="known", known=1)
            return check
        kept: list[tuple[Issue, str]] = []
        digests = check.digests or ("",) * len(check.issues)
        for issue, digest in zip(check.issues, digests, strict=True):
            key = _key(issue, digest)
            if left[key] > 0:
                left[key] -= 1
            else:
                kept.append((issue, digest))
        known = len(check.issues) - len(kept)
        if not known:
            return check
        status = check.status
        if status == "invalid" and not any(i.severity == "error" for i, _ in kept):
            status = "known"
        return replace(
            check,
            status=status,
            issues=tuple(i for i, _ in kept),
            digests=tuple(d for _, d in kept),
            known=check.known + known,
        )

    @property
    def fixed(self) -> int:
        """Return how many findings of the files the run read were not found again (their
        records fixed, or gone; a file the run did not read counts none)."""
        return sum(sum(c for c in left.values() if c > 0) for left in self._left.values())


class BaselineWriter:
    """Collects the findings of a run, one result at a time, and writes them as a baseline."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._names = Baseline(self.path, {})
        self.files: dict[str, _File] = {}

    def add(self, check: Checked) -> None:
        """Keep the findings of one result (every one: known or new)."""
        if isinstance(check, ValidRun) or (
            isinstance(check, RecordCheck) and not check.issues and check.status != "unreadable"
        ):
            return
        name = self._names.name(check.path)
        entry = self.files.get(name)
        if entry is None:
            entry = self.files[name] = _File(file_digest(check.path))
        for key, issue in _keys(check):
            entry.counts[key] += 1
            if key not in entry.messages:
                shown = issue.message if issue is not None else (check.error or "unreadable")
                entry.messages[key] = shown[:MAX_MESSAGE]

    def write(self) -> dict[str, int]:
        """Write the baseline (replaced atomically); return its counts (`files`, `findings`).

        Files are named relative to the baseline's folder, in order, each with its findings.

        Raises:
            OSError: the baseline cannot be written.
        """
        document: dict[str, Any] = {"evalreg-baseline": FORMAT, "files": {}}
        for name in sorted(self.files):
            entry = self.files[name]
            document["files"][name] = {
                "sha256": entry.digest,
                "findings": [
                    {
                        "rule": key[0],
                        "keyword": key[1],
                        "pointer": key[2],
                        "value": key[3],
                        "count": entry.counts[key],
                        "message": entry.messages[key],
                    }
                    for key in sorted(entry.counts)
                ],
            }
        text = json.dumps(document, indent=1, ensure_ascii=False)
        write_atomic(self.path, text.encode("utf-8", "surrogatepass") + b"\n")
        findings = sum(sum(f.counts.values()) for f in self.files.values())
        return {"files": len(self.files), "findings": findings}


def write_baseline(path: str | os.PathLike[str], checks: Iterable[Checked]) -> dict[str, int]:
    """Write the findings of a run as a baseline (see `BaselineWriter`); return its counts.

    Raises:
        OSError: the baseline cannot be written.
    """
    writer = BaselineWriter(path)
    for check in checks:
        writer.add(check)
    return writer.write()
