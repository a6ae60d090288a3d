"""evalreg: the schema registry and migration framework for LLM-evaluation data.

Detect the family and version of evaluation records, validate them, migrate them along chains of
small steps, diff schema versions, and publish the schemas.
"""

from evalreg.detect import Candidate, Detection, Evidence
from evalreg.errors import (
    DataLossError,
    EvalregError,
    IntegrityError,
    InvalidVersionError,
    MigrationError,
    NoMigrationPathError,
    ParameterError,
    ReadError,
    RegistryError,
    RemoteRefError,
    UnknownFamilyError,
    UnknownVersionError,
)
from evalreg.loader import default_registry, load
from evalreg.manifest import FamilyManifest
from evalreg.migrate import MigrationResult, Note, Param, Step, StepContext
from evalreg.registry import Registry, load_registry
from evalreg.validate import Issue

__version__ = "0.1.0"

__all__ = [
    "Candidate",
    "DataLossError",
    "Detection",
    "EvalregError",
    "Evidence",
    "FamilyManifest",
    "IntegrityError",
    "InvalidVersionError",
    "Issue",
    "MigrationError",
    "MigrationResult",
    "NoMigrationPathError",
    "Note",
    "Param",
    "ParameterError",
    "ReadError",
    "Registry",
    "RegistryError",
    "RemoteRefError",
    "Step",
    "StepContext",
    "UnknownFamilyError",
    "UnknownVersionError",
    "__version__",
    "default_registry",
    "load",
    "load_registry",
]
