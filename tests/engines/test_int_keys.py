"""Integer partition keys: the sorted index of stacked partitions (:class:`cepagg.engines.keys.IntIndex`)
against a dictionary, and the grouping of a batch by an integer key
(:func:`cepagg.engines.greta.encode.stable_sort`, :func:`~cepagg.engines.greta.encode.grouped`)
against numpy's stable sort."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from cepagg.engines.greta.encode import factorize, grouped, stable_sort
from cepagg.engines.greta.vector import Vec
from cepagg.engines.keys import IntIndex, IntKeys

I64 = np.iinfo(np.int64)


def _check(index: IntIndex, model: dict[int, int]) -> None:
    assert len(index) == len(model)
    assert index.keys.tolist() == sorted(model)
    assert index.slots.tolist() == [model[k] for k in sorted(model)]
    probe = np.array(sorted(model) + [I64.min, I64.max, 0, -1], dtype=np.int64)
    assert index.find(IntKeys(probe)).tolist() == [model.get(k, -1) for k in probe.tolist()]
    for k, s in model.items():
        assert index.get((k,)) == s and index.keys_at(np.array([s])) == [(k,)]


def _universe(kind: str, rng) -> np.ndarray:
    if kind == "near":
        return np.unique(rng.integers(-300, 300, 150))
    if kind == "far":  # about the extremes of int64
        return np.unique(np.concatenate([rng.integers(-50, 50, 80), rng.integers(I64.min, I64.max, 40),
                                         [I64.min, I64.max, 0]]))
    # "both": near keys first, in increasing order, then far ones
    return np.concatenate([np.unique(rng.integers(0, 1000, 100)), [2**40, -2**40, I64.max]])


@pytest.mark.parametrize("kind", ["near", "far", "both"])
@pytest.mark.parametrize("seed", range(4))
def test_int_index_matches_a_dictionary_through_adds_and_removes(kind, seed):
    """New keys in any order (increasing runs, decreasing, shuffled), negative and extreme
    keys, batches of keys all new, and removals between them; the index pickled and restored
    after each step."""
    rng = np.random.default_rng(seed)
    universe = _universe(kind, rng)
    index, model, free = IntIndex(), {}, list(range(len(universe)))
    index.grow(len(universe))
    for step in range(30):
        unknown = np.array([k for k in universe.tolist() if k not in model], dtype=np.int64)
        if len(unknown) and rng.random() < 0.7:
            if kind == "both":
                new = unknown[:int(rng.integers(1, len(unknown) + 1))]
            else:
                new = rng.choice(unknown, size=int(rng.integers(1, len(unknown) + 1)), replace=False)
            how = step % 4
            if how == 0:
                new = np.sort(new)
            elif how == 1:
                new = np.sort(new)[::-1]
            elif how == 2:  # two increasing runs, as a batch's new keys come
                cut = len(new) // 2
                new = np.concatenate([np.sort(new[:cut]), np.sort(new[cut:])])
            slots = np.array([free.pop() for _ in new], dtype=np.int64)
            if step % 3:  # where they go, as found by the look-up
                found, before = index.locate(IntKeys(new))
                assert (found == -1).all()
                index.add(IntKeys(new), slots, before)
            else:
                index.add(IntKeys(new), slots)
            model.update(zip(new.tolist(), slots.tolist()))
        elif model:
            gone = rng.choice(list(model.values()), size=int(rng.integers(1, len(model) + 1)), replace=False)
            index.remove(np.asarray(gone, dtype=np.int64))
            model = {k: s for k, s in model.items() if s not in set(gone.tolist())}
            free.extend(gone.tolist())
        _check(index, model)
        _check(pickle.loads(pickle.dumps(index)), model)


def test_int_index_add_of_no_keys_changes_nothing_and_keys_one_at_a_time():
    index = IntIndex()
    index.grow(8)
    index.add(IntKeys(np.zeros(0, np.int64)), np.zeros(0, np.int64))
    _check(index, {})
    model = {}
    for slot, key in enumerate([5, -3, 9, 0, -2**63, 2**63 - 1]):
        index.add(IntKeys(np.array([key])), np.array([slot]))
        model[key] = slot
        _check(index, model)
    found = index.find(IntKeys(np.array(sorted(model), dtype=np.int64)))  # a batch all known
    assert sorted(found.tolist()) == list(range(6))


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8, np.uint8, np.uint32, np.uint64])
@pytest.mark.parametrize("n", [0, 1, 2, 7, 1000])
def test_stable_sort_is_numpys_stable_sort(dtype, n):
    rng = np.random.default_rng(n)
    info = np.iinfo(dtype)
    for values in (rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True),  # (a wide span)
                   rng.integers(0, 5, n).astype(dtype),  # (many equal keys)
                   np.full(n, info.max, dtype=dtype), np.full(n, info.min, dtype=dtype)):
        order, ordered = stable_sort(values)
        expected = np.argsort(values, kind="stable")
        assert order.tolist() == expected.tolist()
        assert ordered.dtype == values.dtype and ordered.tolist() == values[expected].tolist()


def test_stable_sort_spans_at_the_edge_of_the_packed_sort():
    """Spans just inside and outside what fits beside the row numbers in 63 bits, about
    negative and positive extremes."""
    n = 1000  # 10 bits of row numbers
    rng = np.random.default_rng(3)
    for lo in (I64.min, -5, 0, I64.max - 2**53 + 1):
        for span in (2**53 - 1, 2**53, 2**54):
            if lo + span > I64.max:
                continue
            values = np.array([lo + int(x) for x in rng.integers(0, span, n, endpoint=True)], dtype=np.int64)
            values[:3] = [lo, lo + span, lo]
            order, ordered = stable_sort(values)
            expected = np.argsort(values, kind="stable")
            assert order.tolist() == expected.tolist() and ordered.tolist() == values[expected].tolist()


def test_grouped_integer_key_agrees_with_factorize():
    rng = np.random.default_rng(5)
    values = rng.integers(-20, 20, 500)
    vec = Vec("number", values, np.ones(len(values), dtype=bool))
    codes, keys, order, ints = grouped([vec], len(values))
    fcodes, fkeys = factorize([vec], len(values))
    assert codes.tolist() == fcodes.tolist() and list(keys) == fkeys
    assert order.tolist() == np.argsort(fcodes, kind="stable").tolist()
    assert ints.tolist() == [k for (k,) in fkeys]


def test_stable_sort_of_big_endian_uint64_past_int64():
    values = np.array([2**63 + 5, 2**63 + 1, 2**63 + 5], dtype=">u8")
    order, ordered = stable_sort(values)
    assert order.tolist() == [1, 0, 2]
    assert ordered.tolist() == [2**63 + 1, 2**63 + 5, 2**63 + 5]
