"""The rule checks: a family's rules load, and each applies to at least one of its versions."""

from __future__ import annotations

from evalreg.errors import RegistryError
from evalreg.publish.check.report import Run


def check_rules(run: Run, family: str) -> None:
    """Load a family's declared and Python rules (`rules`); warn of rules that apply nowhere."""
    from evalreg.engine.rules import family_rules

    try:
        rules = family_rules(run.registry, family)
    except RegistryError as err:
        run.add("error", "rules", err.detail, family, None, err.path)
        return
    versions = run.registry.versions(family)
    for rule in rules:
        if not any(version in rule.versions for version in versions):
            run.add(
                "warning",
                "rules",
                f"rule {rule.id} applies to no version of the family ({rule.versions})",
                family,
                None,
                rule.source,
            )
