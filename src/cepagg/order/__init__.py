"""Out-of-order streams: K-slack, conservative and aggressive evaluation in front of any engine.

>>> from cepagg.lang import compile_query
>>> q = compile_query("PATTERN SEQ(A, !C, B) WITHIN 10")
>>> arrival = Arrival.from_rows([{"type": t, "ts": ts} for t, ts in
...                             [("A", 3), ("C", 5), ("A", 7), ("B", 11), ("C", 9)]])
>>> run = run_ordered(q, arrival, OrderConfig("aggressive", lateness=10))
>>> [(o.kind, o.row[-1]) for o in run.outputs]   # <a7, b11> inserted, then deleted by late c9
[('insert', 7), ('insert', 11), ('delete', 7), ('delete', 11)]
>>> len(run.net())
0

Modules: :mod:`.stream` (arrival sequences, punctuations), :mod:`.disorder` (turning in-order
streams into disordered arrivals), :mod:`.policy` (late events), :mod:`.output` (output rows
and netting), :mod:`.layer` (the strategies), :mod:`.shape` (what the layer needs to know
about a query).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..lang.model import Query
from ..result import Result, output_kinds
from .layer import CLOCKS, STRATEGIES, Layer, LayerState
from .output import Output, net, same_result, to_result
from .policy import POLICIES, LateEventError
from .stream import Arrival, EventItem, Punctuation


@dataclass(frozen=True)
class OrderConfig:
    """A strategy and its parameters (see :class:`~cepagg.order.layer.Layer`)."""

    strategy: str
    slack: int | None = None
    lateness: int | None = None
    clock: str = "key"
    on_late: str = "drop"
    purge: bool = True
    numbers: str = "exact"  # "exact" | "float": the engine's numeric mode (cepagg.engines.base.NUMBERS)

    def build(self, query: Query, schema, engine: str = "auto") -> Layer:
        return Layer(query, self.strategy, schema, engine=engine, slack=self.slack,
                     lateness=self.lateness, clock=self.clock, on_late=self.on_late,
                     purge=self.purge, numbers=self.numbers)

    def __str__(self) -> str:
        if self.strategy == "kslack":
            return f"kslack K={self.slack}"
        if self.strategy == "aggressive":
            return f"aggressive L={'unbounded' if self.lateness is None else self.lateness}"
        return "conservative"


@dataclass
class OrderRun:
    """Everything a run emitted, and what it saw."""

    query: Query
    config: OrderConfig
    outputs: list[Output]
    late_count: int
    late_samples: list
    late_events: list  # with on_late="output"
    stats: dict
    kinds: tuple = ()
    samples: list = field(default_factory=list)  # (at, buffered events, tracked units)

    def net(self) -> Result:
        """The final result after applying every revision/deletion."""
        return net(self.query, self.outputs, self.kinds)

    def table(self) -> Result:
        return to_result(self.query, self.outputs, self.kinds)

    def revisions(self) -> int:
        return sum(1 for o in self.outputs if o.kind in ("revision", "retract")) + \
            len({o.row[_width(self.query)] for o in self.outputs if o.kind == "delete"})


def _width(query: Query) -> int:
    from .shape import Shape

    return Shape(query).width


def run_ordered(query: Query, arrival: Arrival, config: OrderConfig, *, engine: str = "auto",
                tick: int = 1, sample_every: int = 0) -> OrderRun:
    """Feed an arrival sequence through the ordering layer, in this process.

    ``tick``: emit after every ``tick`` items (1: after each event or punctuation).
    ``sample_every``: record the layer's buffered events and tracked units every so many items.
    """
    layer = config.build(query, arrival.events.table.schema, engine)
    st = layer.new_state()
    rows = arrival.rows()
    outputs: list[Output] = []
    late_events: list = []
    samples = []
    n = len(arrival.items)
    for pos, item in enumerate(arrival.items):
        if isinstance(item, Punctuation):
            layer.punctuate(st, item, pos)
        else:
            layer.admit(st, [rows[item.row]], pos)
        if (pos + 1) % tick == 0 or pos == n - 1:
            outputs += layer.tick(st, pos)
            late_events += st.late.drain()
        if sample_every and pos % sample_every == 0:
            samples.append((pos, layer.buffered(st), layer.tracked(st)))
    outputs += layer.finish(st, n)
    late_events += st.late.drain()
    kinds = output_kinds(query, arrival.events.attribute_kinds(), config.numbers)
    stats = dict(st.stats, ignored=st.ignored, lanes=len(st.lanes))
    return OrderRun(query, config, outputs, st.late.count, list(st.late.samples), late_events,
                    stats, kinds, samples)


__all__ = ["Arrival", "CLOCKS", "EventItem", "Layer", "LayerState", "LateEventError", "OrderConfig",
           "OrderRun", "Output", "POLICIES", "Punctuation", "STRATEGIES", "net", "run_ordered",
           "same_result"]
