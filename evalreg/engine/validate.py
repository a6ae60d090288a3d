"""Validating a record: detect its family and version where they are not given, then check it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalreg.engine.detect import Detection, detect
from evalreg.engine.validators import Issue, validator
from evalreg.errors import version_not_known
from evalreg.registry.versions import match_version

if TYPE_CHECKING:
    from evalreg.registry.core import BaseRegistry


def undecided_issues(registry: BaseRegistry, detection: Detection) -> list[Issue]:
    """Return the one issue of a record whose detection decided no family and version."""
    if detection.status == "unknown-version":
        pointer = ""
        if detection.family is not None:
            manifest = registry.manifest(detection.family)
            pointer = manifest.markers[0].pointer if manifest.markers else ""
        return [Issue(pointer, detection.summary(), "version")]
    return [Issue("", detection.summary(), "detect")]


def validate_record(
    registry: BaseRegistry, record: Any, family: str | None = None, version: str | None = None
) -> list[Issue]:
    """Return every problem of `record`; detect its family and version where not given."""
    if family is None:
        detection = detect(registry, record)
        if not detection.ok:
            return undecided_issues(registry, detection)
        family, version = detection.family, detection.version
        assert family is not None
    elif version is None:
        found = registry.manifest(family).read_version(record)
        if found is not None and found[2] is not None:
            version = match_version(found[2], registry.versions(family))
            if version is None:
                message = version_not_known(found[2], registry.versions(family), family)
                return [Issue(found[0].pointer, message, "version")]
        else:
            detection = detect(registry, record)
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
    return validator(registry, family, version).issues(record)
