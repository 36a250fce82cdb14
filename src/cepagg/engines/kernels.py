"""Compiled kernels and their exact pure-Python twins, from one source.

The engines' inner loops (A-Seq: ``aseq/_algebra``, ``windows``, ``_expiry``, ``_kernels``;
GRETA: ``greta/_records``, ``index``, ``_program``, ``_kernels``; rcep: ``rcep/_kernels``; the
condition operations both GRETA and rcep run: ``postfix``) are *kernel modules*: plain
functions over arrays and scalars. Each starts with::

    from .. import kernels
    _TWIN = kernels.is_twin(globals())
    jit = kernels.jit(_TWIN)
    A = kernels.sibling(__name__, "_algebra", _TWIN)   # another kernel module, same flavour

Imported normally, its ``@jit`` functions are compiled by numba and cached on disk beside the
source (``__pycache__``), so a later process -- a Spark worker on the same machine included --
loads machine code instead of compiling. :func:`twin` loads a second copy of the same source
with ``_TWIN = True``: the functions stay Python and call the twins of their siblings. The
engines run the twin on object arrays of Python integers when a value outgrows int64 (A-Seq
first runs a third copy, :func:`wide`, compiled for 128-bit integers), and the tests run the
flavours on the same inputs and require the same outputs.

``CEPAGG_TWINS=1`` in the environment makes every kernel module a twin (slow; for debugging).

Numba checks a cached function against its own source file only, while kernels call functions
of sibling files; :func:`drop_stale` keeps the cache honest across files. The first compilation
in a process says so on stderr (:func:`_announce`); ``cepagg warmup`` compiles everything once.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
import time
from pathlib import Path
from types import ModuleType

#: every kernel module runs as its twin (set ``CEPAGG_TWINS=1``)
TWINS_ONLY = os.environ.get("CEPAGG_TWINS") == "1"

#: the kernel modules of each engine package, in dependency order
PACKAGES = {
    "aseq": ("_algebra", "windows", "_expiry", "_kernels"),
    "greta": ("_records", "index", "_program", "_kernels"),
    "rcep": ("_kernels",),
}
#: modules an engine package's kernels are compiled with that are no kernel modules (A-Seq's
#: numba type of 128-bit integers, whose operations are compiled into its wide kernels)
COMPILED_WITH = {"aseq": ("wide",)}
#: the kernel modules of this package, which the engines' kernels call (``postfix``: the
#: operations of condition programs, GRETA's and rcep's)
SHARED = ("postfix",)

_HERE = Path(__file__).parent
_twins: dict[str, ModuleType] = {}


def is_twin(module_globals: dict) -> bool:
    """Whether the kernel module with these globals is a twin (set by :func:`twin`)."""
    return bool(module_globals.get("_TWIN", TWINS_ONLY))


def jit(twin: bool, inline: bool | str = False, python: bool = True):
    """The decorator for the kernel functions of a module of flavour ``twin``.

    Compiled: ``cache=True`` (machine code on disk), ``nogil``, and no reference counting
    (kernels never allocate; counting costs per array argument of every call). Calls between
    kernels are typed without literal values: numba would otherwise compile a callee once per
    constant argument (``f(x, 0)`` and ``f(x, 1)`` are two compilations) -- LLVM still folds
    the constants where it inlines the callee.

    ``inline``, for the per-event path, where a call (numba's calling convention passes each
    array as a structure of seven words) costs more than the work:

    * ``True``: LLVM inlines the function into its callers (numba's ``forceinline``, the
      ``alwaysinline`` attribute): for small helpers called from many places. Numba types and
      lowers the function once; numba's own ``inline="always"`` would type every copy again in
      each caller, which made GRETA's first query compile 40 s instead of about 22.
    * ``"step"``: numba splices the function into its caller before typing it (numba's
      ``inline="always"``): for a step with one caller (a large step of a loop, or a small one
      above a deep call tree). A function of its own, or one inlined by LLVM, would be
      optimised by LLVM twice: numba optimises each function's module with every function it
      calls linked in, so each level of calls optimises all the code below it again.

    ``python=False``: only kernels call the function, never Python code (nor a test: it calls
    such a function through a compiled caller, ``numba.njit(lambda *a: f(*a))``). Numba then
    builds no CPython wrapper for it, the code that unboxes each argument from a Python object;
    such a function called from Python would crash the process, so its dispatcher refuses the
    call instead (:func:`_kernel_only_class`). No kernel gets numba's C-callable wrapper,
    which only a ``cfunc`` would use, and division by zero follows numpy's rules (no exception
    path compiled at every ``//``: a kernel divides only by sizes and slides, never zero). The
    wrappers and exception paths left out save GRETA's first query about 1.5 s of compiling
    (docs/benchmarks.md, "Cold start").

    Kernels are compiled without bounds checks (numba's default): GRETA's records add and
    copy a block of rows as one run of words indexed past each row's end
    (``_records.add_flat``), which ``NUMBA_BOUNDSCHECK=1`` would refuse with an IndexError,
    and which is right only for C-ordered arrays, the only ones kernels are given (a test
    checks every compiled signature; a check in the kernels made GRETA's first query compile
    6 s longer).

    Code a query cannot run is kept out of its compilation by an argument that is ``None``
    (GRETA's ``pos_run`` variants, A-Seq's ``general``): numba drops the branches behind
    ``x is not None`` before typing them, and the functions called there are not compiled.
    """
    if twin:
        return lambda f: f
    from numba import njit

    options = dict(cache=True, nogil=True, _nrt=False, error_model="numpy", no_cfunc_wrapper=True,
                   no_cpython_wrapper=not python)

    def compile_(f):
        _guard_once(f.__module__)
        if inline == "step":
            dispatcher = njit(forceinline=False, inline="always", **options)(f)
        else:
            # forceinline set either way: a callee would otherwise inherit its caller's
            dispatcher = njit(forceinline=bool(inline), **options)(f)
        _without_literals(dispatcher)
        if not python:
            dispatcher.__class__ = _kernel_only_class(type(dispatcher))
        _listen()
        return dispatcher

    return compile_


_KERNEL_ONLY: dict[type, type] = {}


def _kernel_only_class(base: type) -> type:
    """The class of a dispatcher without a CPython wrapper (:func:`jit`, ``python=False``):
    numba's own dispatcher, whose call from Python refuses instead of running code that has no
    entry for Python objects. Kernels calling it are unaffected (numba types the call, it never
    goes through ``__call__``)."""
    if base not in _KERNEL_ONLY:
        def __call__(self, *args, **kwargs):
            raise TypeError(f"{self.py_func.__module__}.{self.py_func.__qualname__} is called by "
                            "kernels only (compiled without an entry for Python)")

        _KERNEL_ONLY[base] = type("_KernelOnly", (base,), {"__call__": __call__})
    return _KERNEL_ONLY[base]


def _without_literals(dispatcher) -> None:
    from numba.core import types

    typed = dispatcher.get_call_template

    def get_call_template(args, kws):
        return typed(tuple(types.unliteral(a) for a in args), {k: types.unliteral(v) for k, v in kws.items()})

    dispatcher.get_call_template = get_call_template


def twin(module: str) -> ModuleType:
    """The twin of kernel module ``module`` (a full name, e.g. ``cepagg.engines.aseq._kernels``):
    the same source loaded again with ``_TWIN = True``."""
    return _variant(module, "__twin", {"_TWIN": True})


def wide(module: str) -> ModuleType:
    """The wide flavour of kernel module ``module``: the same source loaded again, and compiled,
    with ``_WIDE = True`` (a module reads it with :func:`is_wide`, A-Seq's algebra to check
    overflow against 128 bits). Its siblings are wide too. The engine that uses it compiles it
    for arrays of 128-bit integers (:mod:`.aseq.wide`) when a partition first outgrows int64.

    Numba names its cache files by source file, so the wide functions are cached in the same
    index files as the others, told apart by their argument types: a function whose code
    depends on ``_WIDE`` must take the integer arrays (every one that reads ``LIMIT`` does)."""
    return _variant(module, "__wide", {"_WIDE": True})


def is_wide(module_globals: dict) -> bool:
    """Whether the kernel module with these globals is the wide flavour (set by :func:`wide`)."""
    return bool(module_globals.get("_WIDE", False))


def _variant(module: str, suffix: str, flags: dict) -> ModuleType:
    name = f"{module}{suffix}"
    if name not in _twins:
        spec = importlib.util.find_spec(module)
        assert spec is not None and spec.origin is not None
        copy = importlib.util.spec_from_file_location(name, spec.origin)
        assert copy is not None and copy.loader is not None
        loaded = importlib.util.module_from_spec(copy)
        for k, v in flags.items():
            setattr(loaded, k, v)
        sys.modules[name] = loaded
        _twins[name] = loaded
        try:
            copy.loader.exec_module(loaded)
        except BaseException:
            del _twins[name], sys.modules[name]
            raise
    return _twins[name]


def sibling(caller: str, name: str, twin_: bool) -> ModuleType:
    """Kernel module ``name`` of the caller's package, in the caller's flavour. ``caller`` is
    the caller's ``__name__`` (a twin's name ends in ``__twin``, a wide one's in ``__wide``)."""
    package = caller.rsplit(".", 1)[0]
    full = f"{package}.{name}"
    if caller.endswith("__wide"):
        return wide(full)
    return twin(full) if twin_ else importlib.import_module(full)


def flavour(module: str, twin_: bool) -> ModuleType:
    """Kernel module ``module`` (full name) compiled, or its twin when ``twin_`` (or when every
    kernel runs as a twin)."""
    return twin(module) if (twin_ or TWINS_ONLY) else importlib.import_module(module)


#: the fewest partitions a batch touches for its partitions to run stacked, in one kernel call
#: (A-Seq's ``run_pool``, GRETA's ``pos_run``): below it each runs alone. A-Seq's stacked entry
#: compiles the kernel of one partition again (it calls it, linked in and optimised again by
#: LLVM, about 5 s), so a first query over a few keys does not compile it; GRETA runs a graph
#: alone as a stack of one, so its stacked entry compiles nothing more, and below this many
#: partitions a graph's own arrays save copying it into a stack. Where partitions are many, one
#: call saves a call from Python per partition.
STACK_MIN_PARTITIONS = 64


def stack_batch(partitions: int, stacked: int) -> bool:
    """Whether a batch touching ``partitions`` partitions runs them stacked, ``stacked`` being
    stacked already (then the stacked entry is compiled, and the stack goes on)."""
    return partitions >= STACK_MIN_PARTITIONS or stacked > 0


# ----------------------------------------------------------------------------------------------
# the on-disk cache


def drop_stale(package_dir: Path, names: tuple[str, ...], stamp_name: str, also: tuple[Path, ...] = ()) -> None:
    """Delete the cached kernels of modules ``names`` in ``package_dir`` unless their sources,
    and the files ``also`` (how they are compiled), are unchanged since the stamp
    ``__pycache__/<stamp_name>`` was written.

    Numba checks a cached function against its own file only; a kernel calling a function of a
    sibling file would keep the sibling's old code."""
    sources = b"".join((package_dir / f"{n}.py").read_bytes() for n in names)
    sources += b"".join(p.read_bytes() for p in also)
    digest = hashlib.sha256(sources).hexdigest()
    cache = package_dir / "__pycache__"
    stamp = cache / stamp_name
    try:
        if stamp.read_text() == digest:
            return
    except OSError:
        pass
    try:
        cache.mkdir(exist_ok=True)
        for f in cache.iterdir():
            if f.suffix in (".nbi", ".nbc") and f.name.split(".")[0] in names:
                f.unlink()
        stamp.write_text(digest)
    except OSError:  # a read-only install: numba then does not cache either
        pass


def guard(package: str) -> None:
    """:func:`drop_stale` for engine package ``package`` (a key of :data:`PACKAGES`, or
    ``"engines"`` for the :data:`SHARED` modules, which every package's stamp covers too):
    :func:`jit` calls it once per process, before the package's first kernel can load from the
    cache."""
    if package == "engines":
        drop_stale(_HERE, SHARED, "shared-kernels.sha256", also=(Path(__file__),))
        return
    shared = tuple(_HERE / f"{n}.py" for n in SHARED)
    extra = tuple(_HERE / package / f"{n}.py" for n in COMPILED_WITH.get(package, ()))
    drop_stale(_HERE / package, PACKAGES[package], f"{package}-kernels.sha256",
               also=(Path(__file__), *shared, *extra))


_guarded: set[str] = set()


def _guard_once(module: str) -> None:
    package = module.split(".")[-2]
    if (package in PACKAGES or package == "engines") and package not in _guarded:
        _guarded.add(package)
        guard(package)


def clear_cache(packages: tuple[str, ...] = tuple(PACKAGES)) -> int:
    """Delete every cached kernel of the engines ``packages`` (default all, and the shared kernel
    modules: the state of a fresh install); returns how many files went."""
    gone = 0
    shared = [_HERE / "__pycache__"] if set(packages) == set(PACKAGES) else []
    for cache in [_HERE / package / "__pycache__" for package in packages] + shared:
        if cache.is_dir():
            for f in cache.iterdir():
                if f.suffix in (".nbi", ".nbc") or f.name.endswith("-kernels.sha256"):
                    f.unlink()
                    gone += 1
    return gone


# ----------------------------------------------------------------------------------------------
# saying so when kernels compile

#: seconds the first query of a fresh install compiles, per engine (docs/benchmarks.md, "Cold
#: start")
COMPILE_SECONDS = {"aseq": 14, "greta": 15}
#: seconds A-Seq's wide kernels (:func:`wide`) compile, on the first overflow of int64 in an
#: install (docs/benchmarks.md, A-Seq section E)
WIDE_COMPILE_SECONDS = 17
#: seconds ``cepagg warmup`` compiles (GRETA's queries, the longer, also reach its negative graphs
#: and ordered index; the engines compile in parallel)
WARMUP_SECONDS = 40

_listening = False
_announced: set[str] = set()
_compiled = 0  # kernel compilations begun in this process


def compilations() -> int:
    """How many kernel compilations this process has begun (a benchmark that saw the count move
    while it timed measures again: the compiling is not the engine's speed)."""
    return _compiled


def _listen() -> None:
    global _listening
    if _listening:
        return
    _listening = True
    from numba.core import event

    class _Announcer(event.Listener):
        def on_start(self, ev):
            global _compiled
            _compiled += 1
            _announce(ev.data["dispatcher"].py_func.__module__)

        def on_end(self, ev):
            pass

    event.register("numba:compile", _Announcer())


def _announce(module: str) -> None:
    """One line on stderr the first time a process compiles an engine's kernels."""
    parts = module.split(".")
    if len(parts) < 3 or parts[:2] != ["cepagg", "engines"] or parts[2] not in COMPILE_SECONDS:
        return
    package = parts[2]
    if module.endswith("__wide"):  # not in `cepagg warmup`: only a query whose counts need them
        if f"{package} wide" not in _announced:
            _announced.add(f"{package} wide")
            print(f"cepagg: a partition's counts outgrew 64 bits: compiling the {package} kernels for "
                  f"128-bit integers once per install (~{WIDE_COMPILE_SECONDS} s) ...", file=sys.stderr, flush=True)
        return
    if package in _announced:
        return
    _announced.add(package)
    print(f"cepagg: compiling the {package} kernels once per install (~{COMPILE_SECONDS[package]} s; "
          f"`cepagg warmup` does it ahead) ...", file=sys.stderr, flush=True)


def warm(log=print) -> float:
    """Compile every kernel of both engines into the on-disk cache (or find it there) by running
    small queries; the two engines compile in parallel processes. Returns the seconds taken."""
    import subprocess

    started = time.perf_counter()
    procs = {package: subprocess.Popen([sys.executable, "-c", f"from {__name__} import warm_engine; "
                                        f"warm_engine({package!r})"], stdout=subprocess.PIPE, text=True)
             for package in WARM_QUERIES}
    failed = []
    for package, proc in procs.items():
        out, _ = proc.communicate()
        if proc.returncode:
            failed.append(package)
        else:
            log(f"  {package} kernels ready in {float(out.strip().splitlines()[-1]):.1f} s")
    if failed:
        raise RuntimeError(f"compiling the {', '.join(failed)} kernels failed")
    return time.perf_counter() - started


def warm_engine(package: str) -> None:
    """Run the small queries of engine ``package`` (compiling its kernels); print the seconds."""
    _announced.add(package)  # the caller says what happens
    started = time.perf_counter()
    from ..datasets.stock import generate
    from ..lang import compile_query
    from ..plan import plan

    few, many = 3, 2 * STACK_MIN_PARTITIONS  # companies: partitions alone, and stacked
    inputs = {(tickers, n): generate(n_events=200 if n == few else 4 * n, companies=n, sectors=2, tick_ms=250,
                                     seed=1, ticker_types=tickers)
              for tickers in (False, True) for n in (few, many)}
    for text, tickers, stacked in WARM_QUERIES[package]:
        events = inputs[tickers, many if stacked else few]
        p = plan(compile_query(text, schema=events.attribute_kinds()))
        assert p.engine == package, (p.engine, text)
        p.build().run(events)
    print(f"{time.perf_counter() - started:.2f}")


#: queries whose runs reach the compiled kernels of each engine's common queries, with the
#: argument types of any query (integer and float attributes, windows, an ordered index, a
#: negative graph), as ``(text, ticker types, stacked)``: A-Seq under WITHIN alone (partitions
#: alone, and stacked: a batch over many companies) and with SLIDE (the variant of every mode that
#: writes rows); GRETA's SLIDE and WITHIN-alone variants, alone and stacked. GRETA's variant for
#: EMIT, trailing negation and skip-till-next-match, and float mode, compile on first use.
WARM_QUERIES = {
    "aseq": [("PATTERN SEQ(C0 a, C1 b, !C2, C3 c) WHERE [sector] WITHIN 4 s "
              "RETURN COUNT(*), SUM(c.volume), MAX(b.price)", True, False),
             ("PATTERN SEQ(Stock a, Stock b, Stock c) WHERE [company] WITHIN 4 s "
              "RETURN COUNT(*), SUM(c.volume), MAX(b.price)", False, True),
             ("PATTERN SEQ(C0 a, C1 b, !C2, C3 c) WITHIN 4 s SLIDE 2 s RETURN COUNT(*), SUM(c.volume), MAX(b.price)",
              True, False)],
    "greta": [("""RETURN sector, COUNT(*), AVG(S.price), MAX(S.volume) PATTERN Stock S+
                  WHERE [company, sector] AND S.price > NEXT(S).price
                  GROUP-BY sector WITHIN 10 seconds SLIDE 5 seconds""", False, False),
              ("PATTERN SEQ(C0 A, NOT C2 N, C1 B+) WITHIN 4 seconds RETURN COUNT(*), MAX(B.volume), SUM(B.price)",
               True, False),
              # stacked: no ordered index, negation or sub-partition
              ("""RETURN sector, COUNT(*), AVG(S.price), MAX(S.volume) PATTERN Stock S+
                  WHERE [company, sector] AND S.volume > 100 GROUP-BY sector WITHIN 10 seconds SLIDE 5 seconds""",
               False, True),
              ("RETURN COUNT(*), MAX(S.volume), SUM(S.price) PATTERN Stock S+ WHERE [company] AND S.volume > 100 "
               "WITHIN 4 seconds", False, True)],
}
