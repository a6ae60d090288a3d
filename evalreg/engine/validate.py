"""Validation: every problem of a record against its schema, each located by a JSON pointer.

Two validators back each schema: a compiled `jsonschema-rs` validator answers "is it valid?"
quickly, and the reference `jsonschema` implementation explains invalid records (with
`best_match` first). Where the two disagree, the reference implementation wins.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import jsonschema_rs

from evalreg.errors import RemoteRefError
from evalreg.io.pointer import to_pointer
from evalreg.registry.versions import match_version

if TYPE_CHECKING:
    import jsonschema.exceptions
    import jsonschema.protocols

    from evalreg.engine.detect import Detection
    from evalreg.registry.core import Registry, SchemaEntry

_MAX_VALUE_TEXT = 60


@dataclass(frozen=True)
class Issue:
    """One problem of a record: where it is, which rule it breaks, and what is wrong."""

    pointer: str
    """JSON pointer of the offending value in the record (`""` is the whole record)."""
    message: str
    keyword: str
    """The schema keyword that failed (`required`, `type`, ...), or `detect` / `version`."""
    schema_path: str = ""
    """JSON pointer of the failing keyword in the schema."""

    def __str__(self) -> str:
        return f"{self.pointer or '/'}: {self.message}"


def _short(value: Any) -> str:
    if isinstance(value, dict):
        return f"object with {len(value)} keys" if value else "{}"
    if isinstance(value, list):
        return f"array of {len(value)} items" if value else "[]"
    text = repr(value)
    return text if len(text) <= _MAX_VALUE_TEXT else text[: _MAX_VALUE_TEXT - 3] + "..."


def _message(error: jsonschema.exceptions.ValidationError) -> str:
    message = str(error.message)
    shown = repr(error.instance)
    if len(shown) > _MAX_VALUE_TEXT and message.startswith(shown):
        message = _short(error.instance) + message[len(shown) :]
    if len(message) > 300:
        message = message[:297] + "..."
    return message


def _to_issue(error: jsonschema.exceptions.ValidationError) -> Issue:
    return Issue(
        pointer=to_pointer(error.absolute_path),
        message=_message(error),
        keyword=str(error.validator),
        schema_path=to_pointer(error.absolute_schema_path),
    )


def _rs_registry(registry: Registry) -> Any:
    """Return one jsonschema-rs registry of every schema, or None if a `$ref` cannot resolve."""
    if "_rs_registry" not in registry.__dict__:
        try:
            built = jsonschema_rs.Registry([(e.id, dict(e.document)) for e in registry.entries()])
        except ValueError:
            built = None  # some schema refers outside the registry: compile each one alone
        registry.__dict__["_rs_registry"] = built
    return registry.__dict__["_rs_registry"]


class Validator:
    """The compiled validators of one schema version."""

    def __init__(self, registry: Registry, entry: SchemaEntry) -> None:
        self.family = entry.family
        self.version = entry.version
        self._registry = registry
        self._entry = entry
        self._reference: jsonschema.protocols.Validator | None = None
        shared = _rs_registry(registry)
        try:
            self._fast: Any = jsonschema_rs.validator_for(
                dict(entry.document),
                offline=True,
                validate_formats=False,
                **({"registry": shared} if shared is not None else {}),
            )
        except ValueError as err:
            # A `$ref` that leads outside the registry: name it precisely.
            registry.check_refs(entry.family, entry.version)
            raise RemoteRefError(str(err).splitlines()[0], str(entry.path)) from err

    @property
    def reference(self) -> jsonschema.protocols.Validator:
        """Return the reference `jsonschema` validator (built on first use)."""
        if self._reference is None:
            from jsonschema.validators import validator_for

            self._registry.check_refs(self.family, self.version)
            cls = validator_for(self._entry.document)
            self._reference = cls(
                self._entry.document, registry=self._registry.referencing_registry()
            )
        return self._reference

    def is_valid(self, record: Any) -> bool:
        """Return whether `record` is valid."""
        try:
            if self._fast.is_valid(record):
                return True
        except (ValueError, TypeError, OverflowError):
            pass  # a value jsonschema-rs cannot take (NaN, a huge integer): ask the reference
        return bool(self.reference.is_valid(record))

    def iter_issues(self, record: Any) -> Iterator[Issue]:
        """Yield every problem of `record`, the most relevant first."""
        from jsonschema.exceptions import best_match, relevance

        errors = sorted(self.reference.iter_errors(record), key=lambda e: list(e.absolute_path))
        if not errors:
            return
        best = best_match(errors, key=relevance)
        yield _to_issue(best)
        for error in errors:
            if error is not best:
                yield _to_issue(error)

    def issues(self, record: Any) -> list[Issue]:
        """Return every problem of `record` (empty when valid)."""
        if self.is_valid(record):
            return []
        return list(self.iter_issues(record))


def undecided_issues(registry: Registry, detection: Detection) -> list[Issue]:
    """Return the one issue of a record whose detection decided no family and version."""
    if detection.status == "unknown-version":
        pointer = ""
        if detection.family is not None:
            manifest = registry.manifest(detection.family)
            pointer = manifest.markers[0].pointer if manifest.markers else ""
        return [Issue(pointer, detection.summary(), "version")]
    return [Issue("", detection.summary(), "detect")]


def validate_record(
    registry: Registry, record: Any, family: str | None = None, version: str | None = None
) -> list[Issue]:
    """Return every problem of `record`; detect its family and version where not given."""
    if family is None:
        detection = registry.detect(record)
        if not detection.ok:
            return undecided_issues(registry, detection)
        family, version = detection.family, detection.version
        assert family is not None
    elif version is None:
        found = registry.manifest(family).read_version(record)
        if found is not None and found[2] is not None:
            version = match_version(found[2], registry.versions(family))
            if version is None:
                known = ", ".join(registry.versions(family))
                message = f"version {found[2]!r} of {family} is not known (known: {known})"
                return [Issue(found[0].pointer, message, "version")]
        else:
            detection = registry.detect(record)
            if detection.ok and detection.family == family:
                version = detection.version
            else:
                known = ", ".join(registry.versions(family))
                return [
                    Issue(
                        "",
                        f"cannot tell which version of {family} this is; pass --version "
                        f"(known: {known})",
                        "version",
                    )
                ]
    return registry.validator(family, version).issues(record)
