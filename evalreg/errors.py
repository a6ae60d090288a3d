"""Errors raised by evalreg.

Every error derives from `EvalregError`, carries the structured fields that locate the problem,
and has a one-line message that names the place and, where there is one, the fix.
"""

from __future__ import annotations

from collections.abc import Iterable

MAX_VERSION_LENGTH = 100
"""The longest version string read (in records, options and registries), in characters; a
longer one is an invalid version."""


def shown_version(version: str) -> str:
    """Return a version string quoted for a message, cut short beyond `MAX_VERSION_LENGTH`."""
    if len(version) <= MAX_VERSION_LENGTH:
        return repr(version)
    return (
        f"{version[:20]!r}... ({len(version):,} characters, more than the "
        f"{MAX_VERSION_LENGTH} a version may have)"
    )


def cut_repr(value: object, limit: int) -> str:
    """Return `repr(value)` for a one-line message, cut to `limit` characters if longer (a
    string's still ends in its quote)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[: limit - 3]}...'" if isinstance(value, str) else f"{text[: limit - 3]}..."


def one_line(text: str, limit: int) -> str:
    """Return `text` (an error's message, say) on one line, at most `limit` characters."""
    return " ".join(text.split())[:limit]


def version_not_known(version: str, known: Iterable[str], family: str | None = None) -> str:
    """Return the message of a stated version that its family (if named) does not know."""
    of = f" of {family}" if family else ""
    return f"version {shown_version(version)}{of} is not known (known: {_known(known)})"


class EvalregError(Exception):
    """Base class of every error evalreg raises on purpose."""


def _known(values: Iterable[str]) -> str:
    listed = ", ".join(values)
    return listed or "none"


class RegistryError(EvalregError):
    """A registry directory is malformed: a manifest, schema or step cannot be loaded."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.detail = message
        super().__init__(f"{path}: {message}")


class UnknownFamilyError(EvalregError, LookupError):
    """A family name is not in the registry."""

    def __init__(self, family: str, known: Iterable[str]) -> None:
        self.family = family
        self.known = tuple(known)
        super().__init__(f"unknown family {family!r} (known: {_known(self.known)})")


class UnknownVersionError(EvalregError, LookupError):
    """A version is not known for a family."""

    def __init__(self, family: str, version: str, known: Iterable[str]) -> None:
        self.family = family
        self.version = version
        self.known = tuple(known)
        super().__init__(
            f"unknown version {shown_version(version)} of {family} (known: {_known(self.known)})"
        )


class InvalidVersionError(EvalregError, ValueError):
    """A version string cannot be parsed."""

    def __init__(self, version: str, where: str = "") -> None:
        self.version = version
        self.where = where
        prefix = f"{where}: " if where else ""
        super().__init__(
            f"{prefix}invalid version {shown_version(version)}: expected dotted numbers such as "
            "0.2.0 or 2"
        )


class RemoteRefError(EvalregError):
    """A schema `$ref` points outside the registry; evalreg never fetches over the network."""

    def __init__(self, ref: str, schema: str = "") -> None:
        self.ref = ref
        self.schema = schema
        where = f"{schema}: " if schema else ""
        super().__init__(
            f"{where}$ref {ref!r} is not in the registry and evalreg never fetches schemas; "
            "add the referenced schema to a registry directory"
        )


class ReadError(EvalregError):
    """A file or a line cannot be read as a record."""

    def __init__(self, path: str, message: str, line: int | None = None) -> None:
        self.path = path
        self.line = line
        self.detail = message
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")


class NoMigrationPathError(EvalregError):
    """No chain of migration steps leads from one version to another."""

    def __init__(self, family: str, source: str, target: str, reason: str = "") -> None:
        self.family = family
        self.source = source
        self.target = target
        extra = f": {reason}" if reason else ""
        super().__init__(f"no migration path for {family} from {source} to {target}{extra}")


class DataLossError(EvalregError):
    """A migration step cannot carry a value to the target version."""

    def __init__(self, pointer: str, reason: str) -> None:
        self.pointer = pointer
        self.reason = reason
        super().__init__(
            f"{pointer or '/'}: {reason} (pass --allow-loss / allow_loss=True to drop it)"
        )


class UnfinishedStepError(EvalregError):
    """A generated step met a record its `TODO` concerns: a decision the step does not make yet."""

    def __init__(self, todo: str, pointer: str) -> None:
        self.todo = todo
        self.pointer = pointer
        super().__init__(
            f"{pointer or '/'}: {todo} (unfinished generated step: finish this TODO, then "
            "remove it from TODOS)"
        )


class MigrationError(EvalregError):
    """A record could not be migrated: a step failed or the result is invalid."""

    def __init__(self, family: str, step: str, message: str) -> None:
        self.family = family
        self.step = step
        self.detail = message
        super().__init__(f"{family} {step}: {message}")


class ParameterError(EvalregError, ValueError):
    """A migration parameter is unknown or malformed."""


class DetectionError(EvalregError):
    """A record's family or version cannot be decided."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


class IntegrityError(EvalregError):
    """A released schema no longer matches the hash recorded in the registry's lock file."""

    def __init__(self, path: str, family: str, version: str, message: str) -> None:
        self.path = path
        self.family = family
        self.version = version
        super().__init__(f"{path}: {family} {version}: {message}")


class SchemaDiffError(EvalregError, ValueError):
    """Two schemas cannot be compared: an unknown policy, or a `$ref` that cannot resolve."""


class RequirementError(EvalregError, ValueError):
    """A required version (`--require VERSION`) is not a version of any family."""

    def __init__(self, version: str) -> None:
        self.version = version
        super().__init__(f"no family has version {version!r}; name the family as FAMILY@VERSION")


class PublishError(EvalregError):
    """The site cannot be published: its folder holds other files, or a page cannot be made."""

    def __init__(self, message: str, path: str = "") -> None:
        self.path = path
        super().__init__(f"{path}: {message}" if path else message)


_FEATURES = {
    "arrow": "tables (Arrow, Parquet, `evalreg export`)",
    "dask.dataframe": "Dask dataframes",
}
"""Features other than URL protocols that an extra installs, as a message names them."""


class MissingExtraError(EvalregError, ImportError):
    """A URL's protocol, or a feature, needs a package that an extra of evalreg installs."""

    def __init__(self, what: str, extra: str | None) -> None:
        self.what = what
        self.extra = extra
        if extra is None:
            message = f"no installed package reads {what}:// URLs"
        elif what == "dask":
            message = f"running on a Dask cluster needs the {extra} extra"
        elif what in _FEATURES:
            message = f"{_FEATURES[what]} need the {extra} extra"
        else:
            message = f"reading {what}:// URLs needs the {extra} extra"
        fix = f": pip install 'evalreg[{extra}]'" if extra else ""
        super().__init__(message + fix)


class ClusterError(EvalregError):
    """A Dask scheduler cannot be reached, or a local cluster cannot start."""

    def __init__(self, address: str, reason: str) -> None:
        self.address = address
        self.reason = reason
        super().__init__(
            f"cannot use the Dask scheduler {address!r}: {reason} "
            "(give its address as tcp://HOST:PORT, or `local`)"
        )


class ConfigError(EvalregError, ValueError):
    """A configuration file (`evalreg.toml`, `[tool.evalreg]`) cannot be read or is not valid."""

    def __init__(self, path: str, key: str | None, message: str) -> None:
        self.path = path
        self.key = key
        self.detail = message
        super().__init__(f"{path}: {key}: {message}" if key else f"{path}: {message}")


class TableError(EvalregError, ValueError):
    """A schema cannot be mapped to a table, or a table's rows cannot be turned into records.

    Raised when the mapping is made (an `explode` pointer that is no array column, a column
    name evalreg reserves), never part way through the rows.
    """

    def __init__(
        self, message: str, family: str = "", version: str = "", pointer: str = ""
    ) -> None:
        self.family = family
        self.version = version
        self.pointer = pointer
        where = f"{family} {version}".strip()
        at = f" {pointer}" if pointer else ""
        super().__init__(f"{where}{at}: {message}" if where or at else message)


class OutputOverlapError(EvalregError):
    """An output folder is, contains or lies inside an input folder (or would replace an input)."""

    def __init__(self, output: str, source: str, how: str) -> None:
        self.output = output
        self.source = source
        self.how = how
        super().__init__(
            f"the output folder {output} {how} {source}: migrated files would be written over "
            "or among the files being read; choose an output folder outside the input"
        )


class WorkerError(EvalregError):
    """The worker processes of a run cannot do its work (they die as they start, say)."""


class NoWorkersError(ClusterError):
    """A Dask scheduler has no worker to do the work, within the time waited for one."""

    exit_code = 1

    def __init__(self, address: str, waited: float) -> None:
        self.address = address
        self.reason = f"no worker joined it within {waited:.0f} s"
        EvalregError.__init__(
            self, f"the Dask scheduler {address!r} has no workers: {self.reason}; start some"
        )


class ClusterLostError(ClusterError):
    """The Dask scheduler of a run went away before the run was done."""

    exit_code = 1

    def __init__(self, address: str, reason: str, unfinished: int) -> None:
        self.address = address
        self.reason = reason
        self.unfinished = unfinished
        EvalregError.__init__(
            self,
            f"lost the Dask scheduler {address!r} ({reason}): the run stopped; the files "
            f"reported above are done, the {unfinished:,} being worked on and every file after "
            "them are not",
        )
