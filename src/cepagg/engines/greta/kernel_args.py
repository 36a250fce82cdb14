"""The named records :func:`._kernels.pos_run` and :func:`._kernels.neg_run` take: the plan, the
graph's arrays, the batch and scratch space.

Named tuples (numba types them field by field), so a kernel reads ``G.sc`` or ``P.TR`` instead of
unpacking a 46-tuple by position; the arrays' own layouts (columns ``ST_*``, ``TR_*``, ``B_*``,
``V_*``, ``R_*``) are the constants of :mod:`._kernels`, the scalars (``pi``, ``sc``) int64 arrays
read as records of its ``PLAN_SCALARS`` and ``STATE_SCALARS``.
"""

from __future__ import annotations

from collections import namedtuple

#: the positive graph's plan (:func:`.layout.build`): scalars ``pi``, state table ``ST``,
#: following states ``fol``, transitions ``TR`` grouped by target (``tr_off``), their derivations
#: ``DER`` (``der_off``), own contributions ``OWN`` (``own_off``), MIN/MAX field flags ``mmin``,
#: and the condition programs (``pg_off``, ``PGC``, ``pg_val``; :mod:`._program`)
PosPlan = namedtuple("PosPlan", "pi ST fol tr_off TR der_off DER own_off OWN mmin pg_off PGC pg_val")

#: the positive graph's state (:class:`.state.PosState`): scalars ``sc``, latest negative starts
#: ``negM``, trailing-negation progress ``gdone``/``grptr``, the ring of start buckets ``B``, and
#: record triples (int, float, min/max): running totals ``T*``, index nodes ``N*`` and leaves
#: ``L*`` (keys ``IDX``), vertices ``V*`` (table ``V``, ranks and condition columns), SLIDE
#: windows ``W*`` (``w_k``), WITHIN totals ``X*``, EMIT values ``A*``, trailing-negation records
#: ``R*`` (``REC``, ``r_bkey``), results ``O*`` (``o_k``) and last emitted values ``last*``
PosArrays = namedtuple("PosArrays", "sc negM gdone grptr B TI TF TM IDX NI NF NM NT LI LF LM LT V v_irank v_col "
                                    "v_colv VI VF VM w_k WI WF WM XI XF XM AI AF AM REC r_bkey RI RF RM o_k OI OF "
                                    "OM lastI lastF lastM")

#: one batch of a partition's events: time, state, position, index query/insert ranks, condition
#: columns, aggregated attributes, and the finished matches of the negative graphs (``neg_*``)
PosBatch = namedtuple("PosBatch", "e_ts e_state e_pos e_qpos e_ipos e_col e_colv e_aint e_aflt e_amm e_aval "
                                  "neg_t neg_ls neg_off neg_used")

#: scratch: one event's records per start bucket (``tI``, ``tF``, ``tM``), limb and program
#: stacks, the bucket slots, and derivation thresholds ``thr``
PosScratch = namedtuple("PosScratch", "tI tF tM tmp sv sk slots thr")

#: a negative sub-pattern's plan (:func:`.layout.build_negative`): scalars ``pi`` (``NEG_PLAN_SCALARS``),
#: start and end state flags, transitions, derivations and condition programs as in ``PosPlan``
NegPlan = namedtuple("NegPlan", "pi st_start st_end tr_off TR der_off DER pg_off PGC pg_val")

#: a negative graph's state (:class:`.state.NegState`): scalars ``sc`` (``NEG_STATE_SCALARS``), latest starts
#: of the child negations ``negM``, vertices ``V3`` (columns ``N3_*``) with their condition
#: columns, and the finished matches found, as (end time ``o_t``, latest start ``o_ls``)
NegArrays = namedtuple("NegArrays", "sc negM V3 v_col v_colv o_t o_ls")

#: one batch of a partition's events for a negative graph, and its child negations' matches
NegBatch = namedtuple("NegBatch", "e_ts e_state e_col e_colv neg_t neg_ls neg_off neg_used")

#: scratch: program stacks and derivation thresholds
NegScratch = namedtuple("NegScratch", "sv sk thr")
