"""The pattern check: every regular expression of a family, tried on inputs made to be slow.

Loading a user's registry directory already refuses manifest and schema patterns that may take
too long to match; this check reports the same for every family, the built-in ones included
(whose patterns loading does not time, to keep start-up fast).
"""

from __future__ import annotations

from collections.abc import Iterator

from evalreg.errors import RegistryError
from evalreg.publish.check.report import Run
from evalreg.registry.patterns import shown, unsafe_reason
from evalreg.registry.rules import Condition, RuleSpec


def _conditions(conditions: tuple[Condition, ...]) -> Iterator[str]:
    for condition in conditions:
        if condition.pattern is not None:
            yield condition.pattern.pattern
        yield from _conditions(condition.conditions)


def _rule_patterns(rule: RuleSpec) -> Iterator[str]:
    if rule.path is not None:
        yield rule.path.pattern
    yield from _conditions((*rule.when, *rule.require))


def check_patterns(run: Run, family: str) -> None:
    """Time every pattern of a family's manifest and schemas (`pattern`)."""
    from evalreg.registry.schemawalk import patterns

    manifest = run.registry.manifest(family)
    found = [m.pattern.pattern for m in manifest.markers if m.pattern is not None]
    found += [p for rule in manifest.rules for p in _rule_patterns(rule)]
    for pattern in dict.fromkeys(found):
        reason = unsafe_reason(pattern)
        if reason is not None:
            run.add("error", "pattern", f"{shown(pattern)}: {reason}", family, None, manifest.path)
    for version in run.registry.versions(family):
        entry = run.registry.entry(family, version)
        try:
            located = patterns(entry.document, str(entry.path), entry.id)
        except RegistryError as err:
            run.add("error", "pattern", err.detail, family, version, err.path)
            continue
        for item in located:
            reason = unsafe_reason(item.pattern)
            if reason is not None:
                run.add(
                    "error",
                    "pattern",
                    f"{item.pointer}: {shown(item.pattern)}: {reason}",
                    family,
                    version,
                    entry.path,
                )
