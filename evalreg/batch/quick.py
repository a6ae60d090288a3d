"""Checking many records with the least work for those certainly valid (`QuickCheck`).

The results are those of `records.check_item`, record for record; a file, a JSONL file's lines
or a run of files are checked here, with what the records before them showed remembered.
"""

from __future__ import annotations

import errno
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any

from evalreg.batch.places import Places
from evalreg.batch.records import RecordCheck, ValidRun, check_item, decide, outcome
from evalreg.batch.rules import RuleRun, Summaries
from evalreg.engine.detect import Detection, shapes_of
from evalreg.engine.registry import Registry
from evalreg.engine.selection import NO_RULES, Selection
from evalreg.engine.validators import Validator
from evalreg.io.codec import DecodeError, loads, loads_line
from evalreg.io.readers import (
    STDIN,
    Block,
    Item,
    cannot_read,
    empty_file,
    file_kind,
    is_gzip,
    jsonl_item,
    open_binary,
    out_of_memory,
    read_blocks,
    read_document,
    read_items,
    read_items_from_bytes,
    read_whole,
)
from evalreg.io.streams import check_memory


class QuickCheck:
    """Tell records that are certainly valid at the cost of detecting and one `is_valid`.

    Anything else (invalid, undetected, unreadable, or found by a rule) gets the full check, so
    the results are those of `check_item` record for record. The agreement is by construction:
    both decide the family and version with `decide` (this one first asks the detections
    `decide` remembers, `shapes_of`, which give what it gives); `check_item`'s `Validator.issues` is
    empty exactly when `Validator.is_valid` holds (it asks it first); and both run the rules
    with the same `RuleRun` and make the outcome of their findings with `outcome`.
    """

    def __init__(
        self,
        registry: Registry,
        family: str | None,
        version: str | None,
        rules: Selection = NO_RULES,
    ) -> None:
        self.registry = registry
        self.family = family
        self.version = version
        self.rules = RuleRun(registry, rules) if rules.enabled else None
        self._validators: dict[tuple[str, str], Validator] = {}
        # `decide` gives what these remember for any record they know, when nothing is forced.
        self._shapes = shapes_of(registry) if family is None and version is None else None
        self._seen: tuple[Detection | None, Validator | None] = (None, None)

    def check(self, item: Item) -> RecordCheck:
        """Check one read item in full."""
        return check_item(
            self.registry, item, family=self.family, version=self.version, rules=self.rules
        )

    def quick(self, record: Any, path: str, line: int | None) -> RecordCheck | Validator:
        """Return the validator of the record's version when `check_item` would find `record`
        valid with nothing to say, else the check it would give."""
        shapes = self._shapes
        detection = None if shapes is None else shapes.find(record)
        if detection is None or detection.status != "detected":
            detection, decided = decide(self.registry, record, path, self.family, self.version)
            if not decided:
                return self.check(Item(path, line, record=record))
        family, version = detection.family, detection.version
        assert family is not None and version is not None
        seen, validator = self._seen
        if detection is not seen or validator is None:
            validator = self._validators.get((family, version))
            if validator is None:
                validator = self.registry.validator(family, version)
                self._validators[family, version] = validator
            self._seen = (detection, validator)
        if not validator.is_valid(record):
            return self.check(Item(path, line, record=record))
        if self.rules is None:
            return validator
        found = self.rules.issues(record, path, line, family, version)
        if not found:
            return validator
        return outcome(path, line, detection, found, record)

    def items(
        self, items: Iterable[Item], place: Callable[[int, RecordCheck], RecordCheck] | None = None
    ) -> Iterator[RecordCheck | ValidRun]:
        """Check read items: runs of valid ones counted, the others checked in full (and given
        to `place` with their index, to say where their problems are)."""
        valid, path, seen = 0, "", None
        for index, item in enumerate(items):
            found = self.quick(item.record, item.path, item.line) if item.ok else self.check(item)
            if isinstance(found, Validator):
                if valid and found is not seen:
                    yield _run(path, valid, seen)
                    valid = 0
                valid, path, seen = valid + 1, item.path, found
                continue
            if valid:
                yield _run(path, valid, seen)
                valid = 0
            yield place(index, found) if place is not None and found.issues else found
        if valid:
            yield _run(path, valid, seen)

    def lines(
        self, blocks: Iterable[Block], path: str
    ) -> Generator[RecordCheck | ValidRun, None, int]:
        """Check the lines of a JSONL file, like `items`; return the number of lines."""
        return _check_lines(self, blocks, path)

    def _known(self, validator: Validator | None) -> Detection | None:
        """Return the detection `quick` remembers if a record of it that `validator` finds
        valid needs nothing more but the rules (a detection by shape alone, of `validator`'s
        version), else None."""
        detection, remembered = self._seen
        if (
            self._shapes is not None
            and detection is not None
            and detection.status == "detected"
            and remembered is validator
        ):
            return detection
        return None

    def paths(self, files: Iterable[str]) -> Iterator[RecordCheck | ValidRun]:
        """Check every record of each file in turn, as `whole` and `file` do."""
        for path in files:
            found = self.whole(path)
            if found is None:
                yield from self.file(path)
            else:
                yield found

    def _ruled(self, record: Any, path: str, detection: Detection) -> RecordCheck | ValidRun:
        """Run the rules on the valid record of a whole file (as `_judge` would, after `quick`
        found it valid), and end the file."""
        assert self.rules is not None and detection.family is not None
        assert detection.version is not None
        try:
            issues = self.rules.issues(record, path, None, detection.family, detection.version)
            found: RecordCheck | ValidRun = (
                outcome(path, None, detection, issues, record)
                if issues
                else ValidRun(path, 1, detection.family, detection.version)
            )
        except MemoryError:
            found = self.check(Item(path, None, error=out_of_memory(path)))
        self.rules.close(path)
        return found

    def whole(self, path: str) -> RecordCheck | ValidRun | None:
        """Check a file named `*.json` that holds one JSON document, as `file` would, with less
        machinery per file (most runs read thousands of them); None where `file` must say: the
        file cannot be read, is not JSON, or does not fit in memory."""
        if not path.endswith(".json"):
            return None
        try:
            data = read_whole(path)
            check_memory(len(data))
            record = loads(data)
        except (OSError, MemoryError, *DecodeError):
            return None
        return self._judge(record, path)

    def _judge(self, record: Any, path: str) -> RecordCheck | ValidRun:
        """Check the record of a whole file (see `whole`).

        Most runs read thousands of `*.json` files of one version, each valid: a record of the
        shape and version of the one before is judged here, without `quick`'s steps.
        """
        seen, validator = self._seen
        shapes = self._shapes
        if (
            shapes is not None
            and seen is not None
            and seen.status == "detected"
            and shapes.find(record) is seen
            and _surely(validator, record)
        ):
            if self.rules is None:
                return ValidRun(path, 1, seen.family, seen.version)
            return self._ruled(record, path, seen)
        try:
            found = self.quick(record, path, None)
        except MemoryError:
            found = self.check(Item(path, None, error=out_of_memory(path)))
        if self.rules is not None:
            self.rules.close(path)
        return _run(path, 1, found) if isinstance(found, Validator) else found

    def file(self, path: str) -> Iterator[RecordCheck | ValidRun]:
        """Check every record of one file."""
        try:
            yield from self._file(path)
        except MemoryError:  # the file is unreadable here; the run goes on
            yield self.check(Item(path, None, error=out_of_memory(path)))
        if self.rules is not None:
            self.rules.close(path)

    def _file(self, path: str) -> Iterator[RecordCheck | ValidRun]:
        kind = file_kind(path)
        if kind == "json" and path != STDIN and not is_gzip(path):
            try:
                data = read_whole(path)
            except OSError as err:
                if err.errno == errno.EFBIG:  # too large to read whole: no use trying again
                    yield self.check(cannot_read(path, err))
                    return
                # else the general path below says why
            else:
                yield from self._document(data, path)
                return
        if kind == "yaml" and path != STDIN:
            yield from self._yaml(path)
            return
        if kind not in ("json", "jsonl") or path == STDIN:
            yield from self.items(read_items(path))
            return
        try:
            stream = open_binary(path)
        except OSError:
            yield from self.items(read_items(path, kind))  # it says why it cannot open
            return
        with stream:
            try:
                if kind == "jsonl":
                    if not (yield from self.lines(read_blocks(stream), path)):
                        yield self.check(empty_file(path))
                    return
                yield from self._document(read_document(stream, path), path)
            except (OSError, EOFError) as err:
                yield self.check(cannot_read(path, err))

    def _yaml(self, path: str) -> Iterator[RecordCheck | ValidRun]:
        """Check the documents of a YAML file; their problems say their line and column."""
        try:
            with open_binary(path) as stream:
                data = stream.read()
        except (OSError, EOFError) as err:
            yield self.check(cannot_read(path, err))
            return
        yield from self.items(read_items_from_bytes(data, path, "yaml"), Places(data))

    def _document(self, data: bytes, path: str) -> Iterator[RecordCheck | ValidRun]:
        """Check the bytes of a whole JSON document."""
        check_memory(len(data))
        try:
            record = loads(data)
        except DecodeError:
            yield from self.items(read_items_from_bytes(data, path, "json"))
            return
        found = self.quick(record, path, None)
        yield _run(path, 1, found) if isinstance(found, Validator) else found

    @property
    def summaries(self) -> Summaries:
        """Return the summaries of the collection rules over what this check has read."""
        return [] if self.rules is None else self.rules.summaries


def _check_lines(
    checker: QuickCheck, blocks: Iterable[Block], path: str
) -> Generator[RecordCheck | ValidRun, None, int]:
    """`QuickCheck.lines`: the loop over the lines of a JSONL file."""
    valid = line_no = 0
    quick = checker.quick
    found: RecordCheck | Validator
    seen: Validator | None = None
    # Most lines are of the shape, version and validity of the line before: for them,
    # `quick`'s steps are taken here. `known` is the detection of such lines (None: none
    # yet), and `surely` the check of their version, both taken again from `quick`'s memory
    # (`_seen`) after each line `quick` or `check` judged.
    rules = checker.rules
    find = checker._shapes.find if checker._shapes is not None else None
    known: Detection | None = None
    surely: Callable[[Any], bool] | None = None
    labels = ("", "")
    stale = True
    blocks = iter(blocks)
    while True:
        try:
            block = next(blocks, None)
        except (OSError, EOFError):
            if valid:  # the records before a failure (gzip data cut off) count
                yield _run(path, valid, seen)
            raise
        if block is None:
            break
        last = len(block.lines) - 1
        # One line at a time: a block's records all alive at once would keep the garbage
        # collector busy with them.
        for index, text in enumerate(block.lines):
            if stale:
                known, surely, stale = checker._known(seen), None, False
                if known is not None and seen is not None:
                    surely, labels = seen.surely_valid, (seen.family, seen.version)
            record = loads_line(text)
            ruled: RecordCheck | None = None
            if known is not None and find is not None and find(record) is known:
                try:
                    sure = surely is not None and surely(record)
                except (ValueError, TypeError, OverflowError):  # `quick` asks the reference
                    sure = False
                if sure:
                    if rules is None:
                        valid += 1
                        continue
                    number = line_no + index + 1
                    issues = rules.issues(record, path, number, *labels)
                    if not issues:
                        valid += 1
                        continue
                    ruled = outcome(path, number, known, issues, record)
            stale = True
            if ruled is not None:  # valid, and found by a rule
                found = ruled
            elif isinstance(record, ValueError):
                line = block.lines[index]
                ended = block.ended or index < last
                item = jsonl_item(path, line_no + index + 1, line + b"\n" if ended else line)
                if item is None:
                    continue
                found = checker.check(item)
            else:
                found = quick(record, path, line_no + index + 1)
                if isinstance(found, Validator):
                    if found is not seen:  # another version: another run
                        if valid:
                            yield _run(path, valid, seen)
                        valid, seen = 0, found
                    valid += 1
                    continue
            if valid:
                yield _run(path, valid, seen)
                valid = 0
            yield found
        line_no += last + 1
    if valid:
        yield _run(path, valid, seen)
    return line_no


def _surely(validator: Validator | None, record: Any) -> bool:
    """Return True if `validator` finds `record` valid at once (False: ask `quick`)."""
    try:
        return validator is not None and validator.surely_valid(record)
    except (ValueError, TypeError, OverflowError):
        return False  # a value jsonschema-rs cannot take: `quick` asks the reference


def _run(path: str, count: int, seen: Any) -> ValidRun:
    """Return the run of `count` valid records of `path`, of the version `seen` validated."""
    return ValidRun(path, count, seen.family, seen.version)
