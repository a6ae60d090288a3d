"""A project's configuration: `evalreg.toml`, or `[tool.evalreg]` in `pyproject.toml`.

It says which files runs over paths read (`include`, `exclude`), which rules validation
applies and at which severity (`[rules]`, with entries per path), and where the baseline of
known findings is (`baseline`). `find_config` looks for it from a folder upwards, as ruff
looks for its own; `load_config` reads a given file. Every command that reads records (and the
library functions they call) takes the resulting `Config`; `Config()` is none at all.

    include = ["*.json", "*_samples.jsonl"]      # file names or paths from this folder
    exclude = ["data/scratch"]                    # a folder takes every file below it
    baseline = "evalreg-baseline.json"

    [rules]
    select = ["eee.*"]                            # default: every rule
    ignore = ["eee.model-path"]
    severity = { "eee.score-bounds" = "warning" }
    per-path-ignores = { "data/helm_*" = ["eee.layout"] }
    per-path-severity = { "data/legacy" = { "eee.*" = "warning" } }
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from evalreg.batch.walk import iter_files
from evalreg.engine.selection import PathRules, Selection, names_none
from evalreg.errors import ConfigError, cut_repr
from evalreg.io import remote
from evalreg.registry.rules import SEVERITIES, Severity

CONFIG_NAMES = ("evalreg.toml", "pyproject.toml")
"""The files looked for in each folder, in this order: the first that configures evalreg wins
(`pyproject.toml` only with a `[tool.evalreg]` table)."""
_TOP_KEYS = ("include", "exclude", "baseline", "rules")
_RULE_KEYS = ("select", "ignore", "severity", "per-path-ignores", "per-path-severity")
_ENTRY = re.compile(r"\*|[a-z0-9][a-z0-9._-]*\*?")


class PathGlobs:
    """Glob patterns for files, relative to a folder, as `include`, `exclude` and per-path
    entries write them.

    A pattern without `/` matches a file's name or the name of any of its folders below the
    root (`*.jsonl`, `scratch`); one with `/` matches the path from the root, or a folder on
    it (`data/legacy` takes every file below). `*` matches any characters, `/` too, as in
    `--include`. A file outside the root, or named by URL, is matched by name patterns only.
    """

    def __init__(self, root: str, patterns: Sequence[str]) -> None:
        self.root = root
        self.patterns = tuple(patterns)
        names = [p for p in patterns if "/" not in p.strip("/")]
        paths = [p.strip("/") for p in patterns if "/" in p.strip("/")]
        self._names = _compiled(names)
        self._paths = _compiled(paths)

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def __call__(self, path: str) -> bool:
        """Return whether a file (as a run names it: relative to the working folder, or
        absolute) is one of the patterns'."""
        if not self.patterns:
            return False
        parts = self.relative(path)
        if self._names is not None and any(self._names.match(p) for p in parts):
            return True
        if self._paths is None or parts[:1] == [".."]:
            return False
        return any(self._paths.match("/".join(parts[:n])) for n in range(1, len(parts) + 1))

    def relative(self, path: str) -> list[str]:
        """Return the parts of a file's path from the root (`..` first: outside it)."""
        if remote.is_url(path):
            return [path.rsplit("/", 1)[-1]]
        full = os.path.abspath(path)
        base = self.root.rstrip(os.sep) + os.sep
        rest = full[len(base) :] if full.startswith(base) else os.path.relpath(full, self.root)
        return [os.path.normcase(p) for p in rest.replace(os.sep, "/").split("/") if p]

    def __reduce__(self) -> tuple[Any, ...]:
        return (PathGlobs, (self.root, self.patterns))


def _compiled(patterns: Sequence[str]) -> re.Pattern[str] | None:
    if not patterns:
        return None
    return re.compile("|".join(f"(?:{fnmatch.translate(os.path.normcase(p))})" for p in patterns))


@dataclass(frozen=True)
class Config:
    """The settings of a project (all empty: no configuration).

    Paths and patterns are relative to `root`, the folder of the file they come from.
    """

    source: str | None = None
    """The file read (None: no file)."""
    root: str = ""
    """The folder patterns and `baseline` are relative to (`""`: the working folder)."""
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    baseline: str | None = None
    """The baseline file (absolute), if the configuration names one."""
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    severity: tuple[tuple[str, Severity], ...] = ()
    per_path_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    per_path_severity: tuple[tuple[str, tuple[tuple[str, Severity], ...]], ...] = ()
    notes: tuple[str, ...] = ()
    """What a reader should know: a `[tool.evalreg]` table set aside for an `evalreg.toml`."""

    @property
    def folder(self) -> str:
        """Return the folder patterns are relative to, absolute."""
        return self.root or os.getcwd()

    def wants(self, path: str) -> bool:
        """Return whether a run reads `path` (a file given or found in a folder)."""
        if not (self.include or self.exclude):
            return True
        folder = self.folder
        if self.include and not PathGlobs(folder, self.include)(path):
            return False
        return not PathGlobs(folder, self.exclude)(path)

    def files(
        self,
        paths: Iterable[str | os.PathLike[str]],
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
    ) -> Iterator[str]:
        """Yield the files a run over `paths` reads: `iter_files`' that this configuration wants.

        Its `include` and `exclude` apply to files named as well as to files found in folders
        (a hook is given files by name).
        """
        files = iter_files(paths, include, exclude)
        if not (self.include or self.exclude):
            yield from files
            return
        folder = self.folder
        included = PathGlobs(folder, self.include) if self.include else None
        excluded = PathGlobs(folder, self.exclude)
        for path in files:
            if (included is None or included(path)) and not excluded(path):
                yield path

    def selection(
        self,
        *,
        enabled: bool = True,
        select: Sequence[str] | None = None,
        ignore: Sequence[str] = (),
        minimum: Severity = "warning",
    ) -> Selection:
        """Return the rules a validate run applies: these settings, then the options given.

        `select` given replaces the configuration's `select` and `ignore` (as ruff's does);
        `ignore` adds to them. Severities and per-path entries always apply.
        """
        chosen: tuple[str, ...] | None = self.select
        ignored: tuple[str, ...] = (*self.ignore, *ignore)
        if select is not None:
            chosen, ignored = tuple(select), tuple(ignore)
        per_path: dict[str, tuple[tuple[str, ...], tuple[tuple[str, Severity], ...]]] = {}
        for pattern, ids in self.per_path_ignores:
            per_path[pattern] = (ids, ())
        for pattern, table in self.per_path_severity:
            per_path[pattern] = (per_path.get(pattern, ((), ()))[0], table)
        folder = self.folder
        paths = tuple(
            PathRules(PathGlobs(folder, (pattern,)), ids, table)
            for pattern, (ids, table) in per_path.items()
        )
        return Selection(enabled, chosen, ignored, self.severity, minimum, paths)

    def check_rules(self, rule_ids: Iterable[str]) -> None:
        """Check that every rule id or prefix named names a rule of the registry.

        Raises:
            ConfigError: one names no rule (a typo would leave a rule on, or check nothing).
        """
        known = sorted(set(rule_ids))
        named: list[tuple[str, str]] = [("rules.select", e) for e in self.select or ()]
        named += [("rules.ignore", e) for e in self.ignore]
        named += [("rules.severity", e) for e, _ in self.severity]
        for pattern, ids in self.per_path_ignores:
            named += [(f"rules.per-path-ignores.{_quoted(pattern)}", e) for e in ids]
        for pattern, table in self.per_path_severity:
            named += [(f"rules.per-path-severity.{_quoted(pattern)}", e) for e, _ in table]
        for key, entry in named:
            if names_none(entry, known):
                raise ConfigError(
                    self.source or "configuration",
                    self._key(key),
                    f"{entry!r} names no rule (known: {', '.join(known)})",
                )

    def _key(self, key: str) -> str:
        return f"tool.evalreg.{key}" if _is_pyproject(self.source) else key


def _quoted(key: str) -> str:
    """Return a key as TOML writes it in a dotted key: bare if it can be, else quoted."""
    if re.fullmatch(r"[A-Za-z0-9_-]+", key):
        return key
    import json  # only for a key TOML must quote

    return json.dumps(key)


def _is_pyproject(path: str | None) -> bool:
    return path is not None and os.path.basename(path) == "pyproject.toml"


# -- reading -----------------------------------------------------------------------------------


def _read_toml(path: Path) -> dict[str, Any]:
    # Imported here: most runs find no configuration file to read.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        with path.open("rb") as stream:
            data: dict[str, Any] = tomllib.load(stream)
            return data
    except OSError as err:
        raise ConfigError(str(path), None, f"cannot read: {err.strerror or err}") from err
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(str(path), None, f"not valid TOML: {err}") from err
    except UnicodeDecodeError as err:
        raise ConfigError(str(path), None, f"not valid UTF-8 (byte {err.start})") from err


def _table(data: Mapping[str, Any]) -> Any:
    """Return a pyproject.toml's `tool.evalreg` value (None: it has none)."""
    tool = data.get("tool")
    return tool.get("evalreg") if isinstance(tool, dict) else None


def load_config(path: str | os.PathLike[str]) -> Config:
    """Read a configuration file: `pyproject.toml`'s `[tool.evalreg]`, or any other TOML
    file's top level (`evalreg.toml`).

    Raises:
        ConfigError: the file cannot be read, is not TOML, or a key or value is not valid.
    """
    file = Path(path)
    data = _read_toml(file)
    prefix = ""
    if file.name == "pyproject.toml":
        table = _table(data)
        if table is None:
            raise ConfigError(str(file), None, "has no [tool.evalreg] table")
        if not isinstance(table, dict):
            raise ConfigError(str(file), "tool.evalreg", "expected a table")
        data, prefix = table, "tool.evalreg."
    return _parse(data, file, prefix)


def find_config(start: str | os.PathLike[str] | None = None) -> Config:
    """Return the configuration of the nearest folder from `start` (default: the working folder)
    upwards that has one, or `Config()` when none has.

    In one folder, `evalreg.toml` wins over `pyproject.toml`, whose `[tool.evalreg]` is then
    set aside (and said so in `notes`); a `pyproject.toml` without that table is passed over.

    Raises:
        ConfigError: the file found cannot be read or is not valid.
    """
    folder = Path(os.path.abspath(start if start is not None else os.getcwd()))
    for here in (folder, *folder.parents):
        own, project = here / CONFIG_NAMES[0], here / CONFIG_NAMES[1]
        if own.is_file():
            config = load_config(own)
            if project.is_file() and _table(_read_toml(project)) is not None:
                note = f"{project}: [tool.evalreg] is not read: {own} beside it is used instead"
                config = _with_note(config, note)
            return config
        if project.is_file() and _table(_read_toml(project)) is not None:
            return load_config(project)
    return Config()


def _with_note(config: Config, note: str) -> Config:
    return replace(config, notes=(*config.notes, note))


class _Reader:
    """Checks the values of one configuration file, naming the file and key of a bad one."""

    def __init__(self, file: Path, prefix: str) -> None:
        self.file, self.prefix = file, prefix

    def fail(self, key: str, message: str) -> ConfigError:
        return ConfigError(str(self.file), self.prefix + key, message)

    def keys(self, table: Mapping[str, Any], known: Sequence[str], where: str = "") -> None:
        for key in table:
            if key not in known:
                place = f" in [{self.prefix}{where}]" if where else ""
                raise ConfigError(
                    str(self.file),
                    None,
                    f"unknown key {key!r}{place} (known: {', '.join(known)})",
                )

    def strings(self, value: Any, key: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.fail(key, f"expected a list of non-empty strings, not {cut_repr(value, 60)}")
        return tuple(value)

    def rules(self, value: Any, key: str) -> tuple[str, ...]:
        entries = self.strings(value, key)
        for entry in entries:
            if not _ENTRY.fullmatch(entry):
                raise self.fail(key, f"{entry!r} is not a rule id or a prefix ending in *")
        return entries

    def severities(self, value: Any, key: str) -> tuple[tuple[str, Severity], ...]:
        if not isinstance(value, dict):
            raise self.fail(key, f"expected a table of rule = severity, not {cut_repr(value, 60)}")
        self.rules(list(value), key)
        found: list[tuple[str, Severity]] = []
        for entry, severity in value.items():
            if severity not in SEVERITIES:
                raise self.fail(
                    f"{key}.{_quoted(entry)}",
                    f"{cut_repr(severity, 60)} is not a severity (error, warning)",
                )
            found.append((entry, severity))
        return tuple(found)

    def per_path(self, value: Any, key: str) -> Mapping[str, Any]:
        if not isinstance(value, dict) or not all(isinstance(k, str) and k for k in value):
            raise self.fail(
                key, f"expected a table of path pattern = ..., not {cut_repr(value, 60)}"
            )
        return value


def _parse(data: Mapping[str, Any], file: Path, prefix: str) -> Config:
    read = _Reader(file, prefix)
    read.keys(data, _TOP_KEYS)
    include = read.strings(data["include"], "include") if "include" in data else ()
    exclude = read.strings(data["exclude"], "exclude") if "exclude" in data else ()
    baseline = data.get("baseline")
    if baseline is not None and (not isinstance(baseline, str) or not baseline):
        raise read.fail("baseline", f"expected a file name, not {cut_repr(baseline, 60)}")
    rules = data.get("rules", {})
    if not isinstance(rules, dict):
        raise read.fail("rules", f"expected a table, not {cut_repr(rules, 60)}")
    read.keys(rules, _RULE_KEYS, "rules")
    select = read.rules(rules["select"], "rules.select") if "select" in rules else None
    ignore = read.rules(rules["ignore"], "rules.ignore") if "ignore" in rules else ()
    severity = read.severities(rules.get("severity", {}), "rules.severity")
    ignores = read.per_path(rules.get("per-path-ignores", {}), "rules.per-path-ignores")
    severities = read.per_path(rules.get("per-path-severity", {}), "rules.per-path-severity")
    root = str(file.parent.resolve())
    return Config(
        source=str(file),
        root=root,
        include=include,
        exclude=exclude,
        baseline=None if baseline is None else os.path.join(root, baseline),
        select=select,
        ignore=ignore,
        severity=severity,
        per_path_ignores=tuple(
            (p, read.rules(ids, f"rules.per-path-ignores.{_quoted(p)}"))
            for p, ids in ignores.items()
        ),
        per_path_severity=tuple(
            (p, read.severities(table, f"rules.per-path-severity.{_quoted(p)}"))
            for p, table in severities.items()
        ),
    )
