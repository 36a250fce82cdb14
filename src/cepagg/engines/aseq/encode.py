"""From an Arrow batch to the integer arrays the kernels read, with no Python object per event.

For one unit and one batch this computes, column-wise:

* the partition of each event (HPC, paper §3.4): the partition attributes dictionary-encoded
  and combined into one integer code; an event with a null key belongs to no partition;
* its *class*: which roles (feeds) it can take — type and local conditions, evaluated with
  :mod:`.vexpr` — encoded as a bit mask and numbered; each class lists its actions on nodes;
* the values of aggregated attributes per component, with null masks;
* for EMIT ON CHANGE, the outputs for which its time is an instant.

Reference: Qi, Cao, Ray, Rundensteiner, "Complex Event Analytics: Online Aggregation of Stream
Sequence Patterns", SIGMOD 2014, §3.4 (local predicates as arrival filters, hashed partitions);
docs/semantics.md §6-7 (partitions, instants).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...errors import CepaggError
from ...events import EventBatch
from ..keys import IntKeys, take_keys
from . import _kernels as K
from .counters import Families, Unit
from .vexpr import holds_all


@dataclass
class Encoded:
    """A batch as seen by one unit: events kept, sorted by (partition, ts, id)."""

    ts: np.ndarray
    cls: np.ndarray
    valI: np.ndarray
    vldI: np.ndarray
    valF: np.ndarray
    vldF: np.ndarray
    inst: np.ndarray
    cls_ptr: np.ndarray
    cls_node: np.ndarray
    cls_kind: np.ndarray
    keys: "list[tuple] | IntKeys"  # partition key of each run
    bounds: np.ndarray  # run r is events bounds[r]:bounds[r+1]


def column(table: pa.Table, name: str) -> pa.Array:
    if name in table.column_names:
        c = table.column(name)
        return c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c
    return pa.nulls(table.num_rows)


def _int_key(t: pa.DataType) -> bool:
    """Keys of this type are kept as int64 (:class:`IntKeys`): every integer type but uint64."""
    return pa.types.is_integer(t) and not pa.types.is_uint64(t)


def partition_codes(table: pa.Table, attrs: tuple[str, ...]) -> tuple[np.ndarray, "list[tuple] | IntKeys"]:
    """Code per event (-1: a key attribute is null) and the key tuple of each code (built by
    ``zip`` and ``map``, C loops: a batch may hold 10^5 keys); for one integer attribute the
    codes' keys are :class:`IntKeys`, increasing."""
    n = table.num_rows
    if not attrs:
        return np.zeros(n, np.int64), [()]
    if len(attrs) == 1 and attrs[0] in table.column_names and _int_key(table.column(attrs[0]).type):
        col = column(table, attrs[0])
        vals = pc.fill_null(col, 0).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
        if col.null_count:
            valid = pc.is_valid(col).to_numpy(zero_copy_only=False)
            uniq, inv = np.unique(vals[valid], return_inverse=True)
            codes = np.full(n, -1, np.int64)
            codes[valid] = inv.reshape(-1)
        else:
            uniq, inv = np.unique(vals, return_inverse=True)
            codes = inv.reshape(-1).astype(np.int64, copy=False)
        return codes, IntKeys(uniq)
    idx, dicts = [], []
    valid = np.ones(n, bool)
    for a in attrs:
        enc = pc.dictionary_encode(column(table, a))
        ind = enc.indices
        valid &= pc.is_valid(ind).to_numpy(zero_copy_only=False)
        idx.append(pc.fill_null(ind, 0).to_numpy(zero_copy_only=False).astype(np.int64))
        dicts.append(enc.dictionary.to_pylist())
    if len(attrs) == 1:
        combo = idx[0]
        uniq, inv = np.unique(combo[valid], return_inverse=True)
        keys = list(zip(map(dicts[0].__getitem__, uniq.tolist())))
    else:
        stacked = np.stack(idx, axis=1)[valid]
        uniq, inv = np.unique(stacked, axis=0, return_inverse=True)
        keys = list(zip(*(map(d.__getitem__, col) for d, col in zip(dicts, uniq.T.tolist()))))
    codes = np.full(n, -1, np.int64)
    codes[valid] = inv.reshape(-1)
    return codes, keys


def stable_order(codes: np.ndarray, k: int) -> np.ndarray:
    """The stable order of ``codes``, integers in ``[0, k)``: the events of each partition
    together, in their order. Numpy sorts 16-bit integers by radix, in linear time, and int64
    by merging runs, some 20 times slower on a batch of 65,536 events over 10^4 keys (a tenth
    of such a batch's time); codes of up to 32 bits take two radix passes, low half first."""
    if k <= 1 << 16:
        return np.argsort(codes.astype(np.uint16), kind="stable")
    if k > 1 << 32:
        return np.argsort(codes, kind="stable")
    order = np.argsort((codes & 0xFFFF).astype(np.uint16), kind="stable")
    return order[np.argsort((codes[order] >> 16).astype(np.uint16), kind="stable")]


class Encoder:
    """Encodes batches for one unit (its feeds, classes and component sources)."""

    def __init__(self, unit: Unit, fam: Families, instant_outputs: bool):
        self.unit = unit
        self.fam = fam
        self.instant_outputs = instant_outputs
        feeds: dict[tuple, tuple] = {}
        actions: dict[tuple, list[tuple[int, int]]] = {}
        for j, f in enumerate(unit.node_feed):
            feeds[f.key] = f
            actions.setdefault(f.key, []).append((j, K.EXTEND))
            for r in unit.node_reset[j]:
                feeds[r.key] = r
                actions.setdefault(r.key, []).append((j, K.RESET))
        for f in unit.lead:
            feeds[f.key] = f
            actions.setdefault(f.key, []).append((0, K.LEAD))
        self.feed_keys = list(feeds)
        self.feeds = [feeds[k] for k in self.feed_keys]
        self.actions = [sorted(set(actions[k])) for k in self.feed_keys]
        self.types = [o.plan.query.event_types for o in unit.outputs]

    def encode(self, batch: EventBatch, python_values: bool) -> Encoded:
        table = batch.table
        n = table.num_rows
        unit = self.unit
        plan = unit.plans[0]
        codes, keys = partition_codes(table, plan.partition_attrs)
        ok = codes >= 0
        q = plan.query
        if q.stream_filters and n:
            ok &= holds_all([f.expr for f in q.stream_filters], table)
        ts = column(table, "ts").to_numpy(zero_copy_only=False).astype(np.int64)
        type_col = column(table, "type")
        tenc = pc.dictionary_encode(type_col)
        tcodes = pc.fill_null(tenc.indices, -1).to_numpy(zero_copy_only=False).astype(np.int64)
        tnames = {name: i for i, name in enumerate(tenc.dictionary.to_pylist())}

        def type_mask(t: frozenset[str] | None) -> np.ndarray:
            if t is None:
                return np.ones(n, bool)
            codes = [tnames[m] for m in t if m in tnames]  # (a concept: the types below it)
            if len(codes) == 1:
                return tcodes == codes[0]
            return np.isin(tcodes, codes) if codes else np.zeros(n, bool)

        bits = np.zeros(n, np.int64)
        words = []
        for i, f in enumerate(self.feeds):
            m = type_mask(f.members) & ok
            if f.conds and m.any():
                sub = np.nonzero(m)[0]
                m[sub] = holds_all(f.conds, table.take(pa.array(sub)))
            if i and i % 62 == 0:
                words.append(bits)
                bits = np.zeros(n, np.int64)
            bits |= m.astype(np.int64) << (i % 62)
        words.append(bits)
        if len(words) == 1 and len(self.feeds) <= 16:  # few roles: classes by a lookup table
            present = np.flatnonzero(np.bincount(words[0], minlength=1 << len(self.feeds)))
            lut = np.zeros(1 << len(self.feeds), np.int64)
            lut[present] = np.arange(len(present))
            cls = lut[words[0]]
            uniq_rows = present.reshape(-1, 1)
        elif len(words) == 1:
            uniq, cls = np.unique(words[0], return_inverse=True)
            uniq_rows = uniq.reshape(-1, 1)
        else:
            uniq_rows, cls = np.unique(np.stack(words, axis=1), axis=0, return_inverse=True)
        cls = cls.reshape(-1).astype(np.int64, copy=False)
        ptr, nodes, kinds = [0], [], []
        for row in uniq_rows:
            acts = set()
            for i in range(len(self.feeds)):
                if (int(row[i // 62]) >> (i % 62)) & 1:
                    acts.update(self.actions[i])
            for node, kind in sorted(acts):
                nodes.append(node)
                kinds.append(kind)
            ptr.append(len(nodes))
        has_action = (np.diff(np.array(ptr)) > 0)[cls]

        inst = np.zeros(n, np.int64)
        if self.instant_outputs:
            valid = codes >= 0
            for o, types in enumerate(self.types):
                rel = valid.copy()
                if types is not None:
                    rel &= np.isin(tcodes, [tnames[t] for t in types if t in tnames])
                inst |= rel.astype(np.int64) << o
        keep = has_action | (inst != 0)
        sel = np.nonzero(keep)[0]
        pc_sel = codes[sel]
        if len(keys) > 1:
            order = stable_order(pc_sel, len(keys))
            sel = sel[order]
            pc_sel = pc_sel[order]
        valI, vldI, valF, vldF = self.values(table, sel, python_values)
        if len(sel):
            starts = np.flatnonzero(np.diff(pc_sel)) + 1
            bounds = np.concatenate([[0], starts, [len(sel)]]).astype(np.int64)
            run_keys = take_keys(keys, pc_sel[bounds[:-1]])
        else:
            bounds = np.zeros(1, np.int64)
            run_keys = take_keys(keys, np.zeros(0, np.int64))
        return Encoded(ts[sel], cls[sel], valI, vldI, valF, vldF, inst[sel], np.array(ptr, np.int64),
                       np.array(nodes, np.int64), np.array(kinds, np.int64), run_keys, bounds)

    def values(self, table: pa.Table, sel: np.ndarray, python_values: bool):
        fam = self.fam
        m = len(sel)
        needs = any(s[0] in ("attr", "nonnull") for s in fam.srcI + fam.srcF)
        taken = table.take(pa.array(sel, pa.int64())) if needs else None
        valI = np.zeros((m, len(fam.srcI)), object if python_values else np.int64)
        vldI = np.ones((m, len(fam.srcI)), np.uint8)
        valF = np.zeros((m, len(fam.srcF)), np.float64)
        vldF = np.ones((m, len(fam.srcF)), np.uint8)
        for c, src in enumerate(fam.srcI):
            if src[0] == "count":
                continue
            if src[0] == "one":
                valI[:, c] = 1
                continue
            col = column(taken, src[1])
            valid = pc.is_valid(col).to_numpy(zero_copy_only=False)
            if src[0] == "nonnull":
                valI[:, c] = valid.astype(np.int64)
                continue
            vldI[:, c] = valid
            if python_values:
                valI[:, c] = np.array(col.to_pylist(), dtype=object)
                continue
            t = col.type
            if pa.types.is_floating(t) or pa.types.is_decimal(t):
                vals = pc.fill_null(col, 0).to_numpy(zero_copy_only=False)
                if not np.all(np.isfinite(vals)) or not np.all(vals == np.round(vals)):
                    raise CepaggError(f"attribute '{src[1]}' holds non-integer values in a batch after integer ones")
                valI[:, c] = vals.astype(np.int64)
            elif pa.types.is_null(t):
                valI[:, c] = 0
            else:
                valI[:, c] = pc.fill_null(col, 0).to_numpy(zero_copy_only=False).astype(np.int64)
        for c, src in enumerate(fam.srcF):
            col = column(taken, src[1])
            vldF[:, c] = pc.is_valid(col).to_numpy(zero_copy_only=False)
            if pa.types.is_null(col.type):
                continue
            valF[:, c] = pc.fill_null(pc.cast(col, pa.float64()), 0.0).to_numpy(zero_copy_only=False)
        return valI, vldI, valF, vldF


# Reference: A-Seq (SIGMOD 2014) §3.4 (local predicates, HPC).
