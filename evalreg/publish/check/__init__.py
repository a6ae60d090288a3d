"""Checking a registry end to end before it ships."""

from evalreg.publish.check.compose import (
    GenerationError,
    check_directories,
    check_registry,
    record_strategy,
)
from evalreg.publish.check.history import BumpLevel, bump_level
from evalreg.publish.check.report import CheckReport, Finding, Severity

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
