"""The duplicates rule's cheap key is the one it was first written as, for any record."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

RULES = Path(__file__).parents[2] / "rules"


def _duplicates() -> Any:
    spec = importlib.util.spec_from_file_location(
        "key_duplicates", RULES / "eee.aggregate" / "duplicates.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


DUPLICATES = _duplicates()


def _key(record: Any) -> str:
    """`duplicates.key` as it was written first."""

    def score(result: dict[str, Any]) -> Any:
        details = result.get("score_details")
        return details.get("score") if type(details) is dict else None

    model = record.get("model_info")
    results = record.get("evaluation_results")
    scores = sorted(
        f"{result.get('evaluation_name')!r}:{score(result)!r}"
        for result in (results if type(results) is list else ())
        if type(result) is dict
    )
    model_id = model.get("id") if type(model) is dict else None
    return f"{model_id!r}|{'|'.join(scores)}"


SCALAR = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=5)
)
DETAILS = st.one_of(SCALAR, st.fixed_dictionaries({}, optional={"score": SCALAR}))
RESULT = st.one_of(
    SCALAR,
    st.fixed_dictionaries({}, optional={"evaluation_name": SCALAR, "score_details": DETAILS}),
)
RECORD = st.fixed_dictionaries(
    {},
    optional={
        "model_info": st.one_of(SCALAR, st.fixed_dictionaries({}, optional={"id": SCALAR})),
        "evaluation_results": st.one_of(SCALAR, st.lists(RESULT, max_size=4)),
    },
)


@settings(max_examples=300, deadline=None)
@given(RECORD)
def test_the_key_is_the_first_one(record: dict[str, Any]) -> None:
    assert DUPLICATES.key(record) == _key(record)


def test_results_in_another_order_share_a_key() -> None:
    first = {
        "model_info": {"id": "m"},
        "evaluation_results": [
            {"evaluation_name": "a", "score_details": {"score": 0.5}},
            {"evaluation_name": "b", "score_details": {"score": 1}},
        ],
    }
    second = {**first, "evaluation_results": first["evaluation_results"][::-1]}
    assert DUPLICATES.key(first) == DUPLICATES.key(second) == "'m'|'a':0.5|'b':1"
