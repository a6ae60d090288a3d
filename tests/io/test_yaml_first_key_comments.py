"""Full-line comments after a removed key whose follower is now a map's first key."""

from __future__ import annotations

import textwrap

import yaml

from evalreg.io.yamlio import dump_yaml

ORIGINAL = """\
tests:
  - id: a
    execution:
      target: azure
      # The checks of this test.
      evaluators:
        - name: k
"""


def test_comments_before_the_key_that_is_first_now_are_kept() -> None:
    record = {"tests": [{"id": "a", "execution": {"assert": [{"name": "k"}]}}]}
    out = dump_yaml([record], textwrap.dedent(ORIGINAL).encode()).decode()
    assert yaml.safe_load(out) == record
    assert out == textwrap.dedent(
        """\
        tests:
          - id: a
            execution:
              # The checks of this test.
              assert:
                - name: k
        """
    )


def test_blank_lines_alone_are_not_carried_before_the_first_key() -> None:
    original = ORIGINAL.replace("      # The checks of this test.\n", "\n")
    record = {"tests": [{"id": "a", "execution": {"assert": [{"name": "k"}]}}]}
    out = dump_yaml([record], original.encode()).decode()
    assert yaml.safe_load(out) == record
    assert "execution:\n      assert:\n" in out
