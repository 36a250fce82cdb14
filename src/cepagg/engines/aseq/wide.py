"""128-bit integers for the compiled kernels: the numbers of a partition whose counts outgrow int64.

A count of A-Seq grows with the window and the pattern length (``SEQ`` of five types over 10^5
events per window: 68 bits). A partition that overflows int64 goes on in the same compiled
kernels, compiled a second time (on first overflow only) for arrays of two int64 *limbs*:

* :class:`Wide` holds such an array: a numpy ``int64`` array with a last axis of two, the low
  word (its bits, unsigned) and the high word (signed): value = ``hi * 2**64 + (lo mod 2**64)``;
* in numba it is a :class:`WideArrayType` whose elements are :data:`int128` (LLVM's ``i128``):
  ``a[i, j]`` reads a number, ``a[i, j] = x`` writes one, ``a[i]`` or ``a[i, :, ::1]`` is a
  view of the same kind, ``a.shape`` is the shape without the limb axis;
* ``int128`` has ``+ - *``, comparisons, ``float()``, and mixes with integers (widened) and
  floats (converted), so the kernels' source is unchanged: the type of their arrays picks the
  width.

The wide kernels check overflow as the int64 ones do (a float shadow against the flavour's
``LIMIT``, 2**125 there); past it the partition goes on in Python integers (the exact twin).

Importing the module registers its types with numba and compiles nothing; the wide kernels
(:func:`..kernels.wide`) are loaded, and compiled once per install, when a partition first
outgrows int64.
"""

from __future__ import annotations

import operator

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.datamodel import models, register_default
from numba.core.extending import (
    NativeValue,
    intrinsic,
    lower_cast,
    make_attribute_wrapper,
    overload,
    overload_attribute,
    typeof_impl,
    unbox,
)
from numba.core.typeconv import Conversion

I128 = ir.IntType(128)
I64 = ir.IntType(64)
MASK = (1 << 64) - 1


# ----------------------------------------------------------------------------------------------
# Python side


class Wide:
    """A view of a limb array (``int64``, last axis: low word, high word) that the kernels
    take as an array of 128-bit integers."""

    __slots__ = ("a",)

    def __init__(self, a: np.ndarray):
        self.a = a


def limbs_of(a: np.ndarray) -> np.ndarray:
    """An int64 (or object, of Python ints below 2**127 in magnitude) array as limbs."""
    out = np.empty(a.shape + (2,), np.int64)
    if a.dtype == object:
        flat = a.reshape(-1)
        lo = out[..., 0].reshape(-1)
        hi = out[..., 1].reshape(-1)
        for i, v in enumerate(flat.tolist()):
            v = int(v)
            u = v & MASK
            lo[i] = u - (1 << 64) if u >= 1 << 63 else u
            hi[i] = v >> 64
        out[..., 0] = lo.reshape(a.shape)
        out[..., 1] = hi.reshape(a.shape)
        return out
    out[..., 0] = a
    out[..., 1] = a >> 63  # sign extension
    return out


def to_object(w: np.ndarray) -> np.ndarray:
    """Limbs as an object array of Python ints."""
    lo = w[..., 0].view(np.uint64).astype(object)
    hi = w[..., 1].astype(object)
    out = np.empty(w.shape[:-1], object)
    out[...] = hi * (1 << 64) + lo
    return out


def fits_int64(w: np.ndarray, bound: int = 2**61) -> bool:
    """Do the numbers of limb array ``w`` fit int64 with room to grow (below ``bound`` in
    magnitude, or one of int64's extremes: the "no value" of MIN and MAX)?"""
    if not w.size:
        return True
    lo, hi = w[..., 0], w[..., 1]
    small = (lo > -bound) & (lo < bound) | (lo == np.iinfo(np.int64).min) | (lo == np.iinfo(np.int64).max)
    return bool(np.all(hi == (lo >> 63)) and np.all(small))


def fill(w: np.ndarray, value: int) -> None:
    """Every number of limb array ``w`` (a view) set to ``value``."""
    u = value & MASK
    w[..., 0] = u - (1 << 64) if u >= 1 << 63 else u
    w[..., 1] = value >> 64


# ----------------------------------------------------------------------------------------------
# numba: the scalar


class Int128Type(types.Type):
    """A signed 128-bit integer (LLVM ``i128``)."""

    def __init__(self):
        super().__init__(name="int128")

    def can_convert_from(self, typingctx, other):
        if isinstance(other, (types.Integer, types.Boolean)):
            return Conversion.safe
        return None

    def unify(self, typingctx, other):
        if isinstance(other, (types.Integer, types.Boolean, Int128Type)):
            return self
        return None


int128 = Int128Type()


@register_default(Int128Type)
class Int128Model(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, I128)


@lower_cast(types.Integer, Int128Type)
@lower_cast(types.Boolean, Int128Type)
def _widen(context, builder, fromty, toty, val):
    if isinstance(fromty, types.Boolean) or not fromty.signed:
        return builder.zext(val, I128)
    return builder.sext(val, I128)


@intrinsic
def _make(typingctx, lo, hi):
    def codegen(context, builder, sig, args):
        low = builder.zext(args[0], I128)
        high = builder.shl(builder.sext(args[1], I128), ir.Constant(I128, 64))
        return builder.or_(high, low)

    return int128(types.int64, types.int64), codegen


@intrinsic
def _lo(typingctx, x):
    def codegen(context, builder, sig, args):
        return builder.trunc(args[0], I64)

    return types.int64(int128), codegen


@intrinsic
def _hi(typingctx, x):
    def codegen(context, builder, sig, args):
        return builder.trunc(builder.ashr(args[0], ir.Constant(I128, 64)), I64)

    return types.int64(int128), codegen


@intrinsic
def _to128(typingctx, x):
    if isinstance(x, Int128Type):
        return int128(x), lambda context, builder, sig, args: args[0]
    if not isinstance(x, (types.Integer, types.Boolean)):
        return None

    def codegen(context, builder, sig, args):
        return _widen(context, builder, sig.args[0], int128, args[0])

    return int128(x), codegen


def _binary(name, op):
    @intrinsic
    def fn(typingctx, a, b):
        def codegen(context, builder, sig, args):
            return getattr(builder, op)(args[0], args[1])

        return int128(int128, int128), codegen

    fn.__name__ = name
    return fn


_add = _binary("_add", "add")
_sub = _binary("_sub", "sub")
_mul = _binary("_mul", "mul")


def _cmp_intrinsic(pred):
    @intrinsic
    def fn(typingctx, a, b):
        def codegen(context, builder, sig, args):
            return builder.icmp_signed(pred, args[0], args[1])

        return types.boolean(int128, int128), codegen

    return fn


_CMP = {op: _cmp_intrinsic(pred) for op, pred in ((operator.eq, "=="), (operator.ne, "!="), (operator.lt, "<"),
                                                   (operator.le, "<="), (operator.gt, ">"), (operator.ge, ">="))}


@intrinsic
def _float(typingctx, x):
    def codegen(context, builder, sig, args):
        # hi * 2**64 + lo (LLVM's i128 conversion calls a runtime function numba does not link)
        d = ir.DoubleType()
        lo = builder.uitofp(builder.trunc(args[0], I64), d)
        hi = builder.sitofp(builder.trunc(builder.ashr(args[0], ir.Constant(I128, 64)), I64), d)
        return builder.fadd(builder.fmul(hi, ir.Constant(d, 2.0**64)), lo)

    return types.float64(int128), codegen


def _int_like(t) -> bool:
    return isinstance(t, (types.Integer, types.Boolean, Int128Type))


def _involved(a, b) -> bool:
    """A binary operation on an int128 and an int128, integer or float."""
    if not (isinstance(a, Int128Type) or isinstance(b, Int128Type)):
        return False
    return all(_int_like(t) or isinstance(t, types.Float) for t in (a, b))


def _arith(op, wide_fn, float_op):
    @overload(op)
    def ol(a, b):
        if not _involved(a, b):
            return None
        if isinstance(a, types.Float) or isinstance(b, types.Float):  # an int128 meets a float
            return lambda a, b: float_op(_as_float(a), _as_float(b))
        return lambda a, b: wide_fn(_to128(a), _to128(b))


@overload(float)
def _ol_float(x):
    if isinstance(x, Int128Type):
        return lambda x: _float(x)


def _as_float(x):  # pragma: no cover - replaced in compiled code
    return float(x)


@overload(_as_float)
def _ol_as_float(x):
    if isinstance(x, Int128Type):
        return lambda x: _float(x)
    return lambda x: float(x)


_arith(operator.add, _add, operator.add)
_arith(operator.iadd, _add, operator.add)
_arith(operator.sub, _sub, operator.sub)
_arith(operator.isub, _sub, operator.sub)
_arith(operator.mul, _mul, operator.mul)
_arith(operator.imul, _mul, operator.mul)


def _compare(op):
    fn = _CMP[op]

    @overload(op)
    def ol(a, b):
        if not _involved(a, b):
            return None
        if isinstance(a, types.Float) or isinstance(b, types.Float):
            return lambda a, b: op(_as_float(a), _as_float(b))
        return lambda a, b: fn(_to128(a), _to128(b))


for _op in _CMP:
    _compare(_op)


@overload(operator.neg)
def _ol_neg(x):
    if isinstance(x, Int128Type):
        return lambda x: _sub(_to128(0), x)


@overload(abs)
def _ol_abs(x):
    if isinstance(x, Int128Type):
        return lambda x: _sub(_to128(0), x) if _CMP[operator.lt](x, _to128(0)) else x


@overload(operator.truth)
def _ol_truth(x):
    if isinstance(x, Int128Type):
        return lambda x: _CMP[operator.ne](x, _to128(0))


# ----------------------------------------------------------------------------------------------
# numba: the array


class WideArrayType(types.Type):
    """:class:`Wide` in numba: an array of int128 over a limb array of type ``limbs``."""

    def __init__(self, limbs: types.Array):
        self.limbs = limbs
        super().__init__(name=f"wide({limbs})")

    @property
    def ndim(self) -> int:
        return self.limbs.ndim - 1


@register_default(WideArrayType)
class WideArrayModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("a", fe_type.limbs)])


make_attribute_wrapper(WideArrayType, "a", "a")


@typeof_impl.register(Wide)
def _typeof_wide(val, c):
    return WideArrayType(typeof_impl(val.a, c))


@unbox(WideArrayType)
def _unbox_wide(typ, obj, c):
    limbs = c.pyapi.object_getattr_string(obj, "a")
    native = c.unbox(typ.limbs, limbs)
    c.pyapi.decref(limbs)
    w = cgutils.create_struct_proxy(typ)(c.context, c.builder)
    w.a = native.value
    return NativeValue(w._getvalue(), is_error=native.is_error)


@intrinsic
def _wrap(typingctx, limbs):
    if not isinstance(limbs, types.Array):
        return None
    typ = WideArrayType(limbs)

    def codegen(context, builder, sig, args):
        w = cgutils.create_struct_proxy(typ)(context, builder)
        w.a = args[0]
        return w._getvalue()

    return typ(limbs), codegen


@overload_attribute(WideArrayType, "shape")
def _ol_shape(w):
    n = w.ndim
    return lambda w: w.a.shape[:n]


@overload_attribute(WideArrayType, "ndim")
def _ol_ndim(w):
    n = w.ndim
    return lambda w: n


def _index_parts(idx):
    """(number of indexed axes, all integers?) of an index type."""
    if isinstance(idx, types.BaseTuple):
        return len(idx), all(isinstance(t, types.Integer) for t in idx)
    return 1, isinstance(idx, types.Integer)


@overload(operator.getitem)
def _ol_getitem(w, idx):
    if not isinstance(w, WideArrayType):
        return None
    n, ints = _index_parts(idx)
    if ints and n == w.ndim:  # a number
        if isinstance(idx, types.BaseTuple):
            return lambda w, idx: _make(w.a[idx + (0,)], w.a[idx + (1,)])
        return lambda w, idx: _make(w.a[idx, 0], w.a[idx, 1])
    return lambda w, idx: _wrap(w.a[idx])  # a view (the limb axis stays last)


@overload(operator.setitem)
def _ol_setitem(w, idx, v):
    if not isinstance(w, WideArrayType) or not (_int_like(v)):
        return None
    n, ints = _index_parts(idx)
    if not (ints and n == w.ndim):
        return None
    if isinstance(idx, types.BaseTuple):
        def impl(w, idx, v):
            x = _to128(v)
            w.a[idx + (0,)] = _lo(x)
            w.a[idx + (1,)] = _hi(x)
        return impl

    def impl1(w, idx, v):
        x = _to128(v)
        w.a[idx, 0] = _lo(x)
        w.a[idx, 1] = _hi(x)
    return impl1
