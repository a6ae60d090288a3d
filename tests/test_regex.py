"""Registry patterns on RE2: what they mean, and the built-in rules written for it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evalreg.engine.modules import load_module
from evalreg.regex import PatternRefused, compile_pattern, refusal, search

UUID = "0b7c6a8e-1d2f-4a3b-9c4d-5e6f7a8b9c0d"
# The layout rule as it was once written for Python's `re`, with lookahead: the oracle the
# Python rule of each Every Eval Ever family must agree with.
_PART = (
    r"(?!data/)(?!(?i:con|prn|aux|nul|com[1-9]|lpt[1-9])(?:\.[^/]*)?/)"
    r'[^/<>:"|?*\x00-\x1f]*[^/<>:"|?*\x00-\x1f. ]'
)
LOOKAHEAD_LAYOUT = (
    rf"(?:^|/)data/(?P<collection>{_PART})/(?P<developer>{_PART})/(?P<model>{_PART})/"
    r"(?P<uuid>[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})\.json$"
)
PATHS = [
    f"data/bench/meta/llama/{UUID}.json",
    f"store/data/bench/meta/llama/{UUID}.json",
    f"data/data/meta/llama/{UUID}.json",
    f"data/bench/data/llama/{UUID}.json",
    f"data/bench/meta/data/{UUID}.json",
    f"data/Data/meta/llama/{UUID}.json",
    f"data/data.v2/meta/llama/{UUID}.json",
    f"data/bench/CON/llama/{UUID}.json",
    f"data/bench/con.txt/llama/{UUID}.json",
    f"data/bench/meta/Lpt1/{UUID}.json",
    f"data/bench/meta/com0/{UUID}.json",
    f"data/bench/meta/console/{UUID}.json",
    f"data/aux.tar.gz/meta/llama/{UUID}.json",
    f"data/bench/meta/llama./{UUID}.json",
    f"data/bench/me ta/llama /{UUID}.json",
    f"data/be:nch/meta/llama/{UUID}.json",
    f"data/bench/meta/llama/{UUID.upper()}.json",
    f"data/bench/meta/{UUID}.json",
    f"data/bench/meta/llama/extra/{UUID}.json",
    f"data/data/data/bench/meta/llama/{UUID}.json",
    f"data/x/data/bench/meta/llama/{UUID}.json",
    f"data/bench/nul/data/meta/llama/{UUID}.json",
    f"data/bench/meta/llama/{UUID}.jsonl",
]


ROOT = Path(__file__).resolve().parents[1]


def _layout_findings(family: str, path: str) -> list[str]:
    """Return the messages of a family's `eee.layout` rule for a file at `path`."""
    module = load_module(ROOT / "rules" / family / "layout.py", "evalreg_test_rules", family)
    found: list[str] = []

    class Context:
        def __init__(self) -> None:
            self.path = path

        def report(self, pointer: str, message: str) -> None:
            found.append(message)

    module.check({}, Context())
    return found


@pytest.mark.parametrize("path", PATHS)
def test_the_layout_rule_agrees_with_its_lookahead_form(path: str) -> None:
    expected = re.search(LOOKAHEAD_LAYOUT, path) is not None
    assert (not _layout_findings("eee.aggregate", path)) == expected
    samples = path.replace(".json", "_samples.jsonl") if path.endswith(".json") else path
    assert (not _layout_findings("eee.instance", samples)) == expected


def test_a_reserved_folder_name_is_reported() -> None:
    [message] = _layout_findings("eee.aggregate", f"data/b/CON.txt/m/{UUID}.json")
    assert "'CON.txt'" in message
    [message] = _layout_findings("eee.aggregate", f"data/b/m/{UUID}.json")
    assert "data/<collection>/<developer>/<model>/<uuid4>.json" in message


@pytest.mark.parametrize(
    ("pattern", "text", "found"),
    [
        (r"^\d+$", "\u0663", False),  # ASCII digits only, as in ECMA-262
        (r"^\w+$", "caf\u00e9", False),
        (r"^.+$", "caf\u00e9", True),
        (r"(?i)^CAF\u00c9$", "caf\u00e9", True),
        (r"^a$", "a\n", False),  # `$` is the very end of the text
        (r"^a\z", "a", True),
        (r"^\x{e9}$", "\u00e9", True),
        (r"^\u00e9$", "\u00e9", True),
        (r"^\p{Greek}+$", "\u03b1\u03b2", True),
        (r"^(?P<name>a)(?i:B)$", "ab", True),
    ],
)
def test_what_a_pattern_means(pattern: str, text: str, found: bool) -> None:
    assert search(pattern, text) is found


def test_a_lone_surrogate_is_matched_not_raised() -> None:
    assert search("^a", "a\ud800")
    assert not search("^\\w+$", "\ud800")
    assert refusal("\ud800") == "it is not valid Unicode text (it holds a lone surrogate)"


def test_refused_patterns_raise_with_the_reason() -> None:
    with pytest.raises(PatternRefused, match=r"it has a lookahead \(\?=\.\.\.\)"):
        compile_pattern("(?=a)")
    with pytest.raises(PatternRefused, match="longer than 1000 characters"):
        search("a" * 1001, "a")


def test_re2_never_writes_to_standard_error(capfd: pytest.CaptureFixture[str]) -> None:
    assert refusal(r"(a)\1x") is not None
    assert capfd.readouterr().err == ""


def test_a_pattern_that_spells_out_to_a_huge_program_is_refused() -> None:
    why = refusal(r"^[\p{L}\p{N} ]{1,100}$")  # 22 characters, some 13 MB once compiled
    assert why is not None
    assert re.fullmatch(
        r"it compiles to [\d,]+ RE2 instructions, more than 20,000 \(a counted repetition is "
        r"spelled out: use a smaller count, or maxLength in a schema\)",
        why,
    )
    assert refusal(r"^.{0,1000}$") is None


def test_many_patterns_take_bounded_memory() -> None:
    """Compiled patterns are kept in a bounded cache, not for as long as their registry."""
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for index in range(600):  # each some 250 kB compiled: 150 MB if all were kept
        letter = "abcdefghijklmnopqrstuvwxyz"[index % 26]
        assert refusal(f"[^{letter}]{{1,{900 + index // 26}}}") is None
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown < 90 * 1024  # kilobytes
