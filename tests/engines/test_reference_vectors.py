"""Worked examples of the papers, and vectors checked by brute force, reproduced by the reference
evaluator.

Each group names its paper; each test its example or figure, or says that the vector was
constructed and checked by brute force (labels such as TV7 only name the vectors). Streams
written ``a1 b2`` mean an A event at time 1 and a B event at time 2 (the papers' convention).
"""

from __future__ import annotations

import pytest

from helpers import events, matches, ms, run, stream

FIG4 = "a1 b2 c2 a3 e3 a4 c5 d6 b7 a8 b9"  # GRETA Figure 4
FIG4_X = dict(x=[5, 10, None, 2, None, 7, None, None, 1, 4, 3])  # synthetic values on GRETA's Figure 4


# ---------------------------------------------------------------------------------------------
# GRETA (Poppe et al., "GRETA: Graph-based Real-time Event Trend Aggregation", PVLDB 11(1), 2017)


@pytest.mark.parametrize("pattern, expected", [
    ("A+", 15),                  # Figure 4(a)
    ("SEQ(A+, B)", 23),          # Figure 4(b)
    ("(SEQ(A+, B))+", 43),       # Figure 4(c), the paper's 43
    ("(SEQ(A+, NOT SEQ(C, NOT E, D), B))+", 13),  # Figure 4(d), nested negation
])
def test_greta_figure4_counts(pattern, expected):
    assert run(f"RETURN COUNT(*) PATTERN {pattern}", stream(FIG4)).rows == [(expected,)]


def test_greta_sliding_windows_figure6():
    # Example 4 / Figure 6: 10 s windows sliding by 3 s; our windows are [k*3, k*3+10):
    # 43 at 0, 13 at 3, 1 at 6
    res = run("RETURN COUNT(*) PATTERN (SEQ(A+, B))+ WITHIN 10 SLIDE 3", stream(FIG4))
    by_start = {r[0]: r[2] for r in res.rows}
    assert by_start[0] == 43 and by_start[3] == 13 and by_start[6] == 1
    assert 9 not in by_start  # window [9, 19) has no trend: no row
    assert all(r[1] - r[0] == 10 for r in res.rows)


@pytest.mark.parametrize("pattern, expected", [
    ("(SEQ(A+, B))+", (43, 100, 454, 4.54, 2, 7, 66, 256, 1, 10)),
])
def test_greta_aggregates_table(pattern, expected):
    # attribute x on the Figure 4 stream (synthetic values, checked by brute force)
    q = (f"RETURN COUNT(*), COUNT(A), SUM(A.x), AVG(A.x), MIN(A.x), MAX(A.x), "
         f"COUNT(B), SUM(B.x), MIN(B.x), MAX(B.x) PATTERN {pattern}")
    (row,) = run(q, stream(FIG4, **FIG4_X)).rows
    assert row == pytest.approx(expected)


@pytest.mark.parametrize("pattern, expected", [
    ("A+", (15, 32, 144, 2, 7, 4.5)),
    ("SEQ(A+, B)", (23, 45, 205, 2, 7, 205 / 45)),
])
def test_greta_aggregates_other_patterns(pattern, expected):
    q = f"RETURN COUNT(*), COUNT(A), SUM(A.x), MIN(A.x), MAX(A.x), AVG(A.x) PATTERN {pattern}"
    (row,) = run(q, stream(FIG4, **FIG4_X)).rows
    assert row == pytest.approx(expected)


PRICES = [10, 2, 9, 8, 7, 1, 6, 5, 4, 3]


def test_greta_price_stream_275():
    # the price stream of Section 2: down-trends under skip-till-any-match
    rows = events([("Stock", i + 1, p) for i, p in enumerate(PRICES)], ["price"])
    q = ("RETURN COUNT(*), COUNT(S), SUM(S.price), AVG(S.price), MIN(S.price), MAX(S.price) "
         "PATTERN Stock S+ WHERE S.price > NEXT(S).price")
    (row,) = run(q, rows).rows
    assert row == pytest.approx((275, 1080, 6974, 6.457407407, 1, 10))


def test_greta_blowup_1023():
    rows = events([("Stock", i + 1, p) for i, p in enumerate(PRICES)], ["price"])
    assert run("RETURN COUNT(*) PATTERN Stock S+", rows).rows == [(1023,)]


def test_greta_q2_like_11_70():
    # a Q2-like SEQ with Kleene and SUM, checked by brute force
    rows = events([("Start", 1, None, None), ("Measurement", 2, 10, 5), ("Measurement", 3, 20, 3),
                   ("Measurement", 4, 15, 4), ("Measurement", 5, 30, 2), ("End", 6, None, None)],
                  ["load", "cpu"])
    q = ("RETURN COUNT(*), COUNT(M), SUM(M.cpu), MIN(M.cpu), MAX(M.cpu) "
         "PATTERN SEQ(Start S, Measurement M+, End E) WHERE M.load < NEXT(M).load")
    assert run(q, rows).rows == [(11, 20, 70, 2, 5)]


def test_greta_grouping_5():
    # Q1-like grouping, checked by brute force: partitions (company, sector), output per sector
    rows = events([("Stock", 1, "X", "T", 10), ("Stock", 2, "Y", "T", 5), ("Stock", 3, "X", "T", 9),
                   ("Stock", 4, "Y", "T", 6)], ["company", "sector", "price"])
    q = ("RETURN sector, COUNT(*) PATTERN Stock S+ WHERE [company, sector] AND S.price > NEXT(S).price "
         "GROUP-BY sector")
    assert run(q, rows).rows == [("T", 5)]
    wrong = "RETURN sector, COUNT(*) PATTERN Stock S+ WHERE S.price > NEXT(S).price GROUP-BY sector"
    assert run(wrong, rows).rows == [("T", 9)]  # partitioning by sector only: the wrong answer


# ---------------------------------------------------------------------------------------------
# A-Seq (Qi, Cao, Ray, Rundensteiner, "Complex Event Analytics: Online Aggregation of Stream
# Sequence Patterns", SIGMOD 2014)


def test_aseq_example1_emit_on_change():
    # Example 1 / Fig. 1: outputs 1, 2, then 0 when a1 expires at 6 (window 5 s, times in seconds)
    q = "PATTERN SEQ(TypeUsername a, TypePassword b, ClickSubmit c) WITHIN 5s EMIT ON CHANGE RETURN COUNT(*)"
    rows = events([("TypeUsername", 1), ("TypePassword", 2), ("ClickSubmit", 3), ("ClickSubmit", 4),
                   ("TypePassword", 6)])
    assert run(q, rows, time_unit="s").rows == [(3, 1), (4, 2), (6, 0)]


def test_aseq_figure2_four():
    assert run("PATTERN SEQ(A, B, C) AGG COUNT", stream("a1 b2 c3 a4 b5 c6")).rows == [(4,)]


def test_aseq_example3_sem():
    # Example 3 / Fig. 6 (stream reconstructed from the figure): W = 7, outputs 2 at d1, 0 at c3
    # (a1 expired), 1 at d2
    q = "PATTERN SEQ(A, B, C, D) WITHIN 7 EMIT ON CHANGE RETURN COUNT(*)"
    s = stream("a1 b2 c3 a4 c5 b6 d7 c8 a9 d10")
    assert run(q, s).rows == [(7, 2), (8, 0), (10, 1)]


def test_aseq_example4_negation():
    # Example 4 / Fig. 7: (A, B, !C, D) counts (a1,b2,d1) and (a2,b2,d1) only
    q = "PATTERN SEQ(A, B, !C, D) AGG COUNT"
    assert run(q, stream("a1 b2 c3 a4 b5 d6")).rows == [(2,)]
    assert run(q, stream("a1 a2 b3 c4 b5 d6")).rows == [(2,)]


def test_aseq_sum_max_counterexample():
    # Section 5: the paper's SUM/MAX sketch gives 111 and 100; the answer is 12 and 10
    s = stream("a1 b2 c3 d4 c5 d6 c7", weight=[None, None, 1, None, 10, None, 100])
    q = "PATTERN SEQ(A, B, C, D) RETURN COUNT(*), SUM(C.weight), MAX(C.weight), AVG(C.weight)"
    assert run(q, s).rows == [(3, 12, 10, 4.0)]


def test_aseq_hpc_partitions():
    # Hashed Prefix Counter (Section 3.4), checked by brute force: (A, B) partitioned by id
    s = stream("a1 a2 b3 b4 b5", id=[1, 2, 1, 2, 1])
    assert run("PATTERN SEQ(A, B) WHERE [id] AGG COUNT", s).rows == [(3,)]
    assert run("PATTERN SEQ(A, B) GROUP BY id RETURN id, COUNT(*)", s).rows == [(1, 2), (2, 1)]
    assert run("PATTERN SEQ(A, B) WHERE A.id = B.id AGG COUNT", s).rows == [(3,)]


def test_aseq_example8_snapshot():
    # Example 8 / Fig. 10 (stream reconstructed from the figure): W = 9, a1 expired at 10, one
    # match (a2,b2,c2,d2,e1)
    q = "PATTERN SEQ(A, B, C, D, E) WITHIN 9 EMIT ON CHANGE RETURN COUNT(*)"
    assert run(q, stream("a1 b2 c3 a4 d5 b6 c7 a8 d9 e10")).rows == [(10, 1)]


def test_aseq_example9_multiconnect():
    # multi-connect as in Example 9 / Fig. 11, checked by brute force: W = 20, 16 at g@13, 0 at g@22
    q = "PATTERN SEQ(A, B, C, D, E, F, G) WITHIN 20 EMIT ON CHANGE RETURN COUNT(*)"
    s = stream("a1 a2 b3 c4 d5 b6 c7 d8 e9 e10 f12 g13 a14 g22")
    # No event arrives at 21 (when a1 leaves the window), so the drop is seen at 22.
    assert run(q, s).rows == [(13, 16), (22, 0)]


def test_aseq_negation_never_increases_count():
    # Section 6's query pair: q2 (with !QQQ) returns at most q1's count
    s = events([("DELL", 1), ("IPIX", 2), ("QQQ", 3), ("AMAT", 4), ("IPIX", 5), ("AMAT", 6)])
    q1 = run("PATTERN SEQ(DELL, IPIX, AMAT) AGG COUNT", s).rows[0][0]
    q2 = run("PATTERN SEQ(DELL, IPIX, !QQQ, AMAT) AGG COUNT", s).rows[0][0]
    assert (q1, q2) == (3, 1)  # QQQ@3 lies between IPIX@2 and both AMATs


# ---------------------------------------------------------------------------------------------
# NEEL (Mo Liu, "Extending Event Sequence Processing: New Models and Optimization Techniques",
# PhD dissertation, WPI, 2012, Ch. 5): its examples and vectors checked by brute force

Q1 = "SEQ(Recycle r, Washing w, ! SEQ(Sharpening s, Disinfection d, Checking c), Operating o)"
NEEL_TYPES = {"r": "Recycle", "w": "Washing", "s": "Sharpening", "d": "Disinfection", "c": "Checking",
              "o": "Operating"}


def neel(text: str) -> list[dict]:
    return [dict(e, type=NEEL_TYPES.get(e["type"].lower(), e["type"])) for e in stream(text)]


def lab(*xs):  # labels use the NEEL type's first letter
    return ms(*xs)


def neel_matches(query: str, text: str) -> set:
    got = matches(f"PATTERN {query}", neel(text))
    return {frozenset(f"{x[0]}{x.lstrip('abcdefghijklmnopqrstuvwxyz')}" for x in m) for m in got}


@pytest.mark.parametrize("name, query, history, expected", [
    ("TV1", "SEQ(Recycle r, Washing w)", "r1 w2 w3", {lab("r1", "w2"), lab("r1", "w3")}),
    ("TV2", "AND(Recycle r, Washing w)", "w1 r2 w3", {lab("r2", "w1"), lab("r2", "w3")}),
    ("TV3", "AND(Recycle r, Washing w, ! Checking c)", "c1 w2 r3", set()),
    ("TV7", Q1, "r1 w5 d6 c16 o20", {lab("r1", "w5", "o20")}),
    ("TV8", Q1, "r1 w2 s3 d4 c5 o6", set()),
    ("TV9", Q1, "r1 w2 s3 c4 d5 o6", {lab("r1", "w2", "o6")}),
    ("TV10", Q1, "r1 w2 s3 o4 d5 c6 o7", {lab("r1", "w2", "o4")}),
    ("TV11", Q1, "r1 r2 w3 s4 o5 d6 c7 o8 w9 o10",
     {lab("r1", "w3", "o5"), lab("r2", "w3", "o5"), lab("r1", "w9", "o10"), lab("r2", "w9", "o10")}),
    ("TV12", Q1, "r0 w1 c2 s3 d4 c5 o6", set()),
    ("TV13", "SEQ(Recycle r, ! SEQ(Sharpening s, ! (Disinfection d), Checking c), Operating o)",
     "r0 s1 c2 s3 d4 c5 o6", set()),
])
def test_neel_vectors(name, query, history, expected):
    assert neel_matches(query, history) == expected


def test_neel_tv5_double_negation():
    assert matches("PATTERN SEQ(A a, ! SEQ(B b, ! (C c), D d), E e)", stream("a1 b2 d4 c6 d8 e10")) == set()


def test_neel_tv6_stack_example():
    got = matches("PATTERN SEQ(G g, A a, T t)", stream("g1 a5 a6 t15"))
    assert got == {ms("g1", "a5", "t15"), ms("g1", "a6", "t15")}


def test_neel_tv14_last_instance():
    got = matches("PATTERN SEQ(SEQ(C c, O o), ! SEQ(C c2, O o2))", stream("c2 c3 o4 o5"))
    assert got == {ms("c2", "o4"), ms("c2", "o5"), ms("c3", "o4"), ms("c3", "o5")}


def test_neel_tv15_gap_constrained_inner_negation():
    got = matches("PATTERN SEQ(A, SEQ(B, C, !D), E, F)", stream("a0 b1 b2 c3 e4 f5 c6 d7"))
    assert got == {ms("a0", "b1", "c3", "e4", "f5"), ms("a0", "b2", "c3", "e4", "f5")}


def test_neel_tv16_exists_sequence():
    assert matches("PATTERN SEQ(A, EXISTS SEQ(B, C), D)", stream("a1 c2 b3 d4")) == set()
    assert matches("PATTERN SEQ(A, EXISTS SEQ(B, C), D)", stream("a1 b2 c3 d4")) == {ms("a1", "d4")}


@pytest.mark.parametrize("history, expected", [
    ("a1 b2 c3 d4 e5", set()),
    ("a1 c2 b3 d4 c5 e6", {ms("a1", "e6")}),
    ("a1 b2 c3 e4 d5 e6", {ms("a1", "e4")}),
    ("a1 d2 c3 b4 e5", {ms("a1", "e5")}),
])
def test_neel_tv17_negated_sequence(history, expected):
    assert matches("PATTERN SEQ(A, !SEQ(B, C, D), E)", stream(history)) == expected


def test_neel_tv18_q6():
    q = "PATTERN SEQ(E_1, ! SEQ(E_2, E_3), E_4, SEQ(! AND(E_5, E_6), E_7))"
    hist = events([("E_1", 0), ("E_2", 1), ("E_4", 2), ("E_5", 3), ("E_7", 4), ("E_2", 5), ("E_3", 6),
                   ("E_4", 7), ("E_6", 8), ("E_5", 9), ("E_7", 10)])
    res = run(q, hist)
    assert sorted((r[4], r[5]) for r in res.rows) == [("E_1", 0), ("E_4", 2), ("E_7", 4)]


def test_neel_tv19_and_with_booleans():
    assert matches("PATTERN AND(A, B, EXISTS C)", stream("b1 a2 c3 a4")) == {ms("a2", "b1"), ms("a4", "b1")}
    assert matches("PATTERN AND(A, B, !C)", stream("b1 a2 a4")) == {ms("a2", "b1"), ms("a4", "b1")}


def test_neel_tv4_or_with_window():
    # Ex. 20: OR(...)[H_4] read as the window [4, 9) of a 5-unit window sliding by 4
    rows = events([("Checking", 1, "forceps", None), ("Checking", 2, "scalpels", None),
                   ("Checking", 6, "scalpels", None), ("Sharpening", 8, None, 15)], ["insType", "insID"])
    q = ('PATTERN OR(Checking, Sharpening, Checking.insType = "scalpels"; Sharpening.insID = 15) '
         'WITHIN 5 SLIDE 4 RETURN Checking, Sharpening')
    res = run(q, rows)
    in_window_4 = sorted(r[7] for r in res.rows if r[0] == 4)
    assert in_window_4 == [6, 8]


# ---------------------------------------------------------------------------------------------
# The same dissertation's out-of-order chapter (Ch. 3): the final result sets in time order of its
# examples (streams reconstructed, the figures are missing) and of vectors checked by brute force


@pytest.mark.parametrize("name, query, history, expected", [
    ("TV-OOO-1", "SEQ(A, B, !C, D) WITHIN 10", "a3 c5 b6 d10 d17 d8",
     {ms("a3", "b6", "d10"), ms("a3", "b6", "d8")}),
    ("TV-OOO-2", "SEQ(A, !C, B) WITHIN 10", "a3 c5 a7 b11 c9", set()),
    ("TV-OOO-3", "SEQ(A, B, !C, D) WITHIN 10", "a3 c5 b6 a7 d10 b11 f17 b4", {ms("a3", "b6", "d10")}),
    ("TV-OOO-4", "SEQ(B, A, B, D, F) WITHIN 10", "b4 b6 a7 d10 b11 f17", set()),
    ("TV-OOO-6", "SEQ(A, B, !C) WITHIN 10", "a1 b3", {ms("a1", "b3")}),
    ("TV-OOO-6 late c", "SEQ(A, B, !C) WITHIN 10", "a1 b3 c7", set()),
    ("TV-OOO-6 c after window", "SEQ(A, B, !C) WITHIN 10", "a1 b3 c11", {ms("a1", "b3")}),
    ("TV-KSLACK-1", "SEQ(A, B, !C, D) WITHIN 10", "a3 c5 b6 d10 d17 d8",
     {ms("a3", "b6", "d8"), ms("a3", "b6", "d10")}),
])
def test_out_of_order_final_sets(name, query, history, expected):
    # The reference sorts its input: the in-order answer every strategy must converge to.
    assert matches(f"PATTERN {query}", stream(history)) == expected


# ---------------------------------------------------------------------------------------------
# RCEP (Kammoun et al., "All that Incremental is not Efficient: Towards Recomputation Based
# Complex Event Processing for Expensive Queries", EDBT 2018) and condensed composition (Li, Wang,
# Feng, Xue, "Accelerating Sequence Event Detection through Condensed Composition"): their
# examples and vectors checked by brute force

RCEP_Q1 = ("PATTERN SEQ(a, b+, c) WHERE a.price < b.price AND b.price < NEXT(b.price) "
           "AND c.price < FIRST(b.price) WITHIN 30")


def test_rcep_vector_a1_untyped_and_typed():
    rows = events([("T", 1, 10.0), ("T", 2, 11.0), ("T", 3, 12.0), ("T", 4, 13.0), ("T", 5, 11.5)], ["price"])
    assert run(RCEP_Q1 + " AGG COUNT", rows).rows == [(7,)]
    typed = events([("A", 1, 10.0), ("A", 2, 11.0), ("B", 3, 12.0), ("B", 4, 13.0), ("C", 5, 11.5)],
                   ["price"])
    q = ("PATTERN SEQ(A a, B b+, C c) WHERE a.price < b.price AND b.price < NEXT(b.price) "
         "AND c.price < FIRST(b.price) WITHIN 30 AGG COUNT")
    assert run(q, typed).rows == [(6,)]


def test_rcep_vector_a2_next_first_and_eviction():
    ticks = [(1, 10.0), (2, 12.0), (3, 11.0), (4, 13.0), (5, 10.5), (40, 9.0)]
    rows = events([("T", t, p) for t, p in ticks], ["price"])
    assert run(RCEP_Q1 + " AGG COUNT", rows).rows == [(8,)]


def test_rcep_vector_a4_kleene_last():
    rows = events([("T", 1, 50), ("T", 2, 2000), ("T", 3, 3000)], ["amount"])
    q = "PATTERN SEQ(a, b+) WHERE a.amount < 100 AND b.amount > 1000 WITHIN 30 AGG COUNT"
    assert run(q, rows).rows == [(3,)]


CONDENSED_Q1 = ("PATTERN t1; t2; t3 WHERE t1.name = t3.name AND t2.name = 'Google' "
                "AND t1.price >= t2.price + 2.0 AND t3.price < t2.price WITHIN 500 RETURN t1, t2, t3")


def test_condensed_vector_b3():
    rows = events([("Tick", 1, "IBM", 6), ("Tick", 2, "Sun", 7), ("Tick", 3, "IBM", 6), ("Tick", 4, "IBM", 4),
                   ("Tick", 5, "Google", 4), ("Tick", 7, "Google", 4), ("Tick", 8, "IBM", 3)],
                  ["name", "price"])
    got = {frozenset(m) for m in matches(CONDENSED_Q1, rows)}
    assert got == {ms("tick1", "tick5", "tick8"), ms("tick1", "tick7", "tick8"),
                   ms("tick3", "tick5", "tick8"), ms("tick3", "tick7", "tick8")}


def test_condensed_vector_b5_no_overgeneration():
    rows = events([("Tick", 10, "IBM", 7), ("Tick", 12, "Sun", 8), ("Tick", 20, "Google", 4),
                   ("Tick", 30, "IBM", 3), ("Tick", 31, "Sun", 3), ("Tick", 40, "Any", 2)], ["name", "price"])
    q = ("PATTERN t1; t2; t3; t4 WHERE t1.name = t3.name AND t2.name = 'Google' AND "
         "t1.price >= t2.price + 2.0 AND t3.price < t2.price AND t3.price > t4.price WITHIN 500 AGG COUNT")
    assert run(q, rows).rows == [(2,)]


def test_qualified_equivalence_ties_the_events_of_its_variable():
    # [P.vehicle]: every P of a trend shares its vehicle (GRETA Q3); found by the GRETA engine's tests
    rows = events([("P", 1, 1), ("P", 2, 2), ("P", 3, 1)], ["vehicle"])
    assert run("RETURN COUNT(*) PATTERN P+ WHERE [P.vehicle]", rows).rows == [(4,)]
    assert run("RETURN vehicle, COUNT(*) PATTERN P+ GROUP BY P.vehicle", rows).rows == [(1, 3), (2, 1)]
