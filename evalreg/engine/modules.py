"""Loading the Python modules of a registry directory: migration steps and rules.

They are user code: each is loaded from its file under a name of its own, and any failure to
load is a `RegistryError` naming the file.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from evalreg.errors import RegistryError, one_line


def load_module(path: Path, namespace: str, family: str) -> ModuleType:
    """Load a registry directory's Python module from its file.

    Raises:
        RegistryError: the file cannot be loaded, or running it fails.
    """
    name = f"{namespace}.{family}.{path.stem}".replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise RegistryError(str(path), "cannot load the module")
    module = importlib.util.module_from_spec(spec)
    # Registered under its name while it runs, as an import would: dataclasses look it up.
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as err:  # a user's module may fail in any way; name the file
        del sys.modules[name]
        detail = one_line(repr(err), 300)
        raise RegistryError(str(path), f"the module failed to load: {detail}") from err
    return module


def fails_alone(err: BaseException) -> bool:
    """Return whether an exception that user code raised is that code's own failure.

    Such a failure is reported as the failure of the record (or file) it was running on, and the
    run goes on: any `Exception`, `sys.exit()` (a plain `SystemExit`) and other `BaseException`s
    a step or rule may raise. Ctrl-C (`KeyboardInterrupt`), a generator being closed, and the
    run's own stop on a signal (`SystemExit` subclasses, such as `signals.Terminated`) keep their
    meaning: they stop the run.
    """
    if isinstance(err, Exception):
        return True
    if isinstance(err, SystemExit):
        return type(err) is SystemExit
    return not isinstance(err, (KeyboardInterrupt, GeneratorExit))
