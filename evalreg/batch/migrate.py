"""Migrating the files under paths: the outcome of every record and of every file, as a stream.

A file is written (atomically) only when every record in it migrated or was current. With
several jobs, files and ranges of large JSONL files are migrated by worker processes, and their
outcomes come back in order. Nothing here prints or exits, and one bad file or record never stops
the rest.

`migrate_run` is `migrate_paths` with its summary (`migrate_summary`). `migrate_paths` is a
pipeline of named stages, the methods of `_Run` that own what passes between them: `walk` (each
file with its output), `parallel.plan` (units of work), `tasks` (each unit with its parts'
outputs, taken by path), the workers (`migrate_unit`), and `gather` (the outcomes in order,
a large file's ranges joined and written here); or `one_by_one`, in this process.
"""

from __future__ import annotations

import contextlib
import os
from collections import deque
from collections.abc import Generator, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from evalreg.batch import inplace, parallel
from evalreg.batch.config import Config
from evalreg.batch.migrate_file import (
    Abandon,
    FileMigration,
    Leftover,
    MigrateOptions,
    RecordMigration,
    Tally,
    cannot_write,
    migrate_file,
    writer_for,
)
from evalreg.batch.migrate_summary import MigrationRun, MigrationSummary
from evalreg.batch.migrate_unit import RANGE_OUT_BYTES, Ranged, lost_part, migrate_unit
from evalreg.engine.registry import Registry
from evalreg.errors import OutputOverlapError
from evalreg.io import remote
from evalreg.io.writers import leftovers, sync_written

MigrationOutcome = RecordMigration | FileMigration | Leftover
"""What `migrate_paths` yields."""

Notes = Literal["each", "grouped"]
"""How `migrate_paths` reports the notes of records that succeeded (see its `notes`)."""


def migrate_run(
    registry: Registry,
    paths: Sequence[str],
    options: MigrateOptions,
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    jobs: int = 1,
    runner: parallel.Runner | None = None,
    config: Config | None = None,
    notes: Notes = "each",
) -> MigrationRun:
    """Migrate every file under `paths` (see `migrate_paths`); return the run, whose outcomes
    are counted into its `summary` as they are iterated.

    `notes`: `grouped` counts each distinct note of the run once as well (`summary.groups`), and
    lets `migrate_paths` send the records that succeeded alike as one outcome.

    Raises:
        OutputOverlapError: `options.out` overlaps an input (when the run is iterated).
    """
    outcomes = migrate_paths(
        registry,
        paths,
        options,
        include=include,
        exclude=exclude,
        jobs=jobs,
        runner=runner,
        config=config,
        notes=notes,
    )
    return MigrationRun(outcomes, MigrationSummary(group_notes=notes == "grouped"))


def migrate_paths(
    registry: Registry,
    paths: Sequence[str],
    options: MigrateOptions,
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    jobs: int = 1,
    runner: parallel.Runner | None = None,
    config: Config | None = None,
    notes: Notes = "each",
) -> Iterator[MigrationOutcome]:
    """Migrate every file under `paths`; yield each record's outcome and each file's.

    With `jobs` above one and enough input, files and ranges of large JSONL files are migrated
    by that many processes, or with `runner` (a Dask cluster, say) by its workers whatever the
    size of the input: the files written and the outcomes reported, in their order, are the
    same as with one, except that the results carry no records (they are in the files) and that
    records that succeeded alike come as one outcome with their `count` (see `RecordMigration`).

    Files rewritten in place are locked while they are migrated, and left as they were if they
    change meanwhile (see `inplace`). In each folder written to, temporary files left by
    processes no longer running are removed, and reported as `Leftover`s (not with `dry_run`).
    Whole files are written by the process that migrates them; the migrated lines of a range of
    a large JSONL file come back to this process, which writes the file. `config`: the
    project's configuration, whose include and exclude apply too. `notes`: `grouped` lets the
    records of a part of the work that succeeded alike come as one outcome, at the first one's
    line, with their count, and their notes without the values that differ from record to record
    (`Note.lean`), rather than runs of consecutive ones: for callers that only count the records
    and each distinct note (`MigrationSummary` with `group_notes`).
    """
    if options.out is not None and not options.dry_run:
        check_output(paths, options.out)
    run = _Run(options, runner is not None)
    walked = run.walk(paths, config or Config(), include, exclude)
    if runner is not None:
        jobs = runner.jobs
    files, units = parallel.plan(walked, jobs, always=run.cluster, range_max=RANGE_OUT_BYTES)
    if units is None:
        yield from run.one_by_one(registry, files)
        return
    results = parallel.imap(
        migrate_unit,
        run.tasks(units),
        registry,
        jobs,
        (options, notes == "grouped"),
        runner=runner,
        lost=run.lost,
    )
    yield from run.gather(results)


Task = tuple[parallel.Unit, tuple[str | None, ...]]
"""A unit of work as handed to a worker: its parts, and the output of each."""


class _ByPath:
    """Values kept by file path until taken; a path walked twice (under two of the paths given)
    keeps both, each taken in turn."""

    def __init__(self) -> None:
        self._held: dict[str, deque[Any]] = {}

    def put(self, path: str, value: Any) -> None:
        self._held.setdefault(path, deque()).append(value)

    def take(self, path: str) -> Any:
        held = self._held[path]
        value = held.popleft()
        if not held:
            del self._held[path]
        return value

    def left(self) -> list[Any]:
        """Return the values not taken (and forget them)."""
        values = [value for held in self._held.values() for value in held]
        self._held.clear()
        return values


class _Run:
    """What one `migrate_paths` call keeps from one stage to the next.

    The stages, in the order a file goes through them: `walk` finds the file, decides its
    output and clears the output's folder of leftovers; `parallel.plan` makes it part of a
    unit of work; `tasks` hands the unit out with each part's output (taken by path), locking
    a file rewritten in place in ranges; a worker migrates it (`migrate_unit`); `gather`
    reports the outcomes in order, joining a file's ranges. Or, with one process, `one_by_one`
    migrates each file as it comes. All of them run in the caller's thread: the pools take
    units as they need them, from this thread, and the state below is this object's alone.
    """

    def __init__(self, options: MigrateOptions, cluster: bool) -> None:
        self.options = options
        self.cluster = cluster
        """Whether a runner (a cluster) migrates the units, whatever the size of the input."""
        self.outputs = _ByPath()
        """The output of each file walked and not yet handed out (None: a dry run)."""
        self.planned: dict[str, os.stat_result] = {}
        """JSONL files to be rewritten in place, as they were when walked."""
        self.scanned: set[str] = set()
        """The folders written to, looked at for leftovers."""
        self.leftovers: deque[Leftover] = deque()
        """Temporary files of dead processes, removed and not yet reported."""
        self.guards = _ByPath()
        """The locks of files rewritten in place in ranges (or why they could not be taken)."""
        self.folders: set[Path] = set()
        """The folders this process wrote to, flushed at the end."""
        # Files rewritten in place are synced one by one (each replaces the only copy of its
        # records) and their folders once each at the end. With --out the originals stay, so
        # the outputs are renamed into place unsynced and flushed at the end with the file
        # system that holds them (see writers.sync_written).
        stored = remote.is_url(options.out) and not remote.is_local_url(str(options.out))
        self.synced = options.out is None or options.dry_run or stored  # a store: no flush

    def walk(
        self, paths: Sequence[str], config: Config, include: Sequence[str], exclude: Sequence[str]
    ) -> Iterator[str]:
        """Yield every file under `paths`, its output decided and kept by its path."""
        for root in paths:
            base = _base(root)
            for path in config.files([root], include, exclude):
                output = _output_path(path, base, self.options)
                if output == path and path.lower().endswith(".jsonl"):
                    with contextlib.suppress(OSError):  # as planned, to be locked as it is
                        self.planned[path] = os.stat(path)
                if output is not None and not remote.is_url(output):
                    folder = os.path.dirname(output) or os.curdir
                    if folder not in self.scanned:
                        self.scanned.add(folder)
                        self.leftovers.extend(_clear_leftovers(folder))
                self.outputs.put(path, output)
                yield path

    def cleared(self) -> Iterator[Leftover]:
        """Yield the leftovers found and not yet reported."""
        while self.leftovers:
            yield self.leftovers.popleft()

    def one_by_one(self, registry: Registry, files: list[str]) -> Iterator[MigrationOutcome]:
        """Migrate `files` in this process, each written as it is migrated."""
        try:
            with parallel.frozen():
                for path in files:
                    yield from self.cleared()
                    output = self.outputs.take(path)
                    yield from migrate_file(
                        registry, path, output, self.options, folders=self.folders
                    )
        finally:
            sync_written(self.folders, files_synced=self.synced)

    def tasks(self, units: Iterator[parallel.Unit]) -> Iterator[Task]:
        """Yield each unit with the output of each part; lock the files rewritten in place in
        ranges (their ranges are written by `gather`, in this process)."""
        output: str | None = None
        for unit in units:
            outputs = []
            for part in unit:
                if part.start == 0:  # a file begins (the ranges of one file share its output)
                    output = self.outputs.take(part.path)
                    if not part.whole and output == part.path:
                        guard = _lock(part.path, self.planned.pop(part.path, None))
                        self.guards.put(part.path, guard)
                outputs.append(output)
            yield unit, tuple(outputs)

    def lost(self, task: Task, reason: str) -> list[Ranged]:
        """Return what a task whose worker died reports, and remove what it was writing."""
        for output in {o for o in task[1] if o is not None and not remote.is_url(o)}:
            _clear_leftovers(os.path.dirname(output) or os.curdir)
        return [lost_part(part, output, reason) for part, output in zip(*task, strict=True)]

    def gather(self, results: Generator[tuple[Task, list[Ranged]]]) -> Iterator[MigrationOutcome]:
        """Yield the outcomes of the tasks in order: those of whole files as they are, those of
        the ranges of a file joined, and the file written (see `_join_ranges`)."""
        parts = (
            (part, output, ranged)
            for (unit, outputs), found in results
            for part, output, ranged in zip(unit, outputs, found, strict=True)
        )
        finished = False
        try:
            for part, output, ranged in parts:
                yield from self.cleared()
                if part.whole:
                    yield from ranged[0]
                    continue
                ranges = _file_ranges(part, ranged, parts)
                guard = self.guards.take(part.path) if output == part.path else None
                try:
                    yield from _join_ranges(
                        part.path, output, self.options, ranges, self.folders, guard
                    )
                    for _ in ranges:
                        pass  # the ranges after a failed write
                finally:
                    if isinstance(guard, inplace.Guard):
                        guard.release()
            yield from self.cleared()
            finished = True
        finally:
            results.close()  # stops the workers
            for held in self.guards.left():
                if isinstance(held, inplace.Guard):
                    held.release()
            if not finished or self.cluster:  # workers that died or stopped may have left
                for folder in list(self.scanned):  # what they were writing: this run removes it
                    _clear_leftovers(folder)
            if not self.synced:
                self.folders.add(Path(str(self.options.out)))  # the workers' outputs too
            sync_written(self.folders, files_synced=self.synced)


def _output_path(path: str, root: str | None, options: MigrateOptions) -> str | None:
    if options.dry_run:
        return None
    if options.in_place:
        return path
    assert options.out is not None
    if not root:
        return os.path.join(options.out, os.path.basename(path))
    # A walk yields `root` joined with the rest: cut it off, sparing `relpath` (per file).
    rest = path[len(root) :]
    if path.startswith(root) and (root.endswith(os.sep) or rest.startswith(os.sep)):
        return os.path.join(options.out, rest.lstrip(os.sep))
    return os.path.join(options.out, os.path.relpath(path, root))


def _base(root: str) -> str | None:
    """Return the folder that outputs mirror for files found under `root` (None: a file)."""
    if not remote.is_url(root):
        return root if os.path.isdir(root) else None
    if remote.has_glob(root):
        return remote.glob_folder(root)
    return root if remote.isdir(root) else None


def _clear_leftovers(folder: str) -> list[Leftover]:
    """Remove the temporary files of dead processes in `folder`; return what was found."""
    found = []
    for path, pid in leftovers(folder):
        size = 0
        try:
            size = os.stat(path).st_size
            os.remove(path)
            found.append(Leftover(path, pid, size))
        except OSError as err:
            found.append(Leftover(path, pid, size, err.strerror or str(err)))
    return found


def _lock(path: str, seen: os.stat_result | None) -> inplace.Guard | Exception:
    """Lock a file to be migrated in ranges in place; return the guard, or why it failed.

    `seen`: the file when its ranges were planned; if it is another now, the ranges are not
    those of its lines.
    """
    try:
        guard = inplace.lock(path)
    except (OSError, inplace.FileBusy) as err:
        return err
    if seen is not None and (seen.st_ino, seen.st_size, seen.st_mtime_ns) != (
        guard.identity[1],
        guard.identity[2],
        guard.identity[3],
    ):
        guard.release()
        return inplace.FileChanged(
            f"changed while being migrated ({seen.st_size:,} bytes planned, "
            f"{guard.identity[2]:,} bytes now)"
        )
    return guard


def _file_ranges(
    part: parallel.Part,
    found: Ranged,
    rest: Iterator[tuple[parallel.Part, str | None, Ranged]],
) -> Iterator[tuple[Ranged, int]]:
    """Yield the results of the ranges of one file, the first given, the others from `rest`."""
    yield found, part.end or 0
    while not part.last:
        part, _, found = next(rest)
        yield found, part.end or 0


def _join_ranges(
    path: str,
    output: str | None,
    options: MigrateOptions,
    ranges: Iterable[tuple[Ranged, int]],
    folders: set[Path],
    guard: inplace.Guard | Exception | None = None,
) -> Iterator[RecordMigration | FileMigration]:
    """Report and write a JSONL file migrated in ranges, as `migrate_file` would.

    `ranges`: each range's results (its migrated lines among them) and where it ends. `guard`:
    the lock of a file rewritten in place, or why it could not be locked: then the file is left
    as it was, and its records are not reported, since another process may have been rewriting
    what was read.
    """
    if isinstance(guard, Exception):
        for _ in ranges:
            pass
        yield FileMigration(path, output, "failed", message=cannot_write(output, guard))
        return
    tally = Tally()
    offset = 0
    in_place = output == path
    failure: str | None = None
    try:
        with contextlib.ExitStack() as stack:
            stream = None
            if output is not None:
                stream = stack.enter_context(writer_for(path, output, options, folders, guard))
            for (events, lines, data), end in ranges:
                for event in events:
                    assert isinstance(event, RecordMigration)
                    yield tally.add(event.shifted(offset) if offset else event)
                if stream is not None and data is not None:
                    stream.write(data)
                offset += lines
                if isinstance(guard, inplace.Guard):
                    guard.size = end  # the bytes read, which the file must still hold
            if output is not None and (tally.failed or (in_place and not tally.migrated)):
                raise Abandon
    except Abandon:
        pass
    except (OSError, inplace.FileChanged) as err:
        failure = cannot_write(output, err)
    if failure is not None:
        yield FileMigration(path, output, "failed", 0, 0, tally.failed, failure)
        return
    yield tally.outcome(path, output, rewrites=output is not None and output != path)


def check_output(paths: Sequence[str], out: str) -> None:
    """Refuse an output folder that is, contains or lies inside an input folder.

    Writing there would replace the files being read, or mix the outputs into the input, so that
    the next run reads them again (`out/migrated/migrated/...`). A file given as input is refused
    when its output would be the file itself.

    Raises:
        OutputOverlapError: `out` overlaps an input.
    """
    target = _comparable(out)
    for root in paths:
        base = _base(root)
        if base is None:  # a file: its output is `out/NAME`
            if _comparable(os.path.join(out, os.path.basename(root.rstrip("/")))) == _comparable(
                root
            ):
                raise OutputOverlapError(out, root, "holds the input file")
            continue
        folder = _comparable(base)
        if target == folder:
            raise OutputOverlapError(out, base, "is the input folder")
        if _within(target, folder):
            raise OutputOverlapError(out, base, "lies inside the input folder")
        if _within(folder, target):
            raise OutputOverlapError(out, base, "contains the input folder")


def _within(inner: str, outer: str) -> bool:
    """Return whether `inner` lies below `outer` (both as `_comparable` spells them)."""
    return inner.startswith(outer if outer.endswith("/") else outer + "/")


def _comparable(path: str) -> str:
    """Return a path (or URL) in one spelling: the real local path, `/` separated, no `/` last."""
    if remote.is_url(path) and remote.is_local_url(path):
        path = remote.local_path(path)
    if remote.is_url(path):
        return path.rstrip("/")
    return Path(os.path.realpath(path)).as_posix().rstrip("/") or "/"
