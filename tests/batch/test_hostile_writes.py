"""Writes under hostile conditions: full disks, read-only folders, concurrent runs, files that
change while they are migrated, existing backups, symbolic links, line ends, signals, crashes."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import evalreg.batch.migrate_file
from evalreg.batch import inplace, parallel
from evalreg.cli import main
from evalreg.io import writers
from tests.conftest import EXAMPLES

ROOT = Path(__file__).parents[2]
DEMO = ROOT / "evalreg" / "examples" / "eee" / "data"
OLD_AGGREGATE = next((DEMO / "hellaswag").rglob("*.json"))  # at 0.1.0
SAMPLES = next(DEMO.rglob("*_samples.jsonl"))  # at 0.2.0
CURRENT_SAMPLES = next((EXAMPLES / "eee.instance" / "valid").glob("*0.3.0*.jsonl"), None)
EVALREG = [sys.executable, "-m", "evalreg"]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def _folder(tmp_path: Path, files: int = 3) -> Path:
    """Return a folder of old aggregate files and one samples file."""
    root = tmp_path / "data"
    root.mkdir()
    for index in range(files):
        shutil.copy(OLD_AGGREGATE, root / f"a{index}.json")
    shutil.copy(SAMPLES, root / "s.jsonl")
    return root


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(root.iterdir()) if p.is_file()}


def _hidden(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob(".*"))


# -- 1. a write that fails is a located problem and exit code 1 ----------------------------


@pytest.fixture
def full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every temporary file of the atomic writer write to /dev/full (ENOSPC)."""
    real = writers._create_temporary

    def on_full_disk(folder: str, name: str) -> tuple[int, str]:
        fd, temp = real(folder, name)
        os.close(fd)
        return os.open("/dev/full", os.O_WRONLY), temp

    monkeypatch.setattr(writers, "_create_temporary", on_full_disk)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("mode", ["--in-place", "--out"])
def test_a_full_disk_fails_each_file_on_one_line_with_exit_code_1(
    full_disk: None, capsys: pytest.CaptureFixture[str], tmp_path: Path, mode: str
) -> None:
    root = _folder(tmp_path)
    before = _snapshot(root)
    args = [mode, str(tmp_path / "out")] if mode == "--out" else [mode, "--backup", ".bak"]
    code, out, err = run(capsys, "migrate", str(root), "--to", "latest", *args)
    assert code == 1
    failed = [line for line in out.splitlines() if ": failed: " in line]
    assert len(failed) == 4
    assert all("No space left on device" in line and "cannot write" in line for line in failed)
    assert "4 failed" in err
    assert _snapshot(root) == before  # no backup made, originals untouched
    assert _hidden(tmp_path) == []  # no temporary file left


def test_a_read_only_folder_fails_each_file_with_exit_code_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _folder(tmp_path, files=1)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    if os.geteuid() == 0:  # root writes anywhere: refuse as a read-only folder would
        real = writers._create_temporary

        def denied(folder: str, name: str) -> tuple[int, str]:
            if Path(folder).is_relative_to(out_dir):
                raise PermissionError(errno.EACCES, "Permission denied", folder)
            return real(folder, name)

        monkeypatch.setattr(writers, "_create_temporary", denied)
    os.chmod(out_dir, 0o555)
    try:
        code, out, _ = run(capsys, "migrate", str(root), "--to", "latest", "--out", str(out_dir))
    finally:
        os.chmod(out_dir, 0o755)
    assert code == 1
    failed = [line for line in out.splitlines() if ": failed: " in line]
    assert len(failed) == 2 and all("Permission denied" in line for line in failed)
    assert list(out_dir.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--in-place", "--backup", ""), "--backup takes a suffix such as .bak, not ''"),
        (("--in-place", "--backup", "/no/such/dir/x"), "--backup takes a suffix"),
        (("--out", "o", "--backup", ".bak"), "--backup goes with --in-place"),
        (("--in-place", "--overwrite-backup"), "--overwrite-backup goes with --backup"),
    ],
)
def test_a_bad_backup_option_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    root = _folder(tmp_path, files=1)
    before = _snapshot(root)
    code, out, err = run(capsys, "migrate", str(root), "--to", "latest", *args)
    assert code == 2 and out == ""
    assert err.splitlines() == [err.strip()] and message in err
    assert _snapshot(root) == before


# -- 2, 3. in-place runs exclude each other, and a file that changes is not replaced -------


def test_a_file_locked_by_another_run_is_reported_busy(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inplace, "LOCK_WAIT", 0.2)
    root = _folder(tmp_path, files=2)
    before = _snapshot(root)
    with open(root / "a0.json", "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        start = time.monotonic()
        code, out, _ = run(capsys, "migrate", str(root), "--to", "latest", "--in-place")
        waited = time.monotonic() - start
    assert code == 1
    busy = [line for line in out.splitlines() if "busy" in line]
    assert busy == [
        f"{root / 'a0.json'}: failed: 0 migrated, 0 current, 0 failed (left as it was: busy: "
        "another process is migrating it (waited 0.2 s))"
    ]
    assert 0.2 <= waited < 5
    after = _snapshot(root)
    assert after["a0.json"] == before["a0.json"] and after["a1.json"] != before["a1.json"]


def test_a_lock_taken_meanwhile_is_waited_for(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text("{}")
    with open(path, "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(inplace.FileBusy):
            inplace.lock(str(path), wait=0.1)
    guard = inplace.lock(str(path), wait=0.1)  # released: taken at once
    guard.check()
    guard.release()


def _appending_reader(path: Path, monkeypatch: pytest.MonkeyPatch, extra: bytes) -> None:
    """Make the migration's JSONL reader append `extra` to `path` after the first record."""
    real = evalreg.batch.migrate_file.read_items

    def reader(name: str, kind: object = None) -> Iterator[object]:
        for index, item in enumerate(real(name, kind)):  # type: ignore[arg-type]
            yield item
            if index == 0:
                with open(path, "ab") as stream:
                    stream.write(extra)

    monkeypatch.setattr(evalreg.batch.migrate_file, "read_items", reader)


def test_a_file_appended_to_while_migrated_in_place_is_kept(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.jsonl"
    shutil.copy(SAMPLES, path)
    extra = SAMPLES.read_bytes().splitlines(keepends=True)[0]
    _appending_reader(path, monkeypatch, extra)
    code, out, _ = run(
        capsys, "migrate", str(path), "--to", "latest", "--in-place", "--backup", ".bak"
    )
    assert code == 1
    assert "left as it was: changed while being migrated" in out
    assert path.read_bytes() == SAMPLES.read_bytes() + extra  # the appended record is there
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]  # no backup, no temporary


def test_a_file_appended_to_before_it_is_locked_for_ranges_is_kept(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parallel, "POOL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "RANGE_MIN_BYTES", 2000)
    monkeypatch.setattr(parallel, "RANGE_MAX_BYTES", 2000)
    path = tmp_path / "s.jsonl"
    lines = SAMPLES.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines * 10))
    original = path.read_bytes()
    real = parallel.line_ranges

    def ranges_then_append(name: str, size: int, chunk: int) -> list[tuple[int, int]]:
        found = real(name, size, chunk)
        with open(name, "ab") as stream:
            stream.write(lines[0])
        return found

    monkeypatch.setattr(parallel, "line_ranges", ranges_then_append)
    code, out, _ = run(capsys, "migrate", str(path), "--to", "latest", "--in-place", "-j", "2")
    assert code == 1 and "left as it was: changed while being migrated" in out
    assert path.read_bytes() == original + lines[0]
    assert _hidden(tmp_path) == []


def test_a_file_replaced_while_migrated_in_place_is_not_overwritten(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.jsonl"
    shutil.copy(SAMPLES, path)
    real = evalreg.batch.migrate_file.read_items
    other = b'{"written": "by another program"}\n'

    def reader(name: str, kind: object = None) -> Iterator[object]:
        yield from real(name, kind)  # type: ignore[arg-type]
        (tmp_path / "new").write_bytes(other)
        os.replace(tmp_path / "new", path)

    monkeypatch.setattr(evalreg.batch.migrate_file, "read_items", reader)
    code, out, _ = run(capsys, "migrate", str(path), "--to", "latest", "--in-place")
    assert code == 1 and "replaced by another program while being migrated" in out
    assert path.read_bytes() == other


def test_concurrent_in_place_runs_never_destroy_an_original(tmp_path: Path) -> None:
    root = tmp_path / "data"
    root.mkdir()
    for index in range(40):
        shutil.copy(OLD_AGGREGATE, root / f"a{index:02d}.json")
        shutil.copy(SAMPLES, root / f"s{index:02d}.jsonl")
    originals = _snapshot(root)
    command = [*EVALREG, "migrate", str(root), "--to", "latest", "--in-place", "--backup", ".bak"]
    runs = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
        for _ in range(3)
    ]
    results = [run.communicate(timeout=120) for run in runs]
    codes = [run.returncode for run in runs]
    for (out, err), code in zip(results, codes, strict=True):
        assert b"Traceback" not in err
        for line in out.decode().splitlines():
            if ": failed: " in line:  # only ever a file that another run held or changed
                assert "busy" in line or "changed" in line, line
        assert code in (0, 1)
    after = _snapshot(root)
    migrated = 0
    for name, data in originals.items():
        backup = after.get(name + ".bak")
        if after[name] != data:
            migrated += 1
            assert backup == data, f"{name}.bak does not hold the original"
        else:
            assert backup is None
    assert migrated == len(originals)  # every file was migrated by one run or another
    assert _hidden(root) == []


# -- 4. backups ------------------------------------------------------------------------------


def test_an_existing_backup_that_differs_is_never_replaced(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = _folder(tmp_path, files=1)
    (root / "a0.json.bak").write_bytes(b"an older backup\n")
    before = _snapshot(root)
    code, out, _ = run(
        capsys, "migrate", str(root), "--to", "latest", "--in-place", "--backup", ".bak"
    )
    assert code == 1
    assert (
        f"{root / 'a0.json'}: failed: 0 migrated, 0 current, 0 failed (left as it was: cannot "
        f"write backup {root / 'a0.json.bak'}: exists and differs; --overwrite-backup replaces it)"
    ) in out.splitlines()
    after = _snapshot(root)
    assert after["a0.json"] == before["a0.json"] and after["a0.json.bak"] == b"an older backup\n"
    assert after["s.jsonl.bak"] == before["s.jsonl"]  # the other files go on
    code, out, _ = run(
        capsys,
        *("migrate", str(root / "a0.json"), "--to", "latest", "--in-place"),
        *("--backup", ".bak", "--overwrite-backup"),
    )
    assert code == 0
    assert (root / "a0.json.bak").read_bytes() == before["a0.json"]


def test_a_backup_is_a_second_name_of_the_original_made_without_overwriting(
    tmp_path: Path,
) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(b"old")
    inode = path.stat().st_ino
    writers.write_atomic(path, b"new", backup=".bak")
    assert (tmp_path / "a.json.bak").stat().st_ino == inode
    with pytest.raises(writers.BackupError) as info:
        writers.write_atomic(path, b"newer", backup=".bak")
    assert info.value.errno == errno.EEXIST and info.value.filename == str(path) + ".bak"
    assert path.read_bytes() == b"new" and (tmp_path / "a.json.bak").read_bytes() == b"old"
    assert sorted(os.listdir(tmp_path)) == ["a.json", "a.json.bak"]


def test_a_backup_left_by_an_interrupted_run_is_kept_and_used(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(b"old")
    os.link(path, tmp_path / "a.json.bak")  # stopped between the backup and the replacement
    writers.write_atomic(path, b"new", backup=".bak")
    assert path.read_bytes() == b"new" and (tmp_path / "a.json.bak").read_bytes() == b"old"


def test_without_hard_links_the_backup_is_a_complete_copy_or_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_links(source: object, target: object, **kwargs: object) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    monkeypatch.setattr(writers, "_unnamed", list(writers._unnamed))  # it learns: undo after
    path = tmp_path / "a.json"
    path.write_bytes(b"old")
    writers.write_atomic(path, b"new", backup=".bak")
    assert (tmp_path / "a.json.bak").read_bytes() == b"old"

    def full(source: object, target: str, **kwargs: object) -> None:
        Path(target).write_bytes(b"o")  # a partial copy, then the disk is full
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(shutil, "copy2", full)
    other = tmp_path / "b.json"
    other.write_bytes(b"old")
    with pytest.raises(writers.BackupError, match="No space left on device"):
        writers.write_atomic(other, b"new", backup=".bak")
    assert other.read_bytes() == b"old"
    assert sorted(os.listdir(tmp_path)) == ["a.json", "a.json.bak", "b.json"]


def test_a_backup_is_removed_when_the_replacement_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fails(source: object, target: object) -> None:
        raise OSError(errno.EIO, "Input/output error")

    path = tmp_path / "a.json"
    path.write_bytes(b"old")
    monkeypatch.setattr(writers.os, "replace", fails)
    with pytest.raises(OSError, match="Input/output error"):
        writers.write_atomic(path, b"new", backup=".bak")
    assert os.listdir(tmp_path) == ["a.json"] and path.read_bytes() == b"old"


# -- 5, 6. symbolic links and line ends ------------------------------------------------------


def test_in_place_migrates_the_target_of_a_symbolic_link_and_keeps_the_link(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "store").mkdir()
    real = tmp_path / "store" / "run.json"
    shutil.copy(OLD_AGGREGATE, real)
    link = tmp_path / "run.json"
    link.symlink_to(Path("store") / "run.json")
    code, _, _ = run(
        capsys, "migrate", str(link), "--to", "latest", "--in-place", "--backup", ".bak"
    )
    assert code == 0
    assert link.is_symlink() and os.readlink(link) == str(Path("store") / "run.json")
    assert json.loads(real.read_text())["schema_version"] == "0.3.0"
    assert (tmp_path / "store" / "run.json.bak").read_bytes() == OLD_AGGREGATE.read_bytes()
    assert sorted(os.listdir(tmp_path)) == ["run.json", "store"]


def test_crlf_files_keep_their_line_ends(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines = SAMPLES.read_bytes().splitlines()
    current = CURRENT_SAMPLES.read_bytes().splitlines()[0] if CURRENT_SAMPLES else lines[0]
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_bytes(b"".join(line + b"\r\n" for line in [lines[0], current, lines[1]]))
    document = tmp_path / "a.json"
    document.write_bytes(OLD_AGGREGATE.read_bytes().replace(b"\n", b"\r\n"))
    code, _, _ = run(capsys, "migrate", str(tmp_path), "--to", "latest", "--in-place")
    assert code == 0
    for path in (jsonl, document):
        data = path.read_bytes()
        assert data.count(b"\n") == data.count(b"\r\n") > 2, path.name
    assert json.loads(document.read_bytes())["schema_version"] == "0.3.0"


def test_lf_files_keep_their_line_ends(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    shutil.copy(SAMPLES, tmp_path / "s.jsonl")
    shutil.copy(OLD_AGGREGATE, tmp_path / "a.json")
    code, _, _ = run(capsys, "migrate", str(tmp_path), "--to", "latest", "--in-place")
    assert code == 0
    assert all(b"\r" not in p.read_bytes() for p in tmp_path.iterdir())


# -- 7. signals ------------------------------------------------------------------------------


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with open(task / "children") as stream:
            found |= {int(p) for p in stream.read().split()}
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stream:
            return stream.read().split(") ")[-1][:1] != "Z"
    except OSError:
        return False


@pytest.fixture(scope="module")
def big_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a JSONL file large enough for a pool of workers, and aggregate files."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from generate import write_jsonl  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    root = tmp_path_factory.mktemp("big")
    write_jsonl(root / "instances.jsonl", 12_000)  # about 32 MB
    for index in range(20):
        shutil.copy(OLD_AGGREGATE, root / f"a{index}.json")
    return root


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs /proc")
@pytest.mark.parametrize(
    "signum", [signal.SIGTERM, pytest.param(signal.SIGHUP, marks=pytest.mark.slow)]
)
def test_a_termination_signal_stops_the_workers_cleanly(
    big_folder: Path, tmp_path: Path, signum: int
) -> None:
    root = tmp_path / "data"
    shutil.copytree(big_folder, root)
    originals = _snapshot(root)
    expected = tmp_path / "expected"
    command = [*EVALREG, "migrate", str(root), "--to", "latest", "--jobs", "2"]
    process = subprocess.Popen(
        [*command, "--in-place", "--backup", ".bak"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    deadline = time.monotonic() + 30
    workers: set[int] = set()
    # Writing has begun: a temporary name, or a backup made just before a replacement (files
    # being written are unnamed until complete where the system allows).
    while time.monotonic() < deadline and not _hidden(root) and not list(root.glob("*.bak")):
        workers |= _children(process.pid)
        time.sleep(0.01)
    workers |= _children(process.pid)
    assert len(workers) >= 2 and process.poll() is None, "the run ended before the signal"
    process.send_signal(signum)
    stopped = time.monotonic()
    _, err = process.communicate(timeout=30)
    while any(_alive(pid) for pid in workers) and time.monotonic() - stopped < 5:
        time.sleep(0.05)
    gone = time.monotonic() - stopped
    assert process.returncode == 128 + signum
    name = signal.Signals(signum).name
    assert err.decode().splitlines() == [
        f"evalreg: stopped by {name}; files being written were left as they were"
    ]
    assert not any(_alive(pid) for pid in workers) and gone < 2.5
    assert _hidden(root) == []
    subprocess.run([*command, "--out", str(expected)], check=True, capture_output=True, cwd=ROOT)
    for name_, data in originals.items():
        now = (root / name_).read_bytes()
        assert now in (data, (expected / name_).read_bytes()), name_
        if now != data:
            assert (root / (name_ + ".bak")).read_bytes() == data
    assert (root / "instances.jsonl").read_bytes() == originals["instances.jsonl"]


# -- 8. temporary files of processes that died -----------------------------------------------


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_temporary_files_of_dead_processes_are_removed_and_reported(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = _folder(tmp_path, files=1)
    dead = _dead_pid()
    stale = [
        root / f".a0.json.evalreg-{dead}-0123456789ab.tmp",
        root / f".s.jsonl.evalreg-{dead}-4000.part",
    ]
    for path in stale:
        path.write_bytes(b"x" * 1000)
    live = root / ".a0.json.evalreg-1-0123456789ab.tmp"  # pid 1 is running
    live.write_bytes(b"")
    other = root / ".notes.tmp"  # not evalreg's
    other.write_bytes(b"")
    code, _, err = run(capsys, "migrate", str(root), "--to", "latest", "--in-place")
    assert code == 0
    for path in stale:
        assert not path.exists()
        assert (
            f"{path}: removed the temporary file of process {dead}, which is no longer running "
            "(1,000 bytes)"
        ) in err.splitlines()
    assert live.exists() and other.exists()


def test_temporary_files_carry_the_pid_of_the_process_writing_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writers, "_unnamed", [False])  # named from the start, as without O_TMPFILE
    path = tmp_path / "a.json"
    with writers.atomic_writer(path) as stream:
        stream.write(b"{}")
        (temp,) = [p for p in os.listdir(tmp_path) if p.startswith(".")]
    match = writers.TEMPORARY.fullmatch(temp)
    assert match is not None and int(match["pid"]) == os.getpid() and match["name"] == "a.json"
    assert writers.leftovers(str(tmp_path)) == []


# -- 9. usage errors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("migrate", "x", "--to"),
        ("migrate", "x", "--bogus"),
        ("migrate", "x"),
        ("migrate", "x", "--to", "latest", "--jobs", "0"),
        ("validate", "x", "--format", "yaml"),
        ("nosuch",),
        ("--registry",),
    ],
)
def test_usage_errors_are_one_line_with_exit_code_2(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...]
) -> None:
    code, out, err = run(capsys, *args)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1
    assert err.startswith("evalreg: error: ")
    command = "evalreg migrate" if args[0] == "migrate" else "evalreg"
    command = "evalreg validate" if args[0] == "validate" else command
    assert err.rstrip().endswith(f"; see {command} --help")


# -- kill -9 at random moments ---------------------------------------------------------------


@pytest.mark.slow
def test_kill_9_at_random_moments_leaves_every_file_original_or_migrated(tmp_path: Path) -> None:
    script = ROOT / "benchmarks" / "reliability_writes.py"
    done = subprocess.run(
        [
            sys.executable,
            str(script),
            "--kills",
            "3",
            "--aggregates",
            "20",
            "--lines",
            "3500",
            "--work",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "PASS"
    assert sum(line.startswith("kill ") and line.endswith("; ok") for line in lines) == 3
