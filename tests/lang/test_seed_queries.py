"""Every example query of every seed paper parses, and compiles where the semantics supports it.

The table below is the test data. Each case records where the query comes from (seed file, section,
example or line), the query text exactly as the seed prints it (``seed``), and, where the extracted
text is garbled, uses meta-syntax, is only a fragment or a template, the text that is actually
tested (``query``) with a one-line ``normalisation`` note saying what was changed. Cases without a
``query`` are tested verbatim.

Papers, by the number the table gives them: 000 Qi, Cao, Ray, Rundensteiner, "Complex Event
Analytics: Online Aggregation of Stream Sequence Patterns", SIGMOD 2014 (A-Seq); 001 Mo Liu,
"Extending Event Sequence Processing: New Models and Optimization Techniques", PhD dissertation,
WPI, 2012 (ch. 2-4 out-of-order and E-Cube, ch. 5 NEEL, ch. 6-7 integration and future work);
002 Kammoun et al., "All that Incremental is not Efficient: Towards Recomputation Based Complex
Event Processing for Expensive Queries", EDBT 2018 (RCEP); 003 Poppe, Lei, Rundensteiner, Maier,
"GRETA: Graph-based Real-time Event Trend Aggregation", PVLDB 11(1), 2017; 004 Li, Wang, Feng,
Xue, "Accelerating Sequence Event Detection through Condensed Composition".

Outcomes:

* ``refused``: the analyzer deliberately rejects the query; the test asserts the QueryError and a
  fragment of its message (e.g. NEEL's correlated aggregate sub-query, GRETA's ``NOT (P+)``).
* ``gap``: the grammar or analyzer lacks something the seed query needs; the case is marked
  ``xfail(strict=True)`` so it shows up, and turns into a failure once the gap is closed.

When the papers' text files are present (a directory named by the environment variable
``CEPAGG_SEEDS``, :data:`SEEDS`: they are not part of the repository), a test
checks that every ``seed`` text really occurs in its paper (whitespace and markdown code fences
ignored), and that every normalised case needed normalising.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from cepagg.errors import QueryError
from cepagg.lang import ast, compile_query, parse
from cepagg.lang.model import AndP, Atom, BoolOrP, ExistsP, KleeneP, NotP, OrP, SeqP, WindowP

#: the papers' text files (``<paper>_*.txt``), outside the repository
SEEDS = Path(os.environ.get("CEPAGG_SEEDS") or "/nonexistent")


@dataclass(frozen=True)
class Case:
    id: str
    paper: str  # seed file prefix: 000 ... 004
    where: str  # section / example / figure and line(s) in the seed file
    seed: str  # the text exactly as in the seed
    query: str | None = None  # normalised text; None: the seed text itself is tested
    normalisation: str | None = None  # what was changed, one line
    refused: str | None = None  # expected fragment of the analyzer's QueryError message
    gap: tuple[str, str] | None = None  # ("parse" | "compile", reason): xfail strict

    @property
    def text(self) -> str:
        return self.seed if self.query is None else self.query


def _labelled(id_: str, paper: str, where: str, seed: str, extra: str = "") -> Case:
    """A workload line ``q7 = SEQ(...)``: label stripped, PATTERN prepended."""
    label, body = re.fullmatch(r"\s*(\w+)\s*=\s*(.*?)\s*", seed).groups()
    return Case(id_, paper, where, seed, f"PATTERN {body}",
                f"label '{label} =' stripped, PATTERN prepended{extra}")


# ---------------------------------------------------------------------------------------------
# 000 A-Seq

ASEQ = [
    Case("aseq-app1-security", "000", "§1 Application I, lines 35-37",
         "PATTERN <SEQ(TypeUsername,TypePassword,ClickSubmit)> WHERE "
         "<TypePassword.value!=TypeUsername.Password> GROUP BY <IP>\n\n[AGG COUNT] [WITHIN 10s]",
         "PATTERN SEQ(TypeUsername,TypePassword,ClickSubmit) WHERE "
         "TypePassword.value!=TypeUsername.Password GROUP BY IP\n\nAGG COUNT WITHIN 10s",
         "grammar meta-brackets < > and [ ] dropped"),
    Case("aseq-app2-ecommerce", "000", "§1 Application II, lines 43-45",
         "PATTERN <SEQ(Kindle, KindleCase, Stylus)> WHERE <Kindle.userId=KindleCase.userId=Stylus.userId>"
         "\n\n[AGG COUNT] [WITHIN 1hour]",
         "PATTERN SEQ(Kindle, KindleCase, Stylus) WHERE Kindle.userId=KindleCase.userId=Stylus.userId"
         "\n\nAGG COUNT WITHIN 1hour",
         "grammar meta-brackets < > and [ ] dropped"),
    Case("aseq-fig1-stack", "000", "§2.2 Fig. 1 / Example 1, line 128",
         r"Pattern SEQ(TypeUsername a, TypePassword b, ClickSubmit c) WITHIN $5\mathrm{s}$",
         "Pattern SEQ(TypeUsername a, TypePassword b, ClickSubmit c) WITHIN 5s",
         r"LaTeX '$5\mathrm{s}$' read as 5s"),
    Case("aseq-eq1-seq", "000", "§2.1 Eq. 1, line 105", "SEQ(E_1, E_2, ..., E_n)",
         "PATTERN SEQ(E_1, E_2, E_3)", "template instantiated with n = 3, PATTERN prepended"),
    Case("aseq-eq2-negation", "000", "§2.1 Eq. 2, line 110", "SEQ(E_1,!E_i, E_n)",
         "PATTERN SEQ(E_1,!E_i, E_n)", "formula fragment: PATTERN prepended"),
    Case("aseq-fig2-abc", "000", "§3.1 Fig. 2 (DPC), line 160", "(A,B,C)",
         "PATTERN (A,B,C)", "fragment: PATTERN prepended"),
    Case("aseq-fig4-abcd", "000", "§3.1 Fig. 4 / Example 2, line 219", "(A, B, C, D)",
         "PATTERN (A, B, C, D)", "fragment: PATTERN prepended"),
    Case("aseq-neg-kindle", "000", "§3.3 negation example p_n, line 322",
         "$p_n = (VK, BK, !REC, VC, BC)$", "PATTERN (VK, BK, !REC, VC, BC)",
         "math delimiters and label 'p_n =' dropped, PATTERN prepended"),
    Case("aseq-fig7-negation", "000", "§3.3 Example 4 / Fig. 7, line 347", "(A, B, !C, D)",
         "PATTERN (A, B, !C, D)", "fragment: PATTERN prepended"),
    Case("aseq-ex8-snapshot", "000", "§4.2 Example 8, line 435", "#(A.B,C,D,E)",
         "PATTERN (A,B,C,D,E)", "count sign '#' dropped, extraction typo 'A.B' read as 'A,B'"),
    Case("aseq-cc-abcdefg", "000", "§4.2 multi-connect, line 447", "(A, B, C, D, E, F, G)",
         "PATTERN (A, B, C, D, E, F, G)", "fragment: PATTERN prepended"),
    Case("aseq-cc-sub2", "000", "§4.2 multi-connect sub_2, line 447", "$sub_2 = (D, E)$",
         "PATTERN (D, E)", "math delimiters and label dropped, PATTERN prepended"),
    Case("aseq-sum-weight", "000", "§5 SUM/AVG/MAX/MIN, line 467",
         r"for all sequence matches of pattern (A,B,C,D), we want the SUM value on event type "
         r"$C\cdot_{weight}$",
         "PATTERN (A,B,C,D) AGG SUM(C.weight)",
         "prose only: AGG clause written in the §2.1 grammar ($C\\cdot_{weight}$ is C.weight)"),
    _labelled("aseq-ex6-q1", "000", "§4.1 Example 6 workload, line 375",
              "Q1 = SEQ(VKindle, BKindle, VCase, BCase)"),
    _labelled("aseq-ex6-q2", "000", "§4.1 Example 6 workload, line 376",
              "Q2 = SEQ(VKindle, BKindle, VKindleFire)"),
    _labelled("aseq-ex6-q3", "000", "§4.1 Example 6 workload, line 377",
              "Q3 = SEQ(VKindle, BKindle, VCase, BCase, VeBook, BeBook)"),
    _labelled("aseq-ex6-q4", "000", "§4.1 Example 6 workload, line 378",
              "Q4 = SEQ(VKindle, BKindle, VCase, BCase, VLight, BLight)"),
    _labelled("aseq-ex6-q5", "000", "§4.1 Example 6 workload, line 379",
              "Q5 = SEQ(Vipad, VKindleFire, VKindle, BKindle)"),
    _labelled("aseq-exp-q1", "000", "§6.2 negation experiment, line 500", "q1 = (DELL, IPIX, AMAT)"),
    _labelled("aseq-exp-q2", "000", "§6.2 negation experiment, line 501",
              "q2 = (DELL, IPIX, !QQQ, AMAT)"),
]

# ---------------------------------------------------------------------------------------------
# 001 Liu dissertation, ch. 2-4 (basics, out-of-order, E-Cube) and ch. 6-7

LIU = [
    Case("liu-ch2-seq", "001", "§2.2 operators, line 348", "SEQ(A a, B b)",
         "PATTERN SEQ(A a, B b)", "fragment: PATTERN prepended"),
    Case("liu-ch2-and", "001", "§2.2 operators, line 348", "AND(A a, B b)",
         "PATTERN AND(A a, B b)", "fragment: PATTERN prepended"),
    Case("liu-ch2-or", "001", "§2.2 operators, line 350", "OR(A a, B b)",
         "PATTERN OR(A a, B b)", "fragment: PATTERN prepended"),
    Case("liu-ch2-ex1-q3", "001", "§2.3 Example 1 / Fig. 2.1, line 369",
         "q_3 = SEQ(G g, A a, T t))", "PATTERN SEQ(G g, A a, T t)",
         "label dropped, PATTERN prepended, stray closing parenthesis removed"),
    Case("liu-ch3-shoplifting", "001", "§3.1 motivating example, line 387", "(*S*, !C, E)",
         "PATTERN (S, !C, E)", "markdown emphasis *S* removed, PATTERN prepended"),
    Case("liu-ch3-ex4", "001", "§3.6.1 Example 4, line 546", "SEQ(A, B, !C, D) within 7 mins",
         "PATTERN SEQ(A, B, !C, D) within 7 mins", "PATTERN prepended"),
    Case("liu-ch3-ex5", "001", "§3.6.1 Example 5, line 552", "SEQ(B, A, B, D, F) within 10 mins",
         "PATTERN SEQ(B, A, B, D, F) within 10 mins", "PATTERN prepended"),
    Case("liu-ch3-ex6", "001", "§3.6.1 Example 6 (also Ex. 2, 3), line 601", "SEQ(A, B, !C, D)",
         "PATTERN SEQ(A, B, !C, D)", "PATTERN prepended"),
    Case("liu-ch3-ex7", "001", "§3.6.2 Example 7, line 621", "SEQ(A, !C, B) within 10 mins",
         "PATTERN SEQ(A, !C, B) within 10 mins", "PATTERN prepended"),
    Case("liu-ch3-alg2", "001", "§3.6.1 Algorithm 2 header, line 559",
         'Query Q: "SEQ(E_1, E_2, ..., E_n) within W";',
         "PATTERN SEQ(E_1, E_2, E_3) within 10",
         "label and quotes dropped, PATTERN prepended; template n = 3, W = 10"),
    Case("liu-ch3-alg3", "001", "§3.6.2 Algorithms 3/4 header, line 630",
         'Query "EVENT SEQ(E_1, E_2, ..., E_i, !E_j, E_k, ..., E_n)" within W',
         "PATTERN SEQ(E_1, E_i, !E_j, E_k, E_n) within 10",
         "SASE keyword EVENT read as PATTERN, quotes dropped; ellipses collapsed, W = 10"),
    Case("liu-ch3-mid-negation", "001", "§3.6.1 WinNeg compute, line 597",
         "$SEQ(E_1, E_2, ..., E_i, !NE, E_j, ..., E_n)$",
         "PATTERN SEQ(E_1, E_i, !NE, E_j, E_n)",
         "math delimiters dropped, ellipses collapsed, PATTERN prepended"),
    Case("liu-ch3-end-negation", "001", "§3.6.1 negation at the end, line 599",
         "$SEQ(E_1, E_2,..., E_n, !NE)$", "PATTERN SEQ(E_1, E_2, E_n, !NE)",
         "math delimiters dropped, ellipsis collapsed, PATTERN prepended"),
    Case("ecube-q1", "001", "§4.2 Example 9 (Fig. 4.1 q1), line 814", "$q_1 = SEQ(TX, OK)$",
         "PATTERN SEQ(TX, OK)", "math delimiters and label dropped, PATTERN prepended"),
    Case("ecube-q2", "001", "§4.2 Example 9 (Fig. 4.1 q2), line 814", "$q_2 = SEQ(D, T)$",
         "PATTERN SEQ(D, T)", "math delimiters and label dropped, PATTERN prepended"),
    Case("ecube-q3", "001", "§4.2 Example 9 (Fig. 4.1 q3), line 814", "$q_3 = SEQ(G, A, T)$",
         "PATTERN SEQ(G, A, T)", "math delimiters and label dropped, PATTERN prepended"),
    Case("ecube-q4", "001", "§4.2 Def. 3 text (Fig. 4.1 q4 lost), line 786",
         "q_4 is at a coarser concept level than q_7 , denoted by $q_4 >_c q_7$, as the negative "
         "type D in q_4 is coarser than DBusStation in q_7",
         "PATTERN SEQ(G, !DBusStation, A, T)",
         "Fig. 4.1 lost: q4 reconstructed as in the notes (Def. 3(I) and Example 14)"),
    Case("ecube-q5", "001", "§4.1.1 prose (Fig. 4.1 q5), line 739",
         "starting from the Dallas bus station, traveling through the Tulsa bus station, and "
         "ending in the Tulsa hospital within a 48 hours time window as in q_5",
         "PATTERN SEQ(DBusStation, TBusStation, THospital) WITHIN 48 hours",
         "Fig. 4.1 lost: q5 written from the prose with the Fig. 4.2 type names"),
    Case("ecube-q6", "001", "§4.2 Example 9 (Fig. 4.1 q6), line 814", "$q_6 = SEQ(G, A, D, T)$",
         "PATTERN SEQ(G, A, D, T)", "math delimiters and label dropped, PATTERN prepended"),
    Case("ecube-q7", "001", "§4.2 Example 9 (Fig. 4.1 q7), line 814", "$q_7 = SEQ(G, !D, A, T)$",
         "PATTERN SEQ(G, !D, A, T)", "math delimiters and label dropped, PATTERN prepended"),
    Case("ecube-eq42-qj", "001", "§4.4.1 case I (Eq. 4.2), line 982",
         r"$q_j = \text{SEQ}(E_i, E_j, E_k, E_m, E_n)$",
         "PATTERN SEQ(E_i, E_j, E_k, E_m, E_n)", "LaTeX and label dropped, PATTERN prepended"),
    Case("ecube-eq43-qj", "001", "§4.4.1 case II (Eq. 4.3), line 994",
         r"$q_j = \text{SEQ}(E_m, !$ $E_k, E_n)$",
         "PATTERN SEQ(E_m, ! E_k, E_n)", "LaTeX (split '$ $') and label dropped, PATTERN prepended"),
    Case("ecube-eq45-qi", "001", "§4.4.2 negative concept change, line 1017",
         r"$q_i = \text{SEQ}(E_m, ! E_{k1}, E_n)$",
         "PATTERN SEQ(E_m, ! E_k1, E_n)", "LaTeX and label dropped, PATTERN prepended"),
    Case("ecube-eq45-rhs", "001", "§4.4.2 Eq. 4.5 right-hand side, line 1019",
         r"SEQ(E_m, !E_{k1} \land ...! \land E_{kn}, E_n)",
         "PATTERN SEQ(E_m, !E_k1 ∧ !E_k2, E_n)",
         "LaTeX \\land is ∧; garbled '...! \\land E_{kn}' instantiated with two siblings"),
    Case("ecube-sg-qj", "001", "§4.4.4 specific-to-general, line 1039",
         r"$q_j = \text{SEQ}(E_i, E_m, E_j, E_k)$",
         "PATTERN SEQ(E_i, E_m, E_j, E_k)", "LaTeX and label dropped, PATTERN prepended"),
    Case("liu-ch6-revision", "001", "§6 E-Cube + aggressive, line 3015",
         "$q_j = SEQ(A, B, C, D, C)$ E)", "PATTERN SEQ(A, B, C, D, E)",
         "extraction garble 'D, C)$ E)' read as 'D, E)' (the prose joins with D and E)"),
    Case("liu-ch6-shared-neg-1", "001", "§6 nested + out-of-order, line 3021", "SEQ(A, !B, C, D)",
         "PATTERN SEQ(A, !B, C, D)", "fragment: PATTERN prepended"),
    Case("liu-ch6-shared-neg-2", "001", "§6 nested + out-of-order, line 3021", "SEQ(A, C, !E, D)",
         "PATTERN SEQ(A, C, !E, D)", "fragment: PATTERN prepended"),
    Case("liu-ch6-ecube-nested", "001", "§6 E-Cube + nested, line 3025",
         r"$q_i = \text{SEQ}(A, B, D)$ OR SEQ(A, b, D) OR SEQ(A, b, D, \exists E)",
         "PATTERN SEQ(A, B, D) OR SEQ(A, `b`, D) OR SEQ(A, `b`, D, ∃E)",
         "LaTeX and label dropped; the finer concept type b back-quoted (bare b is an untyped variable)"),
    Case("liu-ch7-slice", "001", "§7.2.2 state-slice, line 3057",
         r"$q_j = \text{SEQ}(E_i, E_j, E_k)$ with window size w_j",
         "PATTERN SEQ(E_i, E_j, E_k) WITHIN 10", "LaTeX and label dropped; window w_j = 10"),
    Case("liu-ch7-pipelining", "001", "§7.2.3 pipelining, line 3075",
         r"$q_j = \text{SEQ}(B, C)$", "PATTERN SEQ(B, C)", "LaTeX and label dropped"),
    Case("liu-ch7-query1", "001", "§7.2.4 join predicates on negation, line 3079",
         r"query1 = SEQ((A x), !(B y), (C z), (x.f \leq y.f) \land (y.f \leq z.f))",
         "PATTERN SEQ((A x), !(B y), (C z), (x.f <= y.f) ∧ (y.f <= z.f))",
         "label dropped, PATTERN prepended, LaTeX \\leq is <=, \\land is ∧"),
    Case("liu-ch7-query2", "001", "§7.2.4 join predicates on negation, line 3079",
         r"query2 = SEQ((A x), !(B y), (C z), (x.f \leq y.f) \land (y.f \leq z.f) \land (x.f \leq z.f))",
         "PATTERN SEQ((A x), !(B y), (C z), (x.f <= y.f) ∧ (y.f <= z.f) ∧ (x.f <= z.f))",
         "label dropped, PATTERN prepended, LaTeX \\leq is <=, \\land is ∧"),
    Case("liu-ch7-forall", "001", "§7.2.10 double negation (future work), line 3107",
         "! SEQ(A, !B, C)", "PATTERN ! SEQ(A, !B, C)", "fragment: PATTERN prepended",
         refused="Negation with nothing around it"),
]

_ECUBE_WORKLOADS = [  # (workload, line, seed line)
    (1, 1144, "q1 = SEQ(INTC, ! MSFT, FCF)"),
    (1, 1145, "q2 = SEQ(INTC, ! MSFT, FCF, ROM)"),
    (1, 1146, "q3 = SEQ(INTC, ! MSFT, FCF, EFC)"),
    (1, 1147, "q4 = SEQ(INTC, ! MSFT, FCF, ANAT)"),
    (1, 1148, "q5 = SEQ(INTC, ! MSFT, FCF, OREL)"),
    (2, 1150, "q6 = SEQ(DELL, INTC, ! MSFT, FCF)"),
    (2, 1151, "q7 = SEQ(DELL, INTC, ! MSFT, FCF, ROM)"),
    (2, 1152, "q8 = SEQ(DELL, INTC, ! MSFT, FCF, OREL)"),
    (2, 1153, "q9 = SEQ(DELL, INTC, ! MSFT, FCF, ANAT)"),
    (2, 1154, "q10= SEQ(DELL, INTC, ! MSFT, FCF, QQQ)"),
    (3, 1156, "q11 = SEQ(QQQ, DELL, INTC, ! MSFT, FCF)"),
    (3, 1157, "q12 = SEQ(QQQ, DELL, INTC, ! MSFT, FCF, ROM)"),
    (3, 1158, "q13 = SEQ(QQQ, DELL, INTC, ! MSFT, FCF, ANAT)"),
    (3, 1159, "q14 = SEQ(QQQ, DELL, INTC, ! MSFT, FCF, OREL)"),
    (3, 1160, "q15 = SEQ(QQQ, DELL, INTC, ! MSFT, FCF, EFC)"),
    (4, 1172, "q16 = SEQ(Computer, Finance, Education)"),  # also in workloads 5-8
    (4, 1173, "q17 = SEQ(Computer, Finance, EFC)"),
    (5, 1177, "q18 = SEQ(Computer, QQQ, EFC)"),
    (6, 1181, "q19 = SEQ(Computer, QQQ, EFC)"),
    (7, 1189, "q20 = SEQ(DELL, QQQ, ANAT)"),
    (7, 1190, "q21 = SEQ(DELL, QQQ, ANAT, RCM)"),
    (7, 1191, "q22 = SEQ(FCF, DELL, QQQ, ANAT)"),
    (7, 1192, "q23 = SEQ(DELL, QQQ, ANAT, OREL)"),
    (7, 1193, "q24 = SEQ(DELL, QQQ, ANAT, INTC)"),
    (7, 1194, "q25 = SEQ(DELL, QQQ, ANAT, INTC, EFC)"),
    (7, 1196, "q26 = SEQ(Computer, Finance, ANAT)"),
    (7, 1197, "q27 = SEQ(DELL, Finance, ANAT)"),
    (7, 1198, "q28 = SEQ(QQQ, DELL, Finance, ANAT)"),
    (8, 1202, "q29 = SEQ(Computer, Finance, OREL)"),
    (8, 1203, "q30 = SEQ(INTC, QQQ, Education)"),
    (8, 1204, "q31 = SEQ(INTC, QQQ, EFC)"),
    (8, 1210, "q32 = SEQ(MSFT, INTC, QQQ, EFC)"),  # printed under a misplaced "Workload 7:" label
    (8, 1211, "q33 = SEQ(INTC, QQQ, EFC, DELL)"),
    (8, 1212, "q34 = SEQ(Computer, RCM, Education)"),
    (8, 1213, "q35 = SEQ(Computer, RCM, ANAT)"),
    (8, 1214, "q36 = SEQ(INTC, RCM, ANAT)"),
]
ECUBE_WORKLOADS = [
    _labelled(f"ecube-w{w}-{line.split('=')[0].strip()}", "001",
              f"§4.6 Workload {w}, line {n}", line)
    for w, n, line in _ECUBE_WORKLOADS
]

# ---------------------------------------------------------------------------------------------
# 001 Liu dissertation, ch. 5 NEEL

NEEL = [
    Case("neel-q1", "001", "§5.1 Q1 (Fig. 5.1 lost; text of Example 29), line 2395",
         "$Q_1 = SEQ(Recycle, Washing, ! SEQ(Sharpening, Disinfection, Checking), Operating)",
         "PATTERN SEQ(Recycle, Washing, ! SEQ(Sharpening, Disinfection, Checking), Operating)",
         "math delimiter and label dropped, PATTERN prepended"),
    Case("neel-q2", "001", "§5.1.1 nested boolean expressions, lines 1374-1378",
         "Q2 = PATTERN SEQ(Recycle r, Washing w,\n```\n\n! SEQ(Sharpening s, ! Disinfection d, "
         "Checking c),\nOperating o)",
         "PATTERN SEQ(Recycle r, Washing w,\n    ! SEQ(Sharpening s, ! Disinfection d, Checking c),\n"
         "    Operating o)",
         "label dropped, markdown code fence inside the query removed"),
    Case("neel-join-ambiguity", "001", "§5.1.1 predicate specification, line 1380",
         "Q = PATTERN SEQ(Recycle r, ! Washing w, Operating o, r.attr1 + w.attr1 = o.attr1)",
         "PATTERN SEQ(Recycle r, ! Washing w, Operating o, r.attr1 + w.attr1 = o.attr1)",
         "label 'Q =' dropped"),
    Case("neel-multiple-negation", "001", "§5.1.2 Def. 14 discussion, line 1442",
         r"$SEQ(Washing\ w, !\ (Sharpening\ s,\ s.id=1)$, Disinfection d, ! (Checking c, c.id=2))",
         "PATTERN SEQ(Washing w, ! (Sharpening s, s.id=1), Disinfection d, ! (Checking c, c.id=2))",
         "LaTeX escapes and misplaced '$' dropped, PATTERN prepended"),
    Case("neel-ex17-seq", "001", "§5.1.2 Example 17, line 1417", "SEQ(Recycle r, Washing w)",
         "PATTERN SEQ(Recycle r, Washing w)", "fragment: PATTERN prepended"),
    Case("neel-ex18-and", "001", "§5.1.2 Example 18, line 1468", "AND(Recycle r, Washing w)",
         "PATTERN AND(Recycle r, Washing w)", "fragment: PATTERN prepended"),
    Case("neel-ex19-and-not", "001", "§5.1.2 Example 19, line 1490",
         "AND(Recycle r, Washing w, ! Checking c)",
         "PATTERN AND(Recycle r, Washing w, ! Checking c)", "fragment: PATTERN prepended"),
    Case("neel-ex20-or", "001", "§5.1.2 Example 20, line 1519",
         '$Q_2 = OR(Checking, Sharpening, Checking.insType)$ = "scalpels"; Sharpening.insID = 15)[H₄]',
         'PATTERN OR(Checking, Sharpening, Checking.insType = "scalpels"; Sharpening.insID = 15) WITHIN 4',
         "label dropped, misplaced ')$' removed, history subscript [H₄] read as WITHIN 4"),
    Case("neel-qk-double-negation", "001", "§5.2.2 Lcons restriction 3, line 1650",
         "qk = SEQ(A a, ! SEQ(B b, ! (C c), D d), E e)",
         "PATTERN SEQ(A a, ! SEQ(B b, ! (C c), D d), E e)", "label dropped, PATTERN prepended"),
    Case("neel-fr2-inner-trailing-neg", "001", "§5.2.3 Rule 2 discussion, line 1730",
         "SEQ(A a, SEQ(B b, C c, !D d), E e, F f)",
         "PATTERN SEQ(A a, SEQ(B b, C c, !D d), E e, F f)", "fragment: PATTERN prepended"),
    Case("neel-fr2-outer-leading-neg", "001", "§5.2.3 Rule 2 discussion, line 1730",
         "SEQ(A a, SEQ(B b, C c, D d), ! E e, F f)",
         "PATTERN SEQ(A a, SEQ(B b, C c, D d), ! E e, F f)", "fragment: PATTERN prepended"),
    Case("neel-ex21-q4", "001", "§5.2.5 Example 21, line 2075",
         r"$Q_4 = SEQ(Recycle\ r,\ !\ SEQ(Sharpening\ s,\ !\ (Disinfection\ d),\ Checking\ c),"
         r"\ Operating\ o).$",
         "PATTERN SEQ(Recycle r, ! SEQ(Sharpening s, ! (Disinfection d), Checking c), Operating o)",
         "LaTeX escapes, label and final '.' dropped, PATTERN prepended"),
    Case("neel-ex21-q4-prime", "001", "§5.2.5 Example 21 (NPDR1 applied), line 2075",
         r"$Q_4' = SEQ(Recycle\ r,\ !\ (Checking\ c)\ \lor\ \exists\ SEQ(!\ SEQ(Sharpening\ s,\ !\ "
         r"(Disinfection\ d)),\ Checking\ c,\ !\ (Checking\ c),\ Operating\ o).$",
         "PATTERN SEQ(Recycle r, ! (Checking c) ∨ ∃ SEQ(! SEQ(Sharpening s, ! (Disinfection d)), "
         "Checking c, ! (Checking c)), Operating o)",
         "LaTeX escapes and label dropped; the ')' closing the ∃SEQ, missing in the seed, restored "
         "before ', Operating o'"),
    Case("neel-ex22-last", "001", "§5.2.5 Example 22, line 2077", "SEQ(E_i e_{i1} , ! E_i e_{i2})",
         "PATTERN SEQ(E_i e_i1, ! E_i e_i2)", "LaTeX subscripts flattened, PATTERN prepended"),
    Case("neel-ex23-dnf", "001", "§5.2.6 Example 23, line 2203",
         r"$q = SEQ(Recycle \ r, Washing \ w) OR SEQ(Recycle \ r, \exists Washing \ w, Sharpening) "
         r"OR SEQ(Recycle \ r, ! Washing \ w, Sharpening \ s)",
         "PATTERN SEQ(Recycle r, Washing w) OR SEQ(Recycle r, ∃Washing w, Sharpening) "
         "OR SEQ(Recycle r, ! Washing w, Sharpening s)",
         "LaTeX escapes and label dropped, \\exists is ∃, PATTERN prepended"),
    Case("neel-ex24-cnf", "001", "§5.2.6 Example 24, line 2207",
         r"$q = SEQ(Recycle \ r, \ Washing \ w) \ AND \ SEQ(Recycle \ r, \ \exists \ Washing \ w, "
         r"\ Sharpening) \ AND \ SEQ(Recycle \ r, \ ! \ Washing \ w, \ Sharpening)",
         "PATTERN SEQ(Recycle r, Washing w) AND SEQ(Recycle r, ∃ Washing w, Sharpening) "
         "AND SEQ(Recycle r, ! Washing w, Sharpening)",
         "LaTeX escapes and label dropped, \\exists is ∃, PATTERN prepended",
         # A repeated alias in AND conjuncts would have to mean one event (a join); cepagg keeps
         # aliases unique outside OR alternatives and says so (docs/semantics.md §3).
         refused="Variable 'r' is declared twice."),
    Case("neel-ex25-q6", "001", "§5.2.7 Example 25, line 2225",
         "$Q_6 = SEQ(E_1, ! SEQ(E_2, E_3), E_4, SEQ(! AND(E_5, E_6), E_7))$",
         "PATTERN SEQ(E_1, ! SEQ(E_2, E_3), E_4, SEQ(! AND(E_5, E_6), E_7))",
         "math delimiters and label dropped, PATTERN prepended"),
    Case("neel-ex25-step1", "001", "§5.2.7 Example 25 step 1, line 2227",
         "$Q_6 = SEQ(E_1, ! SEQ(E_2, E_3), E_4, ! AND(E_5, E_6), E_7)$",
         "PATTERN SEQ(E_1, ! SEQ(E_2, E_3), E_4, ! AND(E_5, E_6), E_7)",
         "math delimiters and label dropped, PATTERN prepended"),
    Case("neel-ex25-step2-1", "001", "§5.2.7 Example 25 step 2.1, line 2228",
         r"$Q_6 = SEQ(E_1, ! SEQ(E_2, E_3), E_4, ! E_5 \lor ! E_6, E_7);$",
         "PATTERN SEQ(E_1, ! SEQ(E_2, E_3), E_4, ! E_5 ∨ ! E_6, E_7)",
         "math delimiters, label and ';' dropped, \\lor is ∨, PATTERN prepended"),
    Case("neel-ex25-step2-2", "001", "§5.2.7 Example 25 step 2.2, line 2229",
         r"$Q_6 = SEQ(E_1, !E_2 \lor \exists SEQ(!E_2, E_2, !E_3), E_4, !E_5 \lor !E_6, E_7);$",
         "PATTERN SEQ(E_1, !E_2 ∨ ∃ SEQ(!E_2, E_2, !E_3), E_4, !E_5 ∨ !E_6, E_7)",
         "math delimiters, label and ';' dropped, \\lor is ∨, \\exists is ∃, PATTERN prepended"),
    Case("neel-ex25-step3", "001", "§5.2.7 Example 25 step 3, lines 2230-2236",
         "$Q_6 = OR(SEQ(E_1, ! E_2, E_4, ! E_5, E_7))$,\n\n$$SEQ(E_1, ! E_2, E_4, ! E_6, E_7),$$\n\n"
         r"$$SEQ(E_1, \exists SEQ(! E_2, E_2, ! E_3), E_4, ! E_5, E_7),$$" "\n\n"
         r"$$SEQ(E_1, \exists SEQ(! E_2, E_2, ! E_3), E_4, ! E_6, E_7));$$",
         "PATTERN OR(SEQ(E_1, ! E_2, E_4, ! E_5, E_7),\n SEQ(E_1, ! E_2, E_4, ! E_6, E_7),\n"
         " SEQ(E_1, ∃ SEQ(! E_2, E_2, ! E_3), E_4, ! E_5, E_7),\n"
         " SEQ(E_1, ∃ SEQ(! E_2, E_2, ! E_3), E_4, ! E_6, E_7))",
         "math delimiters, label and ';' dropped; the ')' that closed OR after the first SEQ moved "
         "to the end; \\exists is ∃"),
    Case("neel-ex25-dnf", "001", "§5.2.7 Example 25 final DNF, lines 2240-2246",
         "$Q_6 = SEQ(E_1, ! E_2, E_4, ! E_5, E_7) OR$\n\n $SEQ(E_1, ! E_2, E_4, ! E_6, E_7) OR$\n\n"
         r" $SEQ(E_1, ! E_2, \exists E_2, ! E_3, E_4, ! E_5, E_7) OR$" "\n\n"
         r" $SEQ(E_1, ! E_2, \exists E_2, ! E_3, E_4, ! E_6, E_7);$",
         "PATTERN SEQ(E_1, ! E_2, E_4, ! E_5, E_7) OR\n SEQ(E_1, ! E_2, E_4, ! E_6, E_7) OR\n"
         " SEQ(E_1, ! E_2, ∃ E_2, ! E_3, E_4, ! E_5, E_7) OR\n"
         " SEQ(E_1, ! E_2, ∃ E_2, ! E_3, E_4, ! E_6, E_7)",
         "math delimiters, label and ';' dropped, \\exists is ∃, PATTERN prepended"),
    Case("neel-ex26-alpha", "001", "§5.2.8 Example 26, line 2310",
         r"$\alpha(SEQ(SEQ(E_1,!AND(E_3,E_4)),AND(E_5,E_6)))$",
         "PATTERN SEQ(SEQ(E_1,!AND(E_3,E_4)),AND(E_5,E_6))",
         "the nesting measure α( ) around the expression dropped, PATTERN prepended"),
    Case("neel-ex27-prefix", "001", "§5.3.1 Example 27, line 2364",
         "$E_1 = SEQ(Recycle, Washing, Sharpening, Disinfection, Checking) OR <math>E_2 = "
         "SEQ(Recycle, Washing, Sharpening, Disinfection, Operating)$",
         "PATTERN SEQ(Recycle, Washing, Sharpening, Disinfection, Checking) OR "
         "SEQ(Recycle, Washing, Sharpening, Disinfection, Operating)",
         "math/HTML markup and labels E_1 =, E_2 = dropped, PATTERN prepended"),
    Case("neel-ex28-suffix", "001", "§5.3.1 Example 28, line 2368",
         "$E_1 = SEQ(Recycle, Washing, Sharpening, Disinfection, Checking) AND <math>E_2 = "
         "SEQ(Operating, Washing, Sharpening, Disinfection, Checking)$",
         "PATTERN SEQ(Recycle, Washing, Sharpening, Disinfection, Checking) AND "
         "SEQ(Operating, Washing, Sharpening, Disinfection, Checking)",
         "math/HTML markup and labels E_1 =, E_2 = dropped, PATTERN prepended"),
    Case("neel-ex29-fig5-5", "001", "§5.3.2 Example 29 / Fig. 5.5, lines 2400-2402",
         "SEQ(Recycle, Washing, ! Checking, Operating) OR\nProj<sub>R, W, O</sub> SEQ(Recycle, "
         "Washing, ! Disinfection, Checking, Operating) OR\nProj<sub>R, W, O</sub>SEQ(Recycle, "
         "Washing, ! Sharpening, Disinfection, Checking, Operating)",
         "PATTERN SEQ(Recycle, Washing, ! Checking, Operating) OR\n SEQ(Recycle, Washing, ! "
         "Disinfection, Checking, Operating) OR\n SEQ(Recycle, Washing, ! Sharpening, "
         "Disinfection, Checking, Operating)",
         "rewriting-internal projection Proj_{R,W,O} dropped (no syntax for it), PATTERN prepended"),
    Case("neel-planfinder-s", "001", "§5.4 Plan-Finder example S, lines 2432-2436",
         "S = SEQ(A, B, B)\n\n5.4. PLAN-FINDER 146\n\nD) OR SEQ(A, B, ! C, D) OR Proj(A, B, D)SEQ(A, "
         "B, ! E, C, D) OR SEQ(A, B, D, E, F) OR SEQ(A, B, D, E, G)",
         "PATTERN SEQ(A, B, D) OR SEQ(A, B, ! C, D) OR SEQ(A, B, ! E, C, D) OR SEQ(A, B, D, E, F) "
         "OR SEQ(A, B, D, E, G)",
         "page break 'SEQ(A, B, B) | 5.4. PLAN-FINDER 146 | D)' read as SEQ(A, B, D); label and "
         "Proj(A, B, D) dropped"),
    Case("neel-exp-outer-4", "001", "§5.5 Fig. 5.9 outer query (figure lost), line 2536",
         "SEQ(MSFT, ORCL, IPIX, INTC)", "PATTERN SEQ(MSFT, ORCL, IPIX, INTC)",
         "figures 5.9-5.11 lost: outer/child sub-patterns named in the prose tested alone"),
    Case("neel-exp-outer-3", "001", "§5.5 Figs. 5.10/5.11 outer query (figures lost), line 2553",
         "SEQ(MSFT, ORCL, INTC)", "PATTERN SEQ(MSFT, ORCL, INTC)",
         "figures 5.9-5.11 lost: outer/child sub-patterns named in the prose tested alone"),
    Case("neel-exp-child-rimm-amat", "001", "§5.5 Figs. 5.9-5.11 children, line 2523",
         "SEQ(*RIMM*, *AMAT*)", "PATTERN SEQ(RIMM, AMAT)",
         "markdown emphasis *..* removed, PATTERN prepended (figures lost)"),
    Case("neel-exp-child-yhoo-dell", "001", "§5.5 Fig. 5.9 children, line 2523",
         "SEQ(*YHOO*, *DELL*)", "PATTERN SEQ(YHOO, DELL)",
         "markdown emphasis *..* removed, PATTERN prepended (figures lost)"),
    Case("neel-exp-child-csco-qqq", "001", "§5.5 Fig. 5.9 children, line 2523",
         "SEQ(*CSCO*, *QQQ*)", "PATTERN SEQ(CSCO, QQQ)",
         "markdown emphasis *..* removed, PATTERN prepended (figures lost)"),
    Case("neel-exp-child-len3", "001", "§5.5 Fig. 5.10 children, line 2551",
         "SEQ(*RIMM*, *AMAT*, *YHOO*)", "PATTERN SEQ(RIMM, AMAT, YHOO)",
         "markdown emphasis *..* removed, PATTERN prepended (figures lost)"),
    Case("neel-exp-child-len4", "001", "§5.5 Fig. 5.10 children, line 2551",
         "SEQ(*RIMM*, *AMAT*, *YHOO*, *DELL*)", "PATTERN SEQ(RIMM, AMAT, YHOO, DELL)",
         "markdown emphasis *..* removed, PATTERN prepended (figures lost)"),
    Case("neel-exp-child-ipix-qqq", "001", "§5.5 Fig. 5.11 children, line 2557",
         "SEQ(*IPIX*, *QQQ*)", "PATTERN SEQ(IPIX, QQQ)",
         "markdown emphasis *..* removed, PATTERN prepended (figures lost)"),
    Case("neel-exp-complex", "001", "§5.5 Fig. 5.12 complex workload, line 2572",
         "$E = E_1$ (SEQ(MSFT, ! IPIX, ORCL, INTC)) OR E_2 (SEQ(MSFT, ! QQQ, ORCL, INTC)) OR E_3 "
         "(SEQ(MSFT, ! RIMM, ORCL, INTC)) OR E_4 (SEQ(RIMM, DELL, AMAT, MSFT, ORCL)) OR E_5 "
         "(SEQ(IPIX, DELL, AMAT, MSFT, ORCL)) OR E_6 ($Proj_{CSCO,YHOO,QQQ}$ SEQ(CSCO, ! RIMM, YHOO, "
         "QQQ)) OR E_7 ($Proj_{CSCO,YHOO,QQQ}$ SEQ(CSCO, ! IPIX, RIMM, YHOO, QQQ))",
         "PATTERN SEQ(MSFT, ! IPIX, ORCL, INTC) OR SEQ(MSFT, ! QQQ, ORCL, INTC) OR "
         "SEQ(MSFT, ! RIMM, ORCL, INTC) OR SEQ(RIMM, DELL, AMAT, MSFT, ORCL) OR "
         "SEQ(IPIX, DELL, AMAT, MSFT, ORCL) OR SEQ(CSCO, ! RIMM, YHOO, QQQ) OR "
         "SEQ(CSCO, ! IPIX, RIMM, YHOO, QQQ)",
         "labels 'E =', 'E_i (...)' and Proj_{CSCO,YHOO,QQQ} dropped, PATTERN prepended"),
    # §5.6 decorrelation. The extraction shuffled the labels: the prose calls them Q7 (aggregate),
    # Q8 (nested SEQ, printed "Q10") and Q9 (EXIST, printed "Q11").
    Case("neel-dec-q9-exist", "001", "§5.6 correlated examples, first 'Q9', lines 2739-2744",
         "WITHIN 1 hour\nQ9 = SEQ(R r, S s, T t, t.attr1 > 100, s.attr2 < 50,\n          EXIST (\n"
         "                 SEQ(U u, V v, u.attr3 = s.attr3,\n"
         "                     u.ts > s.ts and v.ts < t.ts)))</pre>\n     WITHIN 1 hour",
         "PATTERN SEQ(R r, S s, T t, t.attr1 > 100, s.attr2 < 50,\n          EXIST (\n"
         "                 SEQ(U u, V v, u.attr3 = s.attr3,\n"
         "                     u.ts > s.ts and v.ts < t.ts)))\n     WITHIN 1 hour",
         "stray leading 'WITHIN 1 hour' (tail of a lost query), label and '</pre>' dropped, "
         "PATTERN prepended"),
    Case("neel-dec-q7-aggregate", "001", "§5.6 aggregate example (Q7, printed 'Q9'), lines 2745-2748",
         "Q9 = SEQ(R r, S s, T t, t.attr1 > 100, t.attr2 >\n          (AGG (Count (*)\n"
         "           SEQ(U u, V v, t.attr5 = u.attr5)))\n     WITHIN 1 hour",
         "PATTERN SEQ(R r, S s, T t, t.attr1 > 100, t.attr2 >\n          (AGG (Count (*)\n"
         "           SEQ(U u, V v, t.attr5 = u.attr5))))\n     WITHIN 1 hour",
         "label dropped, PATTERN prepended, the ')' closing the outer SEQ (missing in the seed) added",
         refused="Aggregate sub-queries inside conditions (NEEL's decorrelation, Liu's dissertation "
                 "Sec. 5.6) are not supported."),
    Case("neel-dec-q8-nested", "001", "§5.6 nested SEQ (Q8, printed 'Q10'), lines 2749-2751",
         "Q10 = SEQ(R r, S s, SEQ(U u, V v, u.attr3 = s.attr3),\n           T t, t.attr1 > 100, "
         "s.attr2 < 50)\n     WITHIN 1 hour",
         "PATTERN SEQ(R r, S s, SEQ(U u, V v, u.attr3 = s.attr3),\n           T t, t.attr1 > 100, "
         "s.attr2 < 50)\n     WITHIN 1 hour",
         "label dropped, PATTERN prepended"),
    Case("neel-dec-q9-exist-within", "001", "§5.6 EXIST with inner window (Q9, printed 'Q11'), "
         "lines 2752-2756",
         "Q11 = SEQ(R r, S s, T t, t.attr1 > 100, s.attr2 < 50,\n          EXIST (SEQ(U u, V v, "
         "u.attr3 = s.attr3,\n                       u.ts > s.ts and v.ts < t.ts)</pre>\n"
         "                  WITHIN 1 hour))\n     WITHIN 1 hour",
         "PATTERN SEQ(R r, S s, T t, t.attr1 > 100, s.attr2 < 50,\n          EXIST (SEQ(U u, V v, "
         "u.attr3 = s.attr3,\n                       u.ts > s.ts and v.ts < t.ts)\n"
         "                  WITHIN 1 hour))\n     WITHIN 1 hour",
         "label and '</pre>' dropped, PATTERN prepended"),
    Case("neel-dec-q12-not-exist", "001", "§5.6 NOT EXIST example 'Q12', lines 2757-2764",
         "Q12 = SEQ(R r, S s, T t, t.attr1 > 100, s.attr2 < 50,\n          NOT EXIST ( SEQ(U u, V v, "
         "u.attr3 = s.attr3,\n                            u.ts > s.ts and v.ts < t.ts)\n```\n\n"
         "WITHIN 1 hour))\n\nWITHIN 1 hour",
         "PATTERN SEQ(R r, S s, T t, t.attr1 > 100, s.attr2 < 50,\n          NOT EXIST ( SEQ(U u, "
         "V v, u.attr3 = s.attr3,\n                            u.ts > s.ts and v.ts < t.ts)\n"
         "WITHIN 1 hour))\nWITHIN 1 hour",
         "label and markdown code fence dropped, PATTERN prepended"),
    Case("neel-ex32-q8", "001", "§5.6 Example 32, line 2909",
         "Q8 = SEQ(R r, S s, SEQ(U u, V v, u.attr3 = s.attr3), T t, t.attr1 > 100, s.attr2 < 50) "
         "WITHIN 1 hour",
         "PATTERN SEQ(R r, S s, SEQ(U u, V v, u.attr3 = s.attr3), T t, t.attr1 > 100, "
         "s.attr2 < 50) WITHIN 1 hour",
         "label dropped, PATTERN prepended"),
    Case("neel-ex33-q9", "001", "§5.6 Example 33, lines 2929-2942",
         "Example 33 Q9 = SEQ(R r, S s, T t, t.attr1 > 100, s.attr2 < 50, EXIST (\n```\n\n\n"
         "Figure 5.46: Push Predicates, Create Magic, DCO, CI Boxes\n\n```\nSEQ(U u, V v, "
         "u.attr3 = s.attr3, u.ts > s.ts\n\nand v.ts < t.ts)\n\nWITHIN 1 hour))\n\nWITHIN 1 hour",
         "PATTERN SEQ(R r, S s, T t, t.attr1 > 100, s.attr2 < 50, EXIST (\nSEQ(U u, V v, "
         "u.attr3 = s.attr3, u.ts > s.ts\nand v.ts < t.ts)\nWITHIN 1 hour))\nWITHIN 1 hour",
         "label, code fences and the interleaved Figure 5.46 caption dropped, PATTERN prepended"),
]

# ---------------------------------------------------------------------------------------------
# 002 RCEP

RCEP = [
    Case("rcep-query1", "002", "§1 Example 1, Query 1, lines 40-46",
         "QUERY 1. PATTERN SEQ (a, b+, c) WHERE [companyID]\n\nAND a.price < b.price AND\n\n"
         "b.price < NEXT(b.price) AND c.price < FIRST(b.price)\n\nWITHIN 30 minutes SLIDE 2 minutes",
         "PATTERN SEQ (a, b+, c) WHERE [companyID]\n\nAND a.price < b.price AND\n\n"
         "b.price < NEXT(b.price) AND c.price < FIRST(b.price)\n\nWITHIN 30 minutes SLIDE 2 minutes",
         "label 'QUERY 1.' dropped"),
    Case("rcep-query-form", "002", "§2.1 CEP query definition, line 79",
         "PATTERN P [WHERE Θ] WITHIN w SLIDE s",
         "PATTERN SEQ(p1, p2+) WITHIN 30 minutes SLIDE 1 minute",
         "template: P = SEQ(p1, p2+), optional [WHERE Θ] omitted, w = 30 minutes, s = 1 minute"),
    Case("rcep-credit-card", "002", "§4 credit-card workload, line 161", "SEQ(a, b+)",
         "PATTERN SEQ(a, b+)", "template only (predicates and window not given): PATTERN prepended"),
]

# ---------------------------------------------------------------------------------------------
# 003 GRETA


def _greta_q1_variant(x: str, op: str) -> Case:
    direction = "increase" if op == "<" else "decrease"
    return Case(
        f"greta-q1-{direction}-x{x}", "003", "§10.1 event queries (Q1 variations), line 505",
        "$S.price * X < NEXT(S).price$",
        f"RETURN sector, COUNT(*) PATTERN Stock S+\n      WHERE [company, sector] AND "
        f"S.price * {x} {op} NEXT(S).price\n      GROUP-BY sector WITHIN 10 minutes SLIDE 10 seconds",
        f"Q1 with its edge predicate replaced by the variation, X = {x}"
        + ("" if op == "<" else ", '>' for the decreasing variant"))


GRETA = [
    Case("greta-q1", "003", "§1 Q1, lines 45-47",
         "Q1 : RETURN sector, COUNT(*) PATTERN Stock S+\n      WHERE [company, sector] AND "
         "S.price > NEXT(S).price\n      GROUP-BY sector WITHIN 10 minutes SLIDE 10 seconds",
         "RETURN sector, COUNT(*) PATTERN Stock S+\n      WHERE [company, sector] AND "
         "S.price > NEXT(S).price\n      GROUP-BY sector WITHIN 10 minutes SLIDE 10 seconds",
         "label 'Q1 :' dropped"),
    Case("greta-q2", "003", "§1 Q2, lines 60-63",
         r" $Q_2$  : RETURN mapper, SUM( $M.cpu$ )" "\n"
         r"      PATTERN SEQ( $Start\ S, Measurement\ M+, End\ E$ )" "\n"
         r"      WHERE  $[job, mapper]$  AND  $M.load < NEXT(M).load$ " "\n"
         "      GROUP-BY mapper WITHIN 1 minute SLIDE 30 seconds",
         "RETURN mapper, SUM(M.cpu)\n      PATTERN SEQ(Start S, Measurement M+, End E)\n"
         "      WHERE [job, mapper] AND M.load < NEXT(M).load\n"
         "      GROUP-BY mapper WITHIN 1 minute SLIDE 30 seconds",
         "label and LaTeX math ($..$, '\\ ') dropped"),
    Case("greta-q3", "003", "§1 Q3, lines 77-81",
         r" $Q_3$  : RETURN segment, COUNT(*), AVG( $P.speed$ )" "\n"
         r"      PATTERN SEQ(NOT Accident  $A, Position\ P+$ )" "\n"
         r"      WHERE  $[P.vehicle, segment]$  AND" "\n"
         r"             $P.speed > NEXT(P).speed$ " "\n"
         "      GROUP-BY segment WITHIN 5 minutes SLIDE 1 minute",
         "RETURN segment, COUNT(*), AVG(P.speed)\n      PATTERN SEQ(NOT Accident A, Position P+)\n"
         "      WHERE [P.vehicle, segment] AND\n             P.speed > NEXT(P).speed\n"
         "      GROUP-BY segment WITHIN 5 minutes SLIDE 1 minute",
         "label and LaTeX math ($..$, '\\ ') dropped"),
    *[_greta_q1_variant(x, op) for op in ("<", ">") for x in ("1", "1.05", "1.1", "1.15", "1.2")],
    Case("greta-q2-variant", "003", "§10.1 event queries (Q2 variations), line 505",
         "$S.price * X < NEXT(S).price$",
         "RETURN mapper, SUM(M.cpu)\n      PATTERN SEQ(Start S, Measurement M+, End E)\n"
         "      WHERE [job, mapper] AND M.load * 1.1 < NEXT(M).load\n"
         "      GROUP-BY mapper WITHIN 1 minute SLIDE 30 seconds",
         "the paper gives the variation for Q1 only; Q2's written by analogy with X = 1.1"),
    Case("greta-q3-variant", "003", "§10.1 event queries (Q3 variations), line 505",
         "$S.price * X < NEXT(S).price$",
         "RETURN segment, COUNT(*), AVG(P.speed)\n      PATTERN SEQ(NOT Accident A, Position P+)\n"
         "      WHERE [P.vehicle, segment] AND P.speed * 1.1 > NEXT(P).speed\n"
         "      GROUP-BY segment WITHIN 5 minutes SLIDE 1 minute",
         "the paper gives the variation for Q1 only; Q3's written by analogy (decreasing, X = 1.1)"),
    Case("greta-aseq-fixed", "003", "§1 related work (A-Seq), line 89", "$SEQ(A, B, C)$",
         "PATTERN SEQ(A, B, C)", "math delimiters dropped, PATTERN prepended"),
    Case("greta-seq-def", "003", "§2 Def. 1 event sequence, line 139", "$SEQ(P_i, P_j)$",
         "PATTERN SEQ(P_i, P_j)", "math delimiters dropped, PATTERN prepended"),
    Case("greta-neg-middle", "003", "§2 Def. 1 negation, line 145", "$SEQ(P_i, NOT N, P_j)$",
         "PATTERN SEQ(P_i, NOT N, P_j)", "math delimiters dropped, PATTERN prepended"),
    Case("greta-neg-suffix", "003", "§5 special case, line 346", "$SEQ(P_i, NOT N)$",
         "PATTERN SEQ(P_i, NOT N)", "math delimiters dropped, PATTERN prepended"),
    Case("greta-neg-prefix", "003", "§5 special case, line 346", "$SEQ(NOT N, P_j)$",
         "PATTERN SEQ(NOT N, P_j)", "math delimiters dropped, PATTERN prepended"),
    Case("greta-not-kleene", "003", "§2 'not useful' nesting, line 151", "NOT  $(P+)$",
         "PATTERN NOT (P+)", "math delimiters dropped, PATTERN prepended",
         refused="Negation with nothing around it"),
    Case("greta-kleene-not", "003", "§2 'not useful' nesting, line 151", "$(NOT P)+$",
         "PATTERN (NOT P)+", "math delimiters dropped, PATTERN prepended",
         refused="Negation with nothing around it"),
    Case("greta-seq-not-not", "003", "§2 consecutive negations, line 151",
         "$SEQ(NOT P_i, NOT P_j)$", "PATTERN SEQ(NOT P_i, NOT P_j)",
         "math delimiters dropped, PATTERN prepended", refused="SEQ needs at least one positive item"),
    Case("greta-not-seq", "003", "§2 consecutive negations, line 151", "NOT  $SEQ(P_i, P_j)$",
         "PATTERN NOT SEQ(P_i, P_j)", "math delimiters dropped, PATTERN prepended",
         refused="Negation with nothing around it"),
    Case("greta-fig3-template", "003", "§4 Fig. 3, line 220", r"$P = (\text{SEQ}(A+, B))+$",
         "PATTERN (SEQ(A+, B))+", "LaTeX and 'P =' dropped, PATTERN prepended"),
    Case("greta-fig4a", "003", "§4 Fig. 4(a), line 297", "$A+$", "PATTERN A+",
         "math delimiters dropped, PATTERN prepended"),
    Case("greta-fig4b", "003", "§4 Fig. 4(b), line 297", "$SEQ(A+, B)$", "PATTERN SEQ(A+, B)",
         "math delimiters dropped, PATTERN prepended"),
    Case("greta-ex1-nested-negation", "003", "§5 Example 1 / Fig. 5, line 352",
         "$(SEQ(A+, NOT SEQ(C, NOT E, D), B))^+$", "PATTERN (SEQ(A+, NOT SEQ(C, NOT E, D), B))+",
         "math delimiters dropped, superscript ^+ is Kleene +, PATTERN prepended"),
    Case("greta-ex4-window", "003", "§6 Example 4 / Fig. 6, line 387",
         r"we count the number of trends matched by the pattern  $(\text{SEQ}(A+, B))+$  within a "
         "10-second-long window that slides every 3 seconds",
         "RETURN COUNT(*) PATTERN (SEQ(A+, B))+ WITHIN 10 seconds SLIDE 3 seconds",
         "prose: COUNT(*), window and slide written as clauses (Fig. 6: 'WINDOW 10 seconds SLIDE 3 "
         "seconds')"),
    Case("greta-ex5-edge", "003", "§6 Example 5 / Fig. 7, line 404", "$A.attr < NEXT(A).attr$",
         "RETURN COUNT(*) PATTERN (SEQ(A+, B))+ WHERE A.attr < NEXT(A).attr",
         "Fig. 7 lost: the edge predicate attached to the running pattern (SEQ(A+, B))+ with COUNT(*)"),
    Case("greta-disjunction", "003", "§7 disjunction, line 464", r"$P_i \vee P_j$",
         "PATTERN P_i ∨ P_j", "LaTeX \\vee is ∨, PATTERN prepended"),
    Case("greta-conjunction", "003", "§7 conjunction, line 466", r"$P_i \wedge P_j$",
         "PATTERN P_i ∧ P_j", "LaTeX \\wedge is ∧, PATTERN prepended"),
    Case("greta-kleene-star", "003", "§7 Kleene star, line 467", r"$\text{SEQ}(P_i^*, P_j)",
         "PATTERN SEQ(P_i*, P_j)", "LaTeX dropped, superscript ^* is '*', PATTERN prepended",
         refused="Kleene star '*' is not supported"),
    Case("greta-kleene-star-sugar", "003", "§7 Kleene star rewrite, line 467",
         r"\text{SEQ}(P_i^+, P_j) \vee P_j",
         "PATTERN SEQ(P_i+, P_j) ∨ P_j", "LaTeX dropped, ^+ is '+', \\vee is ∨, PATTERN prepended"),
    Case("greta-optional", "003", "§7 optional, line 467", r"$\text{SEQ}(P_i^?, P_j)",
         "PATTERN SEQ(P_i?, P_j)", "LaTeX dropped, superscript ^? is '?', PATTERN prepended",
         refused="optional '?' is not supported"),
    Case("greta-optional-sugar", "003", "§7 optional rewrite, line 467",
         r"\text{SEQ}(P_i, P_j) \vee P_j",
         "PATTERN SEQ(P_i, P_j) ∨ P_j", "LaTeX dropped, \\vee is ∨, PATTERN prepended"),
]

# ---------------------------------------------------------------------------------------------
# 004 condensed composition

CONDENSED = [
    # Queries 1 and 1' are printed under a heading line ("Query 1:"); the query itself is verbatim.
    Case("cc-query1", "004", "§I Query 1, lines 18-24",
         "PATTERN T1;T2;T3\nWHERE T1.name=T3.name\nAND T2.name='Google'\n"
         "AND T1.price >= T2.price + 2.0\nAND T3.price < T2.price\nWITHIN 500\nRETURN T1, T2, T3"),
    Case("cc-query1-prime", "004", "§III.C Query 1', lines 122-129",
         "PATTERN T1;T2;T3;T4\nWHERE T1.name=T3.name\nAND T2.name='Google'\n"
         "AND T1.price >= T2.price + 2.0\nAND T3.price < T2.price\nAND T3.price > T4.price\n"
         "WITHIN 500\nRETURN T1, T2, T3, T4"),
    Case("cc-query2", "004", "§IV.A Query 2 (synthetic), lines 208-217",
         "Query 2:\nPATTERN T1;T2;T3;...;Tn\nWHERE T1.price>T2.price AND T1.price>T3.price\n...\n"
         "AND T1.price>Tn.price AND T1.name='name1'\nAND T2.name='name2'a AND T3.name='name3'\n...\n"
         "AND Tn.name='namen'\nWITHIN windowsize\nRETURN T1,T2,T3,...,Tn",
         "PATTERN T1;T2;T3;T4\nWHERE T1.price>T2.price AND T1.price>T3.price\n"
         "AND T1.price>T4.price AND T1.name='name1'\nAND T2.name='name2' AND T3.name='name3'\n"
         "AND T4.name='name4'\nWITHIN 500\nRETURN T1,T2,T3,T4",
         "label dropped; template n = 4 (Fig. 8(a)'s class number), windowsize = 500; typo "
         "'name2'a read as 'name2'"),
    Case("cc-query3", "004", "§IV.B Query 3 (SSE stock data), lines 242-249",
         "Query 3:\nPATTERN T1;T2;T3;T4\nWHERE T1.code=T3.code AND T2.code=T4.code\n"
         "AND T2.code='600210'\nAND T1.price < T2.price-0.02\nAND T3.price > T4.price+0.02\n"
         "WITHIN windowsize\nRETURN T1,T2,T3,T4",
         "PATTERN T1;T2;T3;T4\nWHERE T1.code=T3.code AND T2.code=T4.code\n"
         "AND T2.code='600210'\nAND T1.price < T2.price-0.02\nAND T3.price > T4.price+0.02\n"
         "WITHIN 90 seconds\nRETURN T1,T2,T3,T4",
         "label dropped; windowsize = 90 seconds (the Fig. 8(c) point the text quotes)"),
]

CASES: list[Case] = ASEQ + LIU + ECUBE_WORKLOADS + NEEL + RCEP + GRETA + CONDENSED
BY_ID = {c.id: c for c in CASES}


def _params():
    out = []
    for c in CASES:
        marks = []
        if c.gap is not None:
            marks.append(pytest.mark.xfail(strict=True, raises=QueryError, reason=c.gap[1]))
        out.append(pytest.param(c, id=c.id, marks=marks))
    return out


@functools.cache
def compiled(case_id: str):
    return compile_query(BY_ID[case_id].text)


# ---------------------------------------------------------------------------------------------
# The table itself


def test_table_is_well_formed():
    assert len(CASES) >= 60
    assert len(BY_ID) == len(CASES), "duplicate case ids"
    for c in CASES:
        assert c.paper in {"000", "001", "002", "003", "004"}, c.id
        assert c.where and c.seed.strip(), c.id
        assert (c.query is None) == (c.normalisation is None), f"{c.id}: note iff normalised"
        if c.query is not None:
            assert c.query != c.seed, f"{c.id}: normalisation changes nothing"
            assert "\n" not in c.normalisation, c.id
        assert not (c.refused and c.gap), c.id
        assert c.gap is None or c.gap[0] in ("parse", "compile"), c.id


def _squash(text: str) -> str:
    return " ".join(text.replace("```", " ").split())


@pytest.mark.skipif(not SEEDS.is_dir(), reason="seed texts not available")
def test_seed_texts_are_verbatim():
    """Every ``seed`` text occurs in its seed file (whitespace and code fences ignored)."""
    texts = {}
    for paper in {c.paper for c in CASES}:
        (path,) = SEEDS.glob(f"{paper}_*.txt")
        texts[paper] = _squash(path.read_text(encoding="utf-8"))
    missing = [c.id for c in CASES if _squash(c.seed) not in texts[c.paper]]
    assert not missing


def test_normalised_cases_needed_it():
    """The verbatim text of every normalised case is not a query: no normalisation is gratuitous."""
    parsed = []
    for c in CASES:
        if c.query is None:
            continue
        try:
            parse(c.seed)
        except QueryError:
            continue
        parsed.append(c.id)
    assert not parsed


# ---------------------------------------------------------------------------------------------
# Parsing and compiling every case


def _parse_ok(text: str):
    """parse(), with a syntax error turned into a test failure (not an expected QueryError)."""
    try:
        return parse(text)
    except QueryError as exc:
        raise AssertionError(f"does not parse: {exc}") from None


@pytest.mark.parametrize("case", _params())
def test_seed_query(case):
    """parse() succeeds; compile_query() succeeds, or refuses with the expected message."""
    if case.gap is not None and case.gap[0] == "parse":
        parse(case.text)  # the known gap: raises QueryError
    syntax = _parse_ok(case.text)
    assert syntax.pattern is not None
    if case.refused is not None:
        with pytest.raises(QueryError) as info:
            compile_query(case.text)
        err = info.value
        assert case.refused in err.message
        assert err.line is not None and err.column is not None
        assert "^" in str(err)
        return
    q = compiled(case.id)  # compile_query(case.text), shared with the structural tests below
    assert q.text == case.text and q.variables
    assert any(not v.negated for v in q.variables.values())


# ---------------------------------------------------------------------------------------------
# Structural facts per family


def _nodes(q, cls):
    return [n for n in q.pattern.walk() if isinstance(n, cls)]


def _types(node) -> list[str | None]:
    return [n.type for n in node.walk() if isinstance(n, Atom)]


def test_aseq_application_i_groups_by_ip_and_counts():
    q = compiled("aseq-app1-security")
    assert [g.column for g in q.group_by] == ["IP"] and "IP" in q.partition_by
    assert len(q.aggregates) == 1 and q.aggregates[0].is_count_star
    assert q.aggregates[0].column == "COUNT(*)"  # A-Seq's bare `AGG COUNT`
    assert q.within == 10_000 and q.mode == "total"
    (cond,) = q.conditions
    assert cond.vars == {"TypePassword", "TypeUsername"} and cond.kind == "general"


def test_aseq_application_ii_chained_equality():
    q = compiled("aseq-app2-ecommerce")
    (cond,) = q.conditions
    assert cond.vars == {"Kindle", "KindleCase", "Stylus"}
    assert cond.expr.ops == ("=", "=")
    assert q.within == 3_600_000


def test_aseq_bare_tuple_is_a_sequence_with_negation():
    q1, q2 = compiled("aseq-exp-q1"), compiled("aseq-exp-q2")
    assert isinstance(q1.pattern, SeqP) and not _nodes(q1, NotP)
    assert isinstance(q2.pattern, SeqP)
    items = q2.pattern.items
    assert [type(i) for i in items] == [Atom, Atom, NotP, Atom]
    assert _types(items[2]) == ["QQQ"]
    assert q2.event_types == {"DELL", "IPIX", "QQQ", "AMAT"}


def test_aseq_fig1_aliases_and_window():
    q = compiled("aseq-fig1-stack")
    assert {n: v.type for n, v in q.variables.items()} == {
        "a": "TypeUsername", "b": "TypePassword", "c": "ClickSubmit"}
    assert q.within == 5_000 and q.returns_matches


def test_aseq_sum_aggregates_c_weight():
    (agg,) = compiled("aseq-sum-weight").aggregates
    assert (agg.func, agg.vars, agg.attr) == ("SUM", ("C",), "weight")


def test_liu_example1_typed_aliases():
    q = compiled("liu-ch2-ex1-q3")
    assert {n: v.type for n, v in q.variables.items()} == {"g": "G", "a": "A", "t": "T"}


def test_liu_and_or_operators():
    assert isinstance(compiled("liu-ch2-and").pattern, AndP)
    assert isinstance(compiled("liu-ch2-or").pattern, OrP)
    assert all(v.optional for v in compiled("liu-ch2-or").variables.values())


def test_liu_repeated_type_gives_one_variable_with_two_positions():
    q = compiled("liu-ch3-ex5")
    assert q.variables["B"].atoms and len(q.variables["B"].atoms) == 2
    assert q.within == 10 * 60_000


def test_liu_end_negation_is_last_item():
    q = compiled("liu-ch3-end-negation")
    assert isinstance(q.pattern.items[-1], NotP) and _types(q.pattern.items[-1]) == ["NE"]


def test_ecube_pattern_workloads_negate_msft():
    for c in ECUBE_WORKLOADS[:15]:
        q = compiled(c.id)
        negated = [v for v in q.variables.values() if v.negated]
        assert [v.type for v in negated] == ["MSFT"], c.id
        assert len(_nodes(q, NotP)) == 1, c.id
    for c in ECUBE_WORKLOADS[15:]:
        assert not _nodes(compiled(c.id), NotP), c.id


def test_ecube_quoted_lower_case_concept_type():
    q = compiled("liu-ch6-ecube-nested")
    assert isinstance(q.pattern, OrP) and len(q.pattern.alts) == 3
    assert "b" in (q.event_types or set())
    assert all(v.type is not None for v in q.variables.values())
    assert _nodes(q, ExistsP) and _types(_nodes(q, ExistsP)[0]) == ["E"]


def test_neel_q1_negates_a_sequence():
    q = compiled("neel-q1")
    (neg,) = _nodes(q, NotP)
    assert isinstance(neg.body, SeqP)
    assert _types(neg.body) == ["Sharpening", "Disinfection", "Checking"]


def test_neel_q2_has_a_not_inside_a_not():
    q = compiled("neel-q2")
    outer = [n for n in _nodes(q, NotP) if any(isinstance(m, NotP) for m in n.body.walk())]
    assert len(outer) == 1
    (inner,) = [m for m in outer[0].body.walk() if isinstance(m, NotP)]
    assert _types(inner) == ["Disinfection"]
    assert q.variables["d"].negated and q.variables["s"].negated and not q.variables["w"].negated
    assert q.return_vars == ("r", "w", "o")


def test_neel_join_predicate_belongs_to_the_negation():
    q = compiled("neel-join-ambiguity")
    (cond,) = q.conditions
    assert cond.vars == {"r", "w", "o"}
    assert cond.scope is not None and cond.scope == q.variables["w"].scope


def test_neel_inline_qualifications_are_local_conditions_in_their_scope():
    q = compiled("neel-multiple-negation")
    assert len(_nodes(q, NotP)) == 2
    by_var = {next(iter(c.vars)): c for c in q.conditions}
    assert set(by_var) == {"s", "c"}
    assert all(c.kind == "local" for c in by_var.values())
    assert by_var["s"].scope == q.variables["s"].scope != by_var["c"].scope


def test_neel_ex19_and_with_negation():
    q = compiled("neel-ex19-and-not")
    assert isinstance(q.pattern, AndP)
    assert [type(i) for i in q.pattern.items] == [Atom, Atom, NotP]


def test_neel_ex20_or_with_type_qualified_predicates():
    q = compiled("neel-ex20-or")
    assert isinstance(q.pattern, OrP) and q.within == 4
    assert sorted((c.text, c.kind) for c in q.conditions) == [
        ('Checking.insType = "scalpels"', "local"), ("Sharpening.insID = 15", "local")]


def test_neel_q4_prime_has_a_disjunction_of_booleans():
    q = compiled("neel-ex21-q4-prime")
    (bor,) = _nodes(q, BoolOrP)
    assert [type(a) for a in bor.alts] == [NotP, ExistsP]
    # three declarations of `c`, in three different negation/existence scopes
    assert len([n for n in q.variables if n.split("@")[0] == "c"]) == 3


def test_neel_double_negation_collapses_only_directly():
    q = compiled("neel-dec-q12-not-exist")  # NOT EXIST P is NOT P
    (neg,) = _nodes(q, NotP)
    assert isinstance(neg.body, WindowP) and neg.body.within == 3_600_000
    assert not _nodes(q, ExistsP)
    q = compiled("neel-dec-q9-exist-within")
    (ex,) = _nodes(q, ExistsP)
    assert isinstance(ex.body, WindowP)
    inner = [c for c in q.conditions if c.scope == ex.id]
    assert {frozenset(c.vars) for c in inner} == {
        frozenset({"u", "s"}), frozenset({"v", "t"})}


def test_neel_nested_positive_seq_is_flattened():
    q = compiled("neel-ex32-q8")
    assert isinstance(q.pattern, SeqP)
    assert [a.var for a in q.pattern.items if isinstance(a, Atom)] == ["r", "s", "u", "v", "t"]
    assert q.within == 3_600_000


def test_neel_ex25_rewrites_all_compile_to_distinct_shapes():
    q6 = compiled("neel-ex25-q6")
    assert len(_nodes(q6, AndP)) == 1 and len(_nodes(q6, NotP)) == 2
    step22 = compiled("neel-ex25-step2-2")
    assert len(_nodes(step22, BoolOrP)) == 2
    dnf = compiled("neel-ex25-dnf")
    assert isinstance(dnf.pattern, OrP) and len(dnf.pattern.alts) == 4
    assert len(_nodes(compiled("neel-ex25-step3"), OrP)) == 1


def test_neel_refuses_the_correlated_aggregate_subquery():
    case = BY_ID["neel-dec-q7-aggregate"]
    syntax = parse(case.text)  # parsed ...
    assert any(isinstance(n, ast.AggSubquery) for n in syntax.walk())
    with pytest.raises(QueryError) as info:  # ... then refused, pointing at the sub-query
        compile_query(case.text)
    assert (info.value.line, info.value.column) == (2, 12)
    assert "AGG (Count (*)" in str(info.value)


def test_rcep_query1_untyped_kleene_edge_and_first():
    q = compiled("rcep-query1")
    assert {n: v.type for n, v in q.variables.items()} == {"a": None, "b": None, "c": None}
    assert q.event_types is None
    assert q.variables["b"].kleene is not None and q.variables["a"].kleene is None
    assert q.partition_by == ("companyID",)
    kinds = {c.text: c.kind for c in q.conditions}
    assert kinds == {"a.price < b.price": "general", "b.price < NEXT(b.price)": "edge",
                     "c.price < FIRST(b.price)": "general"}
    edge = next(c for c in q.conditions if c.kind == "edge")
    assert edge.next_var == "b"
    assert (q.within, q.slide, q.mode) == (30 * 60_000, 2 * 60_000, "slide")
    assert q.returns_matches


def test_greta_q1_kleene_variable_with_edge_condition():
    q = compiled("greta-q1")
    assert isinstance(q.pattern, KleeneP)
    s = q.variables["S"]
    assert s.type == "Stock" and s.kleene == q.pattern.id
    (edge,) = q.conditions
    assert edge.kind == "edge" and edge.next_var == "S"
    assert [g.column for g in q.group_by] == ["sector"]
    assert set(q.partition_by) == {"company", "sector"}
    assert q.aggregates[0].is_count_star
    assert q.output_columns == ("sector", "window_start", "window_end", "COUNT(*)")
    assert (q.within, q.slide) == (600_000, 10_000)


def test_greta_q2_sum_over_kleene_measurements():
    q = compiled("greta-q2")
    (agg,) = q.aggregates
    assert (agg.func, agg.vars, agg.attr) == ("SUM", ("M",), "cpu")
    assert q.variables["M"].kleene is not None
    assert q.variables["S"].kleene is None and q.variables["E"].kleene is None
    (edge,) = q.conditions
    assert edge.kind == "edge" and edge.next_var == "M"


def test_greta_q3_leading_negation_and_partial_equivalence():
    q = compiled("greta-q3")
    assert isinstance(q.pattern, SeqP) and isinstance(q.pattern.items[0], NotP)
    assert q.variables["A"].negated and q.variables["A"].type == "Accident"
    assert ("P", "vehicle") in q.equivalences and "segment" in q.partition_by
    assert [a.func for a in q.aggregates] == ["COUNT", "AVG"]


def test_greta_variants_keep_an_arithmetic_edge_condition():
    variants = [c for c in GRETA if c.id.startswith("greta-q1-")]
    assert len(variants) == 10
    for c in variants:
        (edge,) = compiled(c.id).conditions
        assert edge.kind == "edge" and isinstance(edge.expr.operands[0], ast.Arith), c.id


def test_greta_nested_negation_inside_nested_kleene():
    q = compiled("greta-ex1-nested-negation")
    assert isinstance(q.pattern, KleeneP) and isinstance(q.pattern.body, SeqP)
    outer_neg = [n for n in _nodes(q, NotP) if isinstance(n.body, SeqP)]
    assert len(outer_neg) == 1 and len(_nodes(q, NotP)) == 2
    assert q.variables["A"].nested_kleene


def test_condensed_query1_semicolons_and_return():
    q = compiled("cc-query1")
    assert isinstance(q.pattern, SeqP) and _types(q.pattern) == ["T1", "T2", "T3"]
    assert q.return_vars == ("T1", "T2", "T3") and q.within == 500
    kinds = sorted(c.kind for c in q.conditions)
    assert kinds == ["general", "general", "general", "local"]


def test_condensed_query3_window_in_seconds():
    q = compile_query(BY_ID["cc-query3"].text, time_unit="s")
    assert q.within == 90
