from __future__ import annotations

import copy
import re
import textwrap
from typing import Any

import pytest
import yaml

from evalreg import Registry
from evalreg.io.yamlio import dump_yaml


def _dump(original: str, *records: Any) -> str:
    text = textwrap.dedent(original)
    out = dump_yaml(list(records), text.encode("utf-8")).decode("utf-8")
    loaded = list(yaml.safe_load_all(out))
    assert loaded == list(records), out  # the text always says exactly the record
    return out


def _load(original: str) -> Any:
    return yaml.safe_load(textwrap.dedent(original))


COMMENTED = """\
# Suite header
description: Unit conversions  # what the suite covers
target: default

evalcases:
  # The marathon case.
  - id: miles-to-km
    outcome: Converts 26.2 miles to about 42.2 km.  # the pass condition
    input_messages:
      - role: user
        content: "How far is a marathon in km?"  # quoted on purpose
    expected_messages:
      - role: assistant
        content: |
          About 42.2 km.
          (26.2 x 1.609)

  - id: km-to-miles
    outcome: Converts 10 km to about 6.2 miles.
    input_messages:
      - role: user
        content: And 10 km in miles?
    expected_messages:
      - role: assistant
        content: About 6.2 miles.
"""


def test_an_unchanged_record_is_written_back_as_it_was() -> None:
    assert _dump(COMMENTED, _load(COMMENTED)) == COMMENTED


def test_a_renamed_key_keeps_its_place_and_its_comment() -> None:
    record = _load(COMMENTED)
    record["evalcases"] = [
        {("expected_outcome" if k == "outcome" else k): v for k, v in case.items()}
        for case in _load(COMMENTED)["evalcases"]
    ]
    out = _dump(COMMENTED, record)
    assert (
        "    expected_outcome: Converts 26.2 miles to about 42.2 km. # the pass condition\n" in out
    )
    assert (
        out.index("- id: miles-to-km") < out.index("expected_outcome") < out.index("input_messages")
    )
    assert "# The marathon case." in out and "# quoted on purpose" in out
    assert out == COMMENTED.replace("    outcome:", "    expected_outcome:").replace(
        "km.  # the pass", "km. # the pass"
    )


def test_a_renamed_list_keeps_the_comments_and_layout_inside_it() -> None:
    record = {("tests" if k == "evalcases" else k): v for k, v in _load(COMMENTED).items()}
    out = _dump(COMMENTED, record)
    assert out == COMMENTED.replace("evalcases:", "tests:")


def test_a_rename_is_found_by_value_where_positions_differ() -> None:
    original = """\
    a: 1
    note: keep me  # about the note
    b: 2
    """
    out = _dump(original, {"remark": "keep me", "a": 1, "b": 2})
    assert out == "remark: keep me # about the note\na: 1\nb: 2\n"


def test_full_line_comments_after_a_removed_key_stay_before_the_next_key() -> None:
    original = """\
    description: d
    grader: llm_judge
    # The cases follow.
    testcases:
      - id: a
    """
    out = _dump(original, {"description": "d", "testcases": [{"id": "a"}]})
    assert out == "description: d\n# The cases follow.\ntestcases:\n  - id: a\n"


def test_blank_lines_between_list_items_survive_a_removed_last_key() -> None:
    original = """\
    cases:
      - id: a
        note: first

      - id: b
        note: second
    """
    out = _dump(original, {"cases": [{"id": "a"}, {"id": "b"}]})
    assert out == "cases:\n  - id: a\n\n  - id: b\n"


def test_a_value_moved_under_a_new_key_brings_its_comments() -> None:
    original = """\
    id: t
    input:
      - role: user  # the only turn
        content: hi
    criteria: c
    """
    out = _dump(
        original,
        {"id": "t", "vars": {"input": [{"role": "user", "content": "hi"}]}, "criteria": "c"},
    )
    assert "# the only turn" in out
    assert out.index("vars:") < out.index("input:") < out.index("criteria:")


def test_a_child_moved_out_of_a_kept_map_brings_its_comments() -> None:
    original = """\
    id: t
    execution:
      target: azure
      evaluators:
        - name: judge  # the main check
          type: llm_judge
    """
    new = {
        "id": "t",
        "execution": {"target": "azure"},
        "assert": [{"name": "judge", "type": "llm_judge"}],
    }
    out = _dump(original, new)
    assert re.search(r"\n  - name: judge +# the main check\n", out), out


def test_quotes_and_block_scalars_are_kept_and_new_keys_are_block_style() -> None:
    record = _load(COMMENTED)
    record["metadata"] = {"tags": ["units", "math"], "owner": {"team": "evals"}}
    out = _dump(COMMENTED, record)
    assert '"How far is a marathon in km?"' in out
    assert "content: |\n          About 42.2 km.\n" in out
    assert out.endswith("metadata:\n  tags:\n    - units\n    - math\n  owner:\n    team: evals\n")


def test_cases_told_apart_by_id_keep_their_comments_when_one_is_removed() -> None:
    original = """\
    cases:
      - id: a  # first
      - id: b  # second
      - id: c  # third
    """
    out = _dump(original, {"cases": [{"id": "a"}, {"id": "c"}]})
    assert re.search("id: a +# first", out) and re.search("id: c +# third", out)
    assert "second" not in out


def test_every_document_of_a_file_is_updated() -> None:
    original = """\
    a: 1  # one
    ---
    b: 2  # two
    """
    out = _dump(original, {"a": 1}, {"c": 2})
    assert re.fullmatch(r"a: 1 +# one\n---\nc: 2 +# two\n", out), out


def test_merge_keys_fall_back_to_plain_data() -> None:
    original = """\
    base: &base
      x: 1
    item:
      <<: *base
      y: 2
    """
    record = _load(original)
    record["item"] = {"x": 1, "z": 3}
    _dump(original, record)


def test_unreadable_original_layout_still_writes_the_record() -> None:
    out = dump_yaml([{"a": [1, 2]}], b"\xff\xfe not yaml").decode()
    assert yaml.safe_load(out) == {"a": [1, 2]}


@pytest.mark.parametrize("target", ["2.1", "3", "latest"])
def test_a_migrated_file_keeps_its_comments(registry: Registry, target: str) -> None:
    record = _load(COMMENTED)
    result = registry.migrate(copy.deepcopy(record), target, family="agentv.eval")
    assert result.ok, result.error
    out = _dump(COMMENTED, result.record)
    for comment in ("# Suite header", "# what the suite covers", "# The marathon case."):
        assert comment in out
    assert "# the pass condition" in out
    assert "\n\n  - id: km-to-miles" in out


def test_items_moved_into_a_longer_list_keep_their_flow_style_and_comments() -> None:
    original = """\
    id: a
    rubrics:
      - polite
    execution:
      evaluators:
        - name: route  # the routing check
          type: code_judge
          script: [uv, run, check.py]
    """
    new = {
        "id": "a",
        "assert": [
            {"name": "route", "type": "code_judge", "script": ["uv", "run", "check.py"]},
            {"type": "rubrics", "criteria": ["polite"]},
        ],
    }
    out = _dump(original, new)
    assert re.search(r"- name: route +# the routing check\n", out), out
    assert "script: [uv, run, check.py]" in out


def test_an_item_is_not_mistaken_for_another_with_a_different_name() -> None:
    original = """\
    execution:
      evaluators:
        - name: tone  # file-level
          type: llm_judge
    cases:
      - id: c
        evaluators:
          - name: route  # case-level
            type: llm_judge
    """
    new = {
        "assert": [{"name": "tone", "type": "llm_judge"}],
        "cases": [{"id": "c", "assert": [{"name": "route", "type": "llm_judge"}]}],
    }
    out = _dump(original, new)
    assert re.search(r"- name: tone +# file-level\n", out), out
    assert re.search(r"- name: route +# case-level\n", out), out


BLOCKS = """\
evalcases:
  - id: review
    expected_outcome: |
      Flags the missing bound check.
    input_messages:
      - role: user
        content: |
          Review this loop:
          for i in range(n): use(a[i + 1])
    expected_messages:
      - role: assistant
        content: >
          The loop reads past the end
          of the list.
    rubrics:
      - |
        Names the index that
        overflows.
"""


def test_a_renamed_value_is_not_taken_for_a_like_one() -> None:
    # Input and expected turns look alike: each rename keeps its own layout.
    record = _load(BLOCKS)
    case = record["evalcases"][0]
    moved = {
        "tests": [
            {
                "id": "review",
                "criteria": case["expected_outcome"],
                "vars": {"input": case["input_messages"]},
                "expected_output": case["expected_messages"],
            }
        ]
    }
    out = _dump(BLOCKS, moved)
    folded = "        content: >\n          The loop reads past the end\n          of the list.\n"
    assert folded in out
    assert "          content: |\n            Review this loop:\n" in out


@pytest.mark.parametrize("target", ["3", "3.1", "latest"])
def test_a_migrated_file_keeps_its_block_scalars(registry: Registry, target: str) -> None:
    record = _load(BLOCKS)
    result = registry.migrate(copy.deepcopy(record), target, family="agentv.eval")
    assert result.ok, result.error
    out = _dump(BLOCKS, result.record)
    # Moved (input), renamed (criteria, expected_output) and rebuilt (a rubric item inside a
    # new check): each text keeps its literal or folded style.
    assert len(re.findall(r"[:-] \|\n", out)) == 3, out
    assert len(re.findall(r": >\n", out)) == 1, out


def test_a_block_scalar_rebuilt_elsewhere_keeps_its_style() -> None:
    original = """\
    outcome: |
      Two lines
      of text.
    """
    out = _dump(original, {"checks": [{"criteria": "Two lines\nof text.\n"}]})
    assert out == "checks:\n  - criteria: |\n      Two lines\n      of text.\n"
