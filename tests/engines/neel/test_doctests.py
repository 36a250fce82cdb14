"""The docstring examples of the neel modules run as tests."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["cepagg.engines.neel.terms", "cepagg.engines.neel.interleave", "cepagg.engines.neel.witness",
           "cepagg.engines.neel.bitmark", "cepagg.engines.neel.plan_finder"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0 and result.attempted > 0
