"""Checking a registry end to end before it ships."""

from evalreg.publish.check.compose import (
    BumpLevel,
    CheckReport,
    Finding,
    GenerationError,
    Severity,
    bump_level,
    check_directories,
    check_registry,
    record_strategy,
)

__all__ = [
    "BumpLevel",
    "CheckReport",
    "Finding",
    "GenerationError",
    "Severity",
    "bump_level",
    "check_directories",
    "check_registry",
    "record_strategy",
]
