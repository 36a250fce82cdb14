"""What a query needs from the stream (``Query.input_types``, ``Query.attributes``): a pipeline
drops the other rows and columns before moving events, so these must never leave one out."""

from __future__ import annotations

from cepagg.lang import compile_query


def test_input_types_are_the_mentioned_types_negated_ones_included():
    q = compile_query("RETURN COUNT(*) PATTERN SEQ(A a, !D, (B b)+, C c) WITHIN 5")
    assert q.input_types == {"A", "B", "C", "D"}


def test_queries_that_count_positions_need_every_event():
    for text in ["RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5 STRATEGY contiguous",
                 "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 3 EVENTS",
                 "RETURN COUNT(*) PATTERN SEQ(A, b, C) WITHIN 5"]:
        assert compile_query(text).input_types is None, text
    q = compile_query("RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5 STRATEGY skip-till-next-match")
    assert q.input_types == {"A", "B"}  # an event of another type can never be the next match


def test_attributes_read_anywhere():
    q = compile_query("RETURN sector, COUNT(*), SUM(b.vol), MAX(a.w) PATTERN SEQ(A a, NOT C c, (B b)+) "
                      "WHERE [company] AND a.x > 1 AND b.price > NEXT(b).price AND c.y = a.z AND region = 'eu' "
                      "GROUP BY sector WITHIN 5",
                      schema={"sector": "str", "vol": "int", "price": "float", "company": "str", "x": "int",
                              "y": "int", "z": "int", "w": "int", "region": "str", "unused": "int"})
    assert q.attributes >= {"sector", "vol", "w", "price", "company", "x", "y", "z", "region"}
    assert "unused" not in q.attributes
