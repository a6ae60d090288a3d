"""Fingerprints whose `any` is a list of lists: each group needs one of its pointers."""

from __future__ import annotations

import pytest

from evalreg.errors import RegistryError
from evalreg.registry.manifest import Fingerprint, find, parse_manifest

BASE = {"name": "x.y", "title": "X", "kind": "json"}


def _structure(any_: object) -> Fingerprint:
    return parse_manifest(
        {**BASE, "structure": {"any": any_, "forbidden": ["/z"]}}, "m.yaml"
    ).structure


def test_each_group_needs_one_of_its_pointers() -> None:
    fingerprint = _structure([["/a", "/b"], ["/c", "/items/*/d"]])
    assert (fingerprint.any, fingerprint.any_groups) == (("/a", "/b"), (("/c", "/items/*/d"),))
    assert fingerprint.fits({"b": 1, "items": [{}, {"d": 0}]})
    assert fingerprint.fits({"a": 1, "c": 2})
    assert not fingerprint.fits({"a": 1, "b": 2})  # nothing of the second group
    assert not fingerprint.fits({"c": 1, "items": [{"d": 0}]})  # nothing of the first
    assert not fingerprint.fits({"a": 1, "c": 2, "z": 3})  # forbidden
    assert fingerprint.mismatches({"a": 1}) == ["none of /c, /items/*/d"]
    assert fingerprint.describe() == "one of /a, /b, one of /c, /items/*/d, no /z"
    assert fingerprint.explain({"b": 1, "items": [{"d": 0}]}) == "/b, /items/0/d, none of /z"


def test_a_flat_list_is_one_group_as_before() -> None:
    fingerprint = _structure(["/a", "/b"])
    assert (fingerprint.any, fingerprint.any_groups) == (("/a", "/b"), ())
    assert fingerprint.fits({"b": 1}) and not fingerprint.fits({"c": 1})
    assert fingerprint.mismatches({}) == ["none of /a, /b"]


@pytest.mark.parametrize(
    ("any_", "message"),
    [
        ([["/a"], "/b"], "must be a list of strings"),
        ([["/a"], ["b"]], "must start with '/'"),
        ([["/a"], [3]], "must be a list of strings"),
    ],
)
def test_malformed_groups_are_refused(any_: object, message: str) -> None:
    with pytest.raises(RegistryError, match=message):
        _structure(any_)


@pytest.mark.parametrize(
    "record",
    [
        {"items": [{"d": 0}, 3, ["x"], {"e": 1}]},
        {"items": [3, ["d"], {"e": {"d": 1}}]},
        {"items": [[{"d": 1}], {"d": None}]},
        {"items": []},
        {"items": {"d": 1}},
    ],
)
def test_a_key_under_every_item_is_found_as_find_finds_it(record: dict) -> None:
    for pointer in ("/items/*/d", "/items/*/0", "/items/*/*", "/items/*/e/d"):
        fingerprint = Fingerprint(any=(pointer,))
        assert fingerprint.fits(record) == bool(find(record, pointer)), pointer
