import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import pytest  # noqa: E402

from cepagg.engines import kernels  # noqa: E402


@pytest.fixture(autouse=True)
def _stack_every_batch(monkeypatch):
    """Every batch stacks its partitions, however few (:func:`cepagg.engines.kernels.stack_batch`):
    the tests' small inputs exercise the stacked path; tests of the threshold set their own."""
    monkeypatch.setattr(kernels, "STACK_MIN_PARTITIONS", 1)
