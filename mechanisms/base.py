"""The mechanism protocol and the composition of mechanisms.

A mechanism is a frozen declaration that knows

- ``sensitivity``: the sympy sensitivity it is calibrated to;
- ``guarantee()``: its exact (or tightest known) accountant guarantee;
- ``closed_form_guarantee()``: a guarantee in a closed-form family (PureDP, ApproxDP, GDP, ZCDP) that the
  exact one implies, for closed-form composition with other mechanisms;
- ``sample(data, rng, size=None)``: a vectorised sampler with an explicit ``numpy.random.Generator``;
- ``privacy_loss(y, data, data2)``: log p_data(y) - log p_data2(y), where the output law is known;
- ``output``: what an output looks like (continuous or discrete, shape), for black-box auditors.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, final

import numpy as np
import sympy
from numpy.typing import ArrayLike, NDArray

from accountant import PLD, Guarantee, Method, compose, pld_from_guarantee
from accountant.core.types import FloatArray
from accountant.core.validation import check_count

__all__ = ["BOTTOM", "Mechanism", "OutputSpec", "Pipeline", "Refusal", "check_rng", "check_size", "refused"]

OutputKind = Literal["continuous", "discrete", "mixed"]
#: Most outputs one ``sample`` call draws.
MAX_SIZE = 2**40


@dataclass(frozen=True)
class OutputSpec:
    """Shape and kind of one output: ``kind`` is continuous (a density on R^shape), discrete (a
    pmf on integers) or mixed (e.g. an index with a real value); ``support`` is a readable note."""

    kind: OutputKind
    shape: tuple[int, ...]
    support: str = ""


@final
class Refusal:
    """The refusal ("bottom", written ⊥) of propose-test-release, A_dist, A_samp and the Scale
    algorithm [@dwork2014algorithmic, Sec. 7.2-7.3]: a value of its own type, never a number or None.

    There is one instance, ``BOTTOM``; it survives pickling (the audit's worker processes) and
    compares equal only to itself. Vectorised samplers return object arrays whose entries are
    numbers or ``BOTTOM``; ``refused(outputs)`` gives the boolean mask.
    """

    __slots__ = ()
    _instance: ClassVar[Refusal | None] = None

    def __new__(cls) -> Refusal:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "BOTTOM"

    def __reduce__(self) -> str:
        return "BOTTOM"

    def __bool__(self) -> bool:
        return False


#: The refusal value (the only ``Refusal``).
BOTTOM = Refusal()


def refused(outputs: Any) -> NDArray[np.bool_]:
    """Boolean mask of the outputs that are ``BOTTOM`` (one output or an array of them)."""
    arr = np.asarray(outputs, dtype=object)
    flat = np.fromiter((o is BOTTOM for o in arr.reshape(-1)), dtype=bool, count=arr.size)
    return flat.reshape(arr.shape)


def check_rng(rng: object) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator (e.g. numpy.random.default_rng(seed)), "
                        f"got {type(rng).__name__}; global random state is not used")
    return rng


def check_size(size: object) -> int:
    if size is None:
        return 1
    if isinstance(size, (bool, np.bool_)) or not isinstance(size, (int, np.integer)):
        raise TypeError(f"size must be None or a positive int, got {type(size).__name__} {size!r}")
    return check_count("size", int(size), low=1, high=MAX_SIZE)


class Mechanism(ABC):
    """Protocol of a declared mechanism (see the module docstring)."""

    @property
    @abstractmethod
    def sensitivity(self) -> Any:
        """The sympy sensitivity the noise is calibrated to."""

    @abstractmethod
    def guarantee(self) -> Guarantee:
        """The exact (or tightest known) guarantee, as an accountant value."""

    def closed_form_guarantee(self) -> Guarantee:
        """A closed-form-family guarantee implied by ``guarantee()`` (the same by default)."""
        return self.guarantee()

    @property
    @abstractmethod
    def output(self) -> OutputSpec:
        """Kind and shape of one output."""

    @abstractmethod
    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        """``m`` independent outputs stacked on axis 0 (data not yet validated)."""

    def sample(self, data: ArrayLike, rng: np.random.Generator, size: int | None = None) -> Any:
        """One output (``size=None``) or ``size`` independent outputs stacked on axis 0."""
        rng = check_rng(rng)
        m = check_size(size)
        out = self._sample(data, rng, m)
        expected = (m, *self.output.shape)
        if out.shape != expected:
            raise AssertionError(f"{type(self).__name__} produced shape {out.shape}, expected {expected}")
        return out[0] if size is None else out

    def privacy_loss(self, y: ArrayLike, data: ArrayLike, data2: ArrayLike) -> FloatArray:
        """log p_data(y) - log p_data2(y), vectorised over outputs stacked on axis 0."""
        raise NotImplementedError(f"{type(self).__name__} has no closed-form output density")

    def pld(self, **kwargs: Any) -> PLD:
        """The privacy-loss distribution of ``guarantee()`` (``accountant.pld_from_guarantee``), for
        numeric composition with other releases."""
        return pld_from_guarantee(self.guarantee(), **kwargs)

    def explain(self) -> str:
        """A readable account of the declaration and the guarantee."""
        return f"{self!r}\n  guarantee: {self.guarantee()}"

    def _validate_pair(self, y: ArrayLike, shape: tuple[int, ...]) -> FloatArray:
        arr = np.asarray(y, dtype=np.float64)
        if arr.shape == shape:
            arr = arr[None]
        if arr.shape[1:] != shape:
            raise ValueError(f"y must have shape {shape} or (m, *{shape}), got {arr.shape}")
        return arr


@dataclass(frozen=True)
class Pipeline(Mechanism):
    """Several mechanisms run on the same data; the output is the tuple of their outputs.

    ``guarantee(method)`` is ``accountant.compose`` of the parts' guarantees (adaptive composition).
    With ``closed_form=True`` the parts' ``closed_form_guarantee()`` are composed instead, which lets
    closed forms combine (e.g. Laplace curves are replaced by the PureDP they imply).
    """

    mechanisms: tuple[Mechanism, ...]

    def __post_init__(self) -> None:
        ms = tuple(self.mechanisms)
        if not ms:
            raise ValueError("a Pipeline needs at least one mechanism")
        for m in ms:
            if not isinstance(m, Mechanism):
                raise TypeError(f"Pipeline parts must be Mechanisms, got {type(m).__name__}")
        object.__setattr__(self, "mechanisms", ms)

    @property
    def sensitivity(self) -> Any:
        """The parts' sensitivities, as a sympy Tuple."""
        return sympy.Tuple(*(m.sensitivity for m in self.mechanisms))

    def guarantee(self, method: Method = "exact", closed_form: bool = False) -> Guarantee:
        gs = [m.closed_form_guarantee() if closed_form else m.guarantee() for m in self.mechanisms]
        try:
            return compose(gs, method=method)
        except ValueError as exc:
            raise ValueError(f"{exc}; try Pipeline.guarantee(closed_form=True), another method, or the "
                             "PLD composition") from exc

    def closed_form_guarantee(self) -> Guarantee:
        return self.guarantee(closed_form=True)

    @property
    def output(self) -> OutputSpec:
        total = sum(math.prod(m.output.shape) for m in self.mechanisms)
        kinds = {m.output.kind for m in self.mechanisms}
        kind: OutputKind = kinds.pop() if len(kinds) == 1 else "mixed"
        return OutputSpec(kind, (total,), "outputs of the parts, flattened and concatenated")

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        parts = [np.asarray(mech.sample(data, rng, size=m), dtype=np.float64).reshape(m, -1)
                 for mech in self.mechanisms]
        return np.concatenate(parts, axis=1)

    def privacy_loss(self, y: ArrayLike, data: ArrayLike, data2: ArrayLike) -> FloatArray:
        """Sum of the parts' privacy losses (independent noise) on the flattened outputs."""
        arr = self._validate_pair(y, self.output.shape)
        total = np.zeros(arr.shape[0])
        start = 0
        for mech in self.mechanisms:
            k = math.prod(mech.output.shape)
            part = arr[:, start:start + k].reshape(arr.shape[0], *mech.output.shape)
            total += mech.privacy_loss(part, data, data2)
            start += k
        return total


def compose_mechanisms(mechanisms: Sequence[Mechanism]) -> Pipeline:
    """``Pipeline(tuple(mechanisms))``."""
    return Pipeline(tuple(mechanisms))
