"""The pattern check: every regular expression of a family, compiled as loading compiles them.

Loading a registry directory refuses manifest patterns RE2 cannot compile, and the schema
patterns of every directory but the built-in one (whose schemas loading does not walk, to keep
start-up fast). This check reports the same for every family, the built-in ones included.
"""

from __future__ import annotations

from evalreg.errors import RegistryError
from evalreg.publish.check.report import Run
from evalreg.registry.patterns import refusal, shown


def check_patterns(run: Run, family: str) -> None:
    """Report every pattern of a family's schemas (`pattern`, `patternProperties`) RE2 refuses.

    A manifest's own patterns need no check here: its family would not have loaded.
    """
    from evalreg.registry.schemawalk import patterns

    for version in run.registry.versions(family):
        entry = run.registry.entry(family, version)
        try:
            located = patterns(entry.document, str(entry.path), entry.id)
        except RegistryError as err:
            run.add("error", "pattern", err.detail, family, version, err.path)
            continue
        for item in located:
            reason = refusal(item.pattern)
            if reason is not None:
                run.add(
                    "error",
                    "pattern",
                    f"{item.pointer}: {shown(item.pattern)}: {reason}",
                    family,
                    version,
                    entry.path,
                )
