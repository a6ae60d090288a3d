"""Checking the records under paths: detect and validate them, as streams of plain results.

The command line prints these results; other programs can consume them directly. Nothing here
prints or exits, and one bad file or record never stops the rest.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import orjson

from evalreg.batch import parallel
from evalreg.batch.config import Config
from evalreg.batch.places import Places
from evalreg.batch.rules import RuleRun, Summaries
from evalreg.engine.detect import Detection, remembered, shapes_of
from evalreg.engine.registry import Registry
from evalreg.engine.rules import Located
from evalreg.engine.selection import NO_RULES, Selection
from evalreg.engine.validate import undecided_issues
from evalreg.engine.validators import Issue, Validator
from evalreg.io.codec import DecodeError, loads, loads_line
from evalreg.io.pointer import MISSING, resolve
from evalreg.io.readers import (
    STDIN,
    Block,
    Item,
    cannot_read,
    count_lines,
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
    read_range_blocks,
    read_whole,
)
from evalreg.io.streams import check_memory


@dataclass(frozen=True)
class RecordCheck:
    """The outcome of detecting (and validating) one record."""

    path: str
    line: int | None
    status: Literal["valid", "invalid", "unreadable", "detected", "undetected", "known"]
    """`known`: every problem of the record is in the baseline (see `batch.baseline`)."""
    detection: Detection | None = None
    issues: tuple[Issue, ...] = ()
    error: str | None = None
    known: int = 0
    """How many of its problems the baseline holds (they are not in `issues`)."""
    digests: tuple[str, ...] = ()
    """For each issue, a digest of the value it points at (`value_digest`), for baselines."""

    @property
    def family(self) -> str | None:
        """Return the family the record was checked against."""
        return self.detection.family if self.detection else None

    @property
    def version(self) -> str | None:
        """Return the version the record was checked against."""
        return self.detection.version if self.detection else None


@dataclass(frozen=True)
class ValidRun:
    """Consecutive records of one file, of one version, that are all valid: counted, not listed
    one by one."""

    path: str
    count: int
    family: str | None = None
    version: str | None = None


@dataclass(frozen=True)
class RuleFinding:
    """A finding of a collection rule (across files), reported once every file is read."""

    path: str
    line: int | None
    issue: Issue
    family: None = None
    version: None = None
    error: None = None
    known: bool = False
    """Whether the baseline holds it (then it is counted, not reported)."""

    @property
    def status(self) -> Literal["invalid", "valid", "known"]:
        """Return `invalid` for an error, `valid` for a warning (as a record check would), and
        `known` for a finding of the baseline."""
        if self.known:
            return "known"
        return "invalid" if self.issue.severity == "error" else "valid"

    @property
    def issues(self) -> tuple[Issue, ...]:
        """Return the finding as a one-issue tuple, like a record check's (none if known)."""
        return () if self.known else (self.issue,)


def check_item(
    registry: Registry,
    item: Item,
    *,
    family: str | None = None,
    version: str | None = None,
    validate: bool = True,
    rules: RuleRun | None = None,
) -> RecordCheck:
    """Detect and (unless `validate` is false) validate one read item, with `rules` too."""
    if not item.ok:
        return RecordCheck(item.path, item.line, "unreadable", error=item.error)
    record = item.record
    detection, decided = decide(registry, record, item.path, family, version)
    if not validate:
        status: Literal["detected", "undetected"] = "detected" if detection.ok else "undetected"
        return RecordCheck(item.path, item.line, status, detection)
    if decided:
        issues = registry.validate(record, detection.family, detection.version)
    elif family is None:
        # Undecided: say why. Detecting again without the file name could decide otherwise.
        issues = undecided_issues(registry, detection)
    else:
        # Undecided, or another family than the one asked for: `validate` says why, or reads
        # the version from the asked family's marker.
        issues = registry.validate(record, family, version)
    if decided and rules is not None:
        assert detection.family is not None and detection.version is not None
        issues += rules.issues(record, item.path, item.line, detection.family, detection.version)
    return _outcome(item.path, item.line, detection, issues, record)


def decide(
    registry: Registry, record: Any, path: str, family: str | None, version: str | None
) -> tuple[Detection, bool]:
    """Return the detection of a record (`family` and `version`: as the caller forces them)
    and whether it decided the family and version to validate it at.

    The one place both ways of checking a record ask (`check_item`, and `_QuickCheck`, which
    gives the full check wherever this does not decide), so that they cannot disagree on it.
    """
    if family is not None and version is not None:
        detection = Detection("detected", family, version)
    else:
        found = remembered(registry, record)  # most records: one of a shape seen before
        detection = registry.detect(record, path) if found is None else found
    return detection, detection.ok and family in (None, detection.family)


def _outcome(
    path: str, line: int | None, detection: Detection, issues: list[Issue], record: Any
) -> RecordCheck:
    invalid = any(issue.severity == "error" for issue in issues)
    status: Literal["invalid", "valid"] = "invalid" if invalid else "valid"
    digests = tuple(value_digest(record, issue.pointer) for issue in issues)
    return RecordCheck(path, line, status, detection, tuple(issues), digests=digests)


def value_digest(record: Any, pointer: str) -> str:
    """Return a short digest of the value at `pointer` (`""` for the whole record, or none).

    A baseline tells a finding it holds from a new one by it: the same problem of another
    value is another finding.
    """
    if not pointer:
        return ""
    value = resolve(record, pointer)
    if value is MISSING:
        return ""
    try:
        data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):  # an integer beyond 64 bits, say
        data = repr(value).encode("utf-8", "surrogatepass")
    import hashlib  # only a run with a baseline digests values: not at every start

    return hashlib.sha256(data).hexdigest()[:16]


def _forced_version(registry: Registry, family: str | None, version: str | None) -> str | None:
    """Check a family and version given by the caller; return the registry's spelling of it.

    Raises:
        UnknownFamilyError: `family` is not known.
        UnknownVersionError: `version` is not one of the family's.
    """
    if family is None:
        return version
    registry.manifest(family)
    return None if version is None else registry.resolve_version(family, version)


def check_paths(
    registry: Registry,
    paths: Iterable[str | os.PathLike[str]],
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    family: str | None = None,
    version: str | None = None,
    validate: bool = True,
    config: Config | None = None,
) -> Iterator[RecordCheck]:
    """Yield one check per record of every file under `paths`, in file then line order.

    `config`: the project's configuration, whose include and exclude apply too.
    """
    version = _forced_version(registry, family, version)
    for path in (config or Config()).files(paths, include, exclude):
        for item in read_items(path):
            yield check_item(registry, item, family=family, version=version, validate=validate)


class _QuickCheck:
    """Tell records that are certainly valid at the cost of detecting and one `is_valid`.

    Anything else (invalid, undetected, unreadable, or found by a rule) gets the full check, so
    the results are those of `check_item` record for record. The agreement is by construction:
    both decide the family and version with `decide` (this one first asks the detections
    `decide` remembers, `shapes_of`, which give what it gives); `check_item`'s `Validator.issues` is
    empty exactly when `Validator.is_valid` holds (it asks it first); and both run the rules
    with the same `RuleRun` and make the outcome of their findings with `_outcome`.
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
        return _outcome(path, line, detection, found, record)

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
        valid = line_no = 0
        quick = self.quick
        found: RecordCheck | Validator
        seen: Validator | None = None
        # Most lines are of the shape, version and validity of the line before, and have no
        # rules to run: for them, `quick`'s steps are taken here. `known` is the detection of
        # such lines (None: none yet), and `surely` the check of their version, both taken
        # again from `quick`'s memory (`_seen`) after each line `quick` or `check` judged.
        shapes = self._shapes if self.rules is None else None
        find = shapes.find if shapes is not None else None
        known: Detection | None = None
        surely: Callable[[Any], bool] | None = None
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
                    known, surely, stale = self._known(seen), None, False
                    if known is not None and seen is not None:
                        surely = seen.surely_valid
                record = loads_line(text)
                if known is not None and find is not None and find(record) is known:
                    try:
                        if surely is not None and surely(record):
                            valid += 1
                            continue
                    except (ValueError, TypeError, OverflowError):
                        pass  # a value jsonschema-rs cannot take: `quick` asks the reference
                stale = True
                if isinstance(record, ValueError):
                    line = block.lines[index]
                    ended = block.ended or index < last
                    item = jsonl_item(path, line_no + index + 1, line + b"\n" if ended else line)
                    if item is None:
                        continue
                    found = self.check(item)
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

    def _known(self, validator: Validator | None) -> Detection | None:
        """Return the detection `quick` remembers if a record of it that `validator` finds
        valid needs no more (a detection by shape alone, of `validator`'s version), else None."""
        detection, remembered = self._seen
        if (
            self.rules is None
            and self._shapes is not None
            and detection is not None
            and detection.status == "detected"
            and remembered is validator
        ):
            return detection
        return None

    def paths(self, files: Iterable[str]) -> Iterator[RecordCheck | ValidRun]:
        """Check every record of each file in turn, as `whole` and `file` do.

        Most runs read thousands of `*.json` files of one version, each valid and with no rules
        to run: for them the steps of `whole` and `quick` are done here, in one loop.
        """
        shapes = self._shapes if self.rules is None else None
        for path in files:
            if shapes is None or not path.endswith(".json"):
                found = self.whole(path)
            else:
                try:
                    data = read_whole(path)
                    check_memory(len(data))
                    record = loads(data)
                except (OSError, MemoryError, *DecodeError):
                    found = None
                else:
                    seen, validator = self._seen
                    if (
                        seen is not None
                        and seen.status == "detected"
                        and shapes.find(record) is seen
                        and _surely(validator, record)
                    ):
                        yield ValidRun(path, 1, seen.family, seen.version)
                        continue
                    found = self._judge(record, path)
            if found is None:
                yield from self.file(path)
            else:
                yield found

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
        """Check the record of a whole file (see `whole`)."""
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

    def part(self, part: parallel.Part) -> tuple[list[RecordCheck | ValidRun], int]:
        """Check one unit part; return its results and, for a range, its number of lines."""
        if part.end is None:
            found = self.whole(part.path)
            return [found] if found is not None else list(self.file(part.path)), 0
        if self.rules is not None and part.start:
            self.rules.skip_file_rules(part.path)
        results: list[RecordCheck | ValidRun] = []
        lines = self.lines(read_range_blocks(part.path, part.start, part.end), part.path)
        count = 0
        try:
            while True:
                results.append(next(lines))
        except StopIteration as done:
            count = done.value
        except OSError as err:
            results.append(self.check(cannot_read(part.path, err)))
        if self.rules is not None:
            self.rules.close(part.path)
        return results, count

    @property
    def summaries(self) -> Summaries:
        """Return the summaries of the collection rules over what this check has read."""
        return [] if self.rules is None else self.rules.summaries


def _surely(validator: Validator | None, record: Any) -> bool:
    """Return True if `validator` finds `record` valid at once (False: ask `quick`)."""
    try:
        return validator is not None and validator.surely_valid(record)
    except (ValueError, TypeError, OverflowError):
        return False  # a value jsonschema-rs cannot take: `quick` asks the reference


def _run(path: str, count: int, seen: Any) -> ValidRun:
    """Return the run of `count` valid records of `path`, of the version `seen` validated."""
    return ValidRun(path, count, seen.family, seen.version)


Checked = tuple[list[RecordCheck | ValidRun], int] | tuple[int, str | None, str | None]
"""What a worker reports of one part: its results and number of lines, or for a whole file whose
records are all valid and of one version, how many and of which family and version (the parent
knows the path: far less to send back)."""


def _check_unit(
    registry: Registry,
    unit: parallel.Unit,
    family: str | None,
    version: str | None,
    rules: Selection,
) -> tuple[list[Checked], Summaries]:
    quick = _QuickCheck(registry, family, version, rules)
    found: list[Checked] = []
    for part in unit:
        checks, lines = quick.part(part)
        if part.whole and len(checks) == 1 and isinstance(checks[0], ValidRun):
            run = checks[0]
            found.append((run.count, run.family, run.version))
        else:
            found.append((checks, lines))
    return found, quick.summaries


def validate_paths(
    registry: Registry,
    paths: Iterable[str | os.PathLike[str]],
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    family: str | None = None,
    version: str | None = None,
    jobs: int = 1,
    rules: Selection | None = None,
    runner: parallel.Runner | None = None,
    config: Config | None = None,
) -> Iterator[RecordCheck | ValidRun | RuleFinding]:
    """Yield the check of every record under `paths` that is not valid, in file then line order.

    Valid records are counted in runs (`ValidRun`) between the others. The families' rules of
    `rules` run on every record (warnings are reported, and leave it valid); the findings of
    rules across files come last, once every file is read. With `jobs` above one and enough
    input, files and ranges of large JSONL files are checked by that many processes, or with
    `runner` (a Dask cluster, say) by its workers whatever the size of the input; the results,
    and their order, are the same as with one.

    `config`: the project's configuration, whose include and exclude apply too, and whose rule
    settings make the selection when `rules` is not given (`Config.selection`).
    """
    config = config or Config()
    if rules is None:
        rules = config.selection()
    version = _forced_version(registry, family, version)
    roots = [os.fspath(p) for p in paths]
    quick = _QuickCheck(registry, family, version, rules)
    always = runner is not None and STDIN not in roots
    jobs = runner.jobs if runner is not None else jobs
    jobs = 1 if STDIN in roots else jobs
    files, units = parallel.plan(config.files(roots, include, exclude), jobs, always=always)
    if units is None:
        with parallel.frozen():
            yield from quick.paths(files)
    else:
        args = (family, version, rules)
        yield from _gather(quick, units, registry, jobs, args, runner)
    if quick.rules is not None:
        yield from _across(quick.rules.finish())


def _gather(
    quick: _QuickCheck,
    units: Iterator[parallel.Unit],
    registry: Registry,
    jobs: int,
    args: tuple[Any, ...],
    runner: parallel.Runner | None,
) -> Iterator[RecordCheck | ValidRun]:
    """Yield the results of the workers' units in input order, keeping their summaries."""
    offset = 0
    results = parallel.imap(_check_unit, units, registry, jobs, args, runner=runner, lost=_lost)
    for unit, (found, summaries) in results:
        if quick.rules is not None:
            quick.rules.take(summaries)
        for part, checked in zip(unit, found, strict=True):
            if isinstance(checked[0], int):
                yield ValidRun(part.path, *checked)
                continue
            checks, lines = checked
            for check in checks:
                if offset and isinstance(check, RecordCheck) and check.line is not None:
                    check = replace(check, line=check.line + offset)
                yield check
            offset = 0 if part.last else offset + lines


def _lost(unit: parallel.Unit, reason: str) -> tuple[list[Checked], Summaries]:
    """Return what a unit whose worker died reports: each part unreadable, with the reason."""
    found: list[Checked] = []
    for part in unit:
        lines = 0 if part.end is None else count_lines(part.path, part.start, part.end)
        line = None if part.end is None else 1  # the range's first line, once shifted
        error = f"not checked: {reason}"
        checks: list[RecordCheck | ValidRun] = [
            RecordCheck(part.path, line, "unreadable", error=error)
        ]
        found.append((checks, lines))
    return found, []


def _across(findings: list[Located]) -> Iterator[RuleFinding]:
    for found in findings:
        yield RuleFinding(found.path, found.line, found.issue)
