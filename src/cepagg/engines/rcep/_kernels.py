"""The compiled enumeration of the matches ending at one trigger, comparisons between variables checked
as the match grows.

The kernel module of :mod:`.compiled`: plain functions over arrays, compiled by numba on the
first match query that takes the compiled path and cached on disk beside this file (it calls
the condition operations of :mod:`cepagg.engines.postfix`; :func:`cepagg.engines.kernels.guard`
drops the cache when either source changes). Its twin
(the same source run as Python, :func:`cepagg.engines.kernels.twin`) gives the same output.

Input, for one trigger (:func:`gather` makes it from a partition's store): the events of every
position inside the scope, concatenated in position order (``ts``; position ``p`` holds
``ts[start[p]:stop[p]]``, time-ordered), the trigger last (index ``len(ts) - 1``). A match
binds position 0, 1, ..., k-1 in time order (strictly increasing timestamps between neighbours
and inside a Kleene run), the trigger and only the trigger at the last position (a Kleene last
position: runs whose last event is the trigger). The search is depth first over a stack of
(position, event) levels, one level per matched event in time order. A position's events are
taken only below ``upper[p]``, the latest timestamp from which the remaining positions can
still be completed in time (computed once per trigger, right to left), and an event is bound
only if it passes the comparisons due at its level (:mod:`.comparisons`: a Kleene run is
pruned as it grows). Without comparisons the search never enters a dead end: its work is
proportional to the matches it writes (the gather's to the events of the window, once per
position).

Output: rows of the long form, column-wise -- match number, index of the returned variable,
position in its run, the event (``ref`` of its index in ``ts``: its id or where it is stored) --
into arrays of ``cap`` rows from ``fill`` on. When a match does not fit, the kernel returns
with its stack in ``stack_p``/``stack_i`` and ``state`` and the caller calls again with fresh
arrays: memory holds one block of rows, however many matches one trigger ends.
"""

from __future__ import annotations

from .. import kernels

_TWIN = kernels.is_twin(globals())
jit = kernels.jit(_TWIN)
helper = kernels.jit(_TWIN, inline=True)  # (small helpers: inlined by LLVM)
step = kernels.jit(_TWIN, inline="step")  # (called once, from enumerate_triggers: spliced in by numba)
apply = kernels.flavour("cepagg.engines.postfix", _TWIN).apply

NONE = -2  # no candidate
TRIG = -1  # the trigger
MIN_TS = -(2**62)

# state[1]
FRESH, RUNNING, DONE = 0, 1, 2
#: matches one fold counts before the caller takes the counts (int64 sums of them stay exact)
FOLD_MAX = 2**56

# the conjuncts' table and loads (:mod:`.comparisons`, repeated here: the kernels read no other
# module of this package); the other operations are :mod:`cepagg.engines.postfix`'s
START, EACH, PAIR = 0, 1, 2
LOAD = 0
TRIGGER, FIRST, LAST, CUR, PREV, LOOP = 1, 2, 3, 4, 5, 6


@helper
def _after(ts, a, b, tau):
    """The first index ``j`` in ``[a, b)`` with ``ts[j] > tau`` (``b`` if none)."""
    lo, hi = a, b
    while lo < hi:
        m = (lo + hi) >> 1
        if ts[m] <= tau:
            lo = m + 1
        else:
            hi = m
    return lo


@helper
def _first(ts, start, stop, p, tau, bound, trig_ok):
    """The first candidate of position ``p`` after time ``tau``: an event below ``bound``, else
    the trigger (where ``trig_ok``), else NONE."""
    j = _after(ts, start[p], stop[p], tau)
    if j < stop[p] and ts[j] < bound:
        return j
    if trig_ok:
        return TRIG
    return NONE


@helper
def _next(ts, stop, p, i, bound, trig_ok):
    """The candidate of position ``p`` after candidate ``i`` (same constraints as _first)."""
    if i == TRIG:
        return NONE
    j = i + 1
    if j < stop[p] and ts[j] < bound:
        return j
    if trig_ok:
        return TRIG
    return NONE


@helper
def _loaded(kind, p, L, lv, first, stack_i, tidx):
    """The event (its index in ``ts``) a LOAD of ``kind`` reads from position ``p``, with the
    event just bound at level ``L`` and, for a LOOP, the run's event at level ``lv``."""
    if kind == TRIGGER:
        return tidx
    if kind == FIRST:
        lvl = first[p]
    elif kind == LAST:
        lvl = first[p + 1] - 1
    elif kind == CUR:
        lvl = L
    elif kind == PREV:
        lvl = L - 1
    else:
        lvl = lv
    i = stack_i[lvl]
    return tidx if i == TRIG else i


@helper
def _next_at(L, ts, stop, upper, q, i, bound0, trig0):
    """The candidate of position ``q`` after candidate ``i`` at stack level ``L``: level 0 (the
    match's first event) is bounded by ``bound0`` and takes the trigger where ``trig0``, a later
    level by ``upper[q]``, the trigger at the last position only."""
    if L == 0:
        return _next(ts, stop, q, i, bound0, trig0)
    return _next(ts, stop, q, i, upper[q], q == stop.shape[0] - 1)


@helper
def _passes(cond, code, consts, sv, sk, L, q, fresh, stack_i, first, six, vals, tidx):
    """Whether the event just bound at level ``L`` (position ``q``; ``fresh``: it starts
    ``q``'s run) passes the conjuncts due there (:mod:`.comparisons`): each a postfix program
    run on the stack ``sv``/``sk`` (:mod:`cepagg.engines.postfix`: values, and the validity of
    a value or a truth: 0, 1, 2 for unknown); a null (NaN) value makes arithmetic null and a
    comparison unknown, and a conjunct passes only when true. (One function, not one per
    opcode: numba compiles each function on its own, and the compile time counts.)"""
    for j in range(cond.shape[0]):
        if cond[j, 1] != q:
            continue
        when = cond[j, 0]
        if not (when == EACH or (when == START and fresh) or (when == PAIR and not fresh)):
            continue
        lv0, lv1 = 0, 1
        lp = cond[j, 2]
        if lp >= 0:  # every event of a run bound before
            lv0, lv1 = first[lp], first[lp + 1]
        for lv in range(lv0, lv1):
            top = 0
            for pc in range(cond[j, 3], cond[j, 4]):
                op = code[pc, 0]
                if op == LOAD:
                    i = _loaded(code[pc, 1], code[pc, 2], L, lv, first, stack_i, tidx)
                    v = vals[code[pc, 3], six[i]]
                    sv[top] = v
                    sk[top] = 1 if v == v else 0
                    top += 1
                else:
                    top = apply(op, code[pc, 1], consts[pc], sv, sk, top)
            if sk[0] != 1:
                return False
    return True


@helper
def _seek(L, q, c, ts, start, stop, upper, bound0, trig0, stack_p, stack_i, first, cond, code, consts, sv, sk, six,
          vals):
    """Bind level ``L`` to the first candidate from ``c`` (of position ``q``) on that passes the
    comparisons; a level that continues a Kleene run moves on to the next position's candidates
    when the run's own are exhausted. Returns the candidate bound, NONE if none is left."""
    k = start.shape[0]
    tidx = ts.shape[0] - 1
    while True:
        while c != NONE:
            stack_p[L] = q
            stack_i[L] = c
            fresh = L == 0 or stack_p[L - 1] != q
            if fresh:
                first[q] = L
            if cond.shape[0] == 0 or _passes(cond, code, consts, sv, sk, L, q, fresh, stack_i, first, six, vals, tidx):
                return c
            c = _next_at(L, ts, stop, upper, q, c, bound0, trig0)
        if L == 0 or q != stack_p[L - 1] or q == k - 1:
            return NONE
        q += 1
        c = _first(ts, start, stop, q, ts[stack_i[L - 1]], upper[q], q == k - 1)


@helper
def _write_match(L, stack_p, stack_i, ret_pos, ref, tidx, out_match, out_var, out_pos, out_idx, fill, cap,
                 number):
    """Write the match on the stack (levels ``0..L-1``) as match ``number`` from row ``fill``
    on: one row per event of a returned variable, in RETURN order, each run's events numbered
    from 0. Returns the row after the last written, or -1 (nothing written) when the match
    does not fit below ``cap``."""
    n_ret = ret_pos.shape[0]
    rows = 0
    for r in range(n_ret):
        for lv in range(L):
            if stack_p[lv] == ret_pos[r]:
                rows += 1
    if fill + rows > cap:
        return -1
    for r in range(n_ret):
        rp = ret_pos[r]
        pos = 0
        for lv in range(L):
            if stack_p[lv] == rp:
                out_match[fill] = number
                out_var[fill] = r
                out_pos[fill] = pos
                x = stack_i[lv]
                out_idx[fill] = ref[tidx] if x == TRIG else ref[x]
                fill += 1
                pos += 1
    return fill


@helper
def _bounds(ts, start, stop, flags, upper):
    """``upper[p]``: the latest timestamp from which the positions after ``p`` can still be
    completed in time before the trigger (``ts[-1]``), right to left. False when a position
    before the last has no event early enough (no match ends at the trigger)."""
    k = start.shape[0]
    trig_ts = ts[ts.shape[0] - 1]
    if flags[k - 1] & 1:
        upper[k - 1] = trig_ts
    else:
        upper[k - 1] = MIN_TS
    if k >= 2:
        upper[k - 2] = trig_ts
    for p in range(k - 3, -1, -1):
        j = _after(ts, start[p + 1], stop[p + 1], upper[p + 1] - 1) - 1
        if j < start[p + 1]:
            return False
        upper[p] = ts[j]
    return True


@helper
def _count_match(L, stack_p, stack_i, flags, six, tidx, mult, agg):
    """Fold the match on the stack (levels ``0..L-1``): count it (``agg[0]``) and, per event of
    an aggregated position (bit 1 of ``flags``), the matches binding it there (``mult``), with
    the least and greatest event counted (``agg[1]``, ``agg[2]``)."""
    agg[0] += 1
    for lv in range(L):
        p = stack_p[lv]
        if flags[p] & 2:
            x = stack_i[lv]
            e = six[tidx] if x == TRIG else six[x]
            mult[p, e] += 1
            if e < agg[1]:
                agg[1] = e
            if e > agg[2]:
                agg[2] = e


@step
def enumerate_matches(ts, ref, six, start, stop, flags, upper, first, ret_pos, lo, first_hi, cond, code, consts, sv, sk,
                      vals, stack_p, stack_i, state, out_match, out_var, out_pos, out_idx, fill, cap, number, mult,
                      agg):
    """Write the matches ending at the trigger (``ts[-1]``) from row ``fill`` on, numbered from
    ``number``; returns (fill, number). ``state[1]`` is DONE when every match is written;
    otherwise the arrays are full and a call with the same stack, ``first`` and state continues.

    With ``agg[3]`` set (fold), matches are counted instead of written (aggregates, folded by
    the caller): ``agg[0]`` counts them, ``mult[p, e]`` the matches binding stored event ``e``
    (``six``) at position ``p`` where bit 1 of ``flags[p]`` is set (once per event of a run), ``agg[1]``/``agg[2]`` keep
    the least and greatest ``e`` counted. Before ``agg[0]`` reaches :data:`FOLD_MAX` the call
    returns (not DONE) for the caller to take the counts and zero them.

    ``out_idx`` gets ``ref[i]`` for event ``i`` (an event id, or where the event is stored).
    ``flags[p]`` bit 0: position ``p`` is Kleene plus. ``ret_pos``: the positions returned, in
    RETURN order (``out_var`` is an index into it). Every event has ``ts >= lo`` already; the
    match's first event must have ``ts < first_hi``. ``upper`` (k entries) is scratch;
    ``first`` (k entries) holds the stack level where each bound position's run starts.
    Conditions between variables: conjuncts of ``cond`` running code of ``code``/``consts`` on
    the scratch stack ``sv``/``sk`` (:mod:`.comparisons`), reading
    attribute ``slot`` of event ``i`` at ``vals[slot, six[i]]`` (NaN: null).
    """
    k = start.shape[0]
    tidx = ts.shape[0] - 1
    trig_ts = ts[tidx]
    if state[1] == DONE:
        return fill, number
    fold = agg[3] != 0
    if not _bounds(ts, start, stop, flags, upper):  # (recomputed on every call: cheap)
        state[1] = DONE
        return fill, number
    bound0 = min(upper[0], first_hi)
    trig0 = k == 1 and trig_ts < first_hi
    L = state[0]
    back = False  # False: bind one more level; True: move the top level on to its next candidate
    if state[1] == FRESH:
        L = 0
        state[1] = RUNNING
    while True:
        # the level to bind (lvl), its position and first candidate; then one _seek for all cases
        if back:
            lvl = L - 1
            q = stack_p[lvl]
            c = _next_at(lvl, ts, stop, upper, q, stack_i[lvl], bound0, trig0)
        elif L == 0:
            lvl, q = 0, 0
            c = _first(ts, start, stop, 0, lo - 1, bound0, trig0)
        else:
            top = L - 1
            i = stack_i[top]
            if i == TRIG and fold:  # a match: count it and its events, then move the top on
                if agg[0] >= FOLD_MAX:  # (the caller takes the counts first)
                    state[0] = L
                    return fill, number
                _count_match(L, stack_p, stack_i, flags, six, tidx, mult, agg)
                number += 1
                back = True
                continue
            if i == TRIG:  # a match: write it, then move the top on
                end = _write_match(L, stack_p, stack_i, ret_pos, ref, tidx, out_match, out_var, out_pos, out_idx,
                                   fill, cap, number)
                if end < 0:  # (it does not fit: the next call writes it)
                    state[0] = L
                    return fill, number
                fill = end
                number += 1
                back = True
                continue
            p = stack_p[top]
            lvl = L
            q = p if flags[p] & 1 else p + 1
            c = NONE
            if q < k:
                c = _first(ts, start, stop, q, ts[i], upper[q], q == k - 1)
        c = _seek(lvl, q, c, ts, start, stop, upper, bound0, trig0, stack_p, stack_i, first, cond, code, consts, sv, sk,
                  six, vals)
        if c != NONE:
            L = lvl + 1
            back = False
        else:
            if back:
                L = lvl  # (the top level is exhausted: the one below moves on)
            back = True
            if L == 0:
                state[0] = 0
                state[1] = DONE
                return fill, number


@step
def gather(s_ts, s_ids, s_bits, head, tix, k, lo, use_ids, ts, ref, six, start, stop):
    """The input of :func:`enumerate_matches` for the trigger stored at ``tix``, from a
    partition's stored events ``[head, tix]`` (time-ordered; bit ``p`` of ``s_bits``: the event
    may bind position ``p``): per position the events with ``lo <= ts < `` the trigger's time,
    then the trigger, into ``ts``; ``ref`` gets their ids (``use_ids``) or their store indexes,
    ``six`` their store indexes.
    Returns how many entries it wrote, 0 when a position before the last has no event (no
    match ends here)."""
    trig_ts = s_ts[tix]
    a = _after(s_ts, head, tix, lo - 1)
    b = _after(s_ts, a, tix, trig_ts - 1)
    at = 0
    for p in range(k):
        start[p] = at
        for e in range(a, b):
            if (s_bits[e] >> p) & 1:
                ts[at] = s_ts[e]
                ref[at] = s_ids[e] if use_ids else e
                six[at] = e
                at += 1
        stop[p] = at
        if p < k - 1 and stop[p] == start[p]:
            return 0
    ts[at] = trig_ts
    ref[at] = s_ids[tix] if use_ids else tix
    six[at] = tix
    return at + 1


@jit
def enumerate_triggers(s_ts, s_ids, s_bits, head, tixs, lo, first_hi, w, use_ids, tstate, ts, ref, six, start, stop,
                       flags, upper, first, ret_pos, cond, code, consts, sv, sk, vals, stack_p, stack_i, state,
                       out_match, out_var, out_pos, out_idx, fill, cap, number, mult, agg):
    """:func:`gather` and :func:`enumerate_matches` for the triggers stored at ``tixs`` (store
    indexes, in order), each taking the events from ``max(its time - w + 1, lo)`` on (``ref``:
    ids where ``use_ids``, else store indexes): one call for a partition's triggers of a batch. ``tstate``: the next
    trigger (``tstate[0]``) and the size of its gathered input (``tstate[1]``, 0 before the
    gather). Returns (fill, number) when every trigger is done (``tstate[0]`` is
    ``len(tixs)``) or when the arrays are full, or with ``fold`` the counts are to be taken (a
    call with the same state continues): see :func:`enumerate_matches`."""
    k = start.shape[0]
    while tstate[0] < tixs.shape[0]:
        tix = tixs[tstate[0]]
        cand_lo = max(s_ts[tix] - w + 1, lo)
        if tstate[1] == 0:
            m = 0
            if s_ts[tix] >= cand_lo:
                m = gather(s_ts, s_ids, s_bits, head, tix, k, cand_lo, use_ids, ts, ref, six, start, stop)
            if m == 0:
                tstate[0] += 1
                continue
            tstate[1] = m
            state[0] = 0
            state[1] = FRESH
        m = tstate[1]
        fill, number = enumerate_matches(ts[:m], ref[:m], six[:m], start, stop, flags, upper, first, ret_pos,
                                         cand_lo, first_hi, cond, code, consts, sv, sk, vals, stack_p, stack_i, state,
                                         out_match,
                                         out_var, out_pos, out_idx, fill, cap, number, mult, agg)
        if state[1] != DONE:
            return fill, number
        tstate[0] += 1
        tstate[1] = 0
    return fill, number
