"""``models.built``: the hot path's constructor answers as ``model_construct`` does."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, Field

from shellgate.models import Redirect, Segment, Write, built


def test_built_is_model_construct_with_defaults_in_field_order() -> None:
    values: dict[str, Any] = {"argv": ("echo", "hi"), "text": "echo hi", "writes": (Write(path="/w/x", target="x",
              how="redirection '>'"),), "redirects": (Redirect(op=">", target="x", is_write=True),)}  # fmt: skip
    ours = built(Segment, **values)
    theirs = Segment.model_construct(**values)
    assert ours == theirs
    assert ours.model_fields_set == theirs.model_fields_set == set(values)
    assert list(ours.model_dump()) == list(Segment.model_fields)  # JSON keys keep their order
    assert ours.model_dump_json() == theirs.model_dump_json()
    with pytest.raises(Exception, match="frozen"):
        ours.text = "other"  # type: ignore[misc]


def test_built_refuses_a_model_with_a_default_factory() -> None:
    class Listed(BaseModel):
        items: list[str] = Field(default_factory=list)

    with pytest.raises(TypeError, match="default factory"):
        built(Listed)
