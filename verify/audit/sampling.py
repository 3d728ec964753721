"""Drawing outputs of a mechanism: reproducible chunked streams, processes or any executor.

Every chunk of ``CHUNK`` draws gets its own ``SeedSequence`` with spawn key
(pair, input, stage, chunk), so the outputs do not depend on how many workers draw them.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Hashable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np
from numpy.typing import NDArray

from ..protocols import Auditable, Data, Output, PlainMechanism, SampledMechanism, VectorisedMechanism

CHUNK = 1 << 16
Mode = Literal["mechanism", "vectorised", "scalar"]


def sampling_mode(mechanism: Auditable, vectorised: bool) -> Mode:
    """How to draw from ``mechanism``: a dpcert mechanism's ``sample``, a vectorised or a plain callable."""
    if callable(getattr(mechanism, "sample", None)):
        return "mechanism"
    if not callable(mechanism):
        raise TypeError("mechanism must be a dpcert mechanism (with .sample) or a callable "
                        f"(data, rng) -> output, got {type(mechanism).__name__}")
    return "vectorised" if vectorised else "scalar"


class MechanismError(RuntimeError):
    """The audited code raised while drawing an output; the message is its exception in one line
    (the original is chained as ``__cause__`` when raised in this process)."""


def draw(mechanism: Auditable, mode: Mode, data: Data, n: int, seed: np.random.SeedSequence) -> Output:
    """n outputs on ``data`` from one independent stream (runs in worker processes too); an exception
    of the audited code is re-raised as ``MechanismError``."""
    rng = np.random.Generator(np.random.PCG64(seed))
    try:
        if mode == "mechanism":
            return cast(SampledMechanism, mechanism).sample(data, rng, size=n)
        if mode == "vectorised":
            return cast(VectorisedMechanism, mechanism)(data, rng, n)
        plain = cast(PlainMechanism, mechanism)
        return [plain(data, rng) for _ in range(n)]
    except Exception as exc:
        one_line = " ".join(f"{type(exc).__name__}: {exc}".split())
        shown = repr(data) if len(repr(data)) <= 60 else repr(data)[:57] + "..."
        raise MechanismError(f"{one_line} (drawing on input {shown})") from exc


@dataclass(frozen=True)
class Task:
    """One chunk of draws: pair index, input index (0 or 1), stage (0 selection, 1 evaluation)."""

    pair: int
    side: int
    stage: int
    chunk: int
    size: int


def make_tasks(pair: int, stage: int, n: int) -> list[Task]:
    out = []
    for side in (0, 1):
        for c in range(math.ceil(n / CHUNK)):
            out.append(Task(pair, side, stage, c, min(CHUNK, n - c * CHUNK)))
    return out


class Progress:
    """A minimal stderr progress bar (tqdm when it is installed)."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.done, self.enabled = total, 0, enabled
        self._bar: Any = None
        self._t0 = time.perf_counter()
        if enabled:
            try:
                from tqdm import tqdm  # type: ignore[import-untyped, unused-ignore]

                self._bar = tqdm(total=total, unit="draws", unit_scale=True, desc="audit")
            except ImportError:
                self._bar = None

    def add_total(self, n: int) -> None:
        self.total += n
        if self._bar is not None:
            self._bar.total = self.total
            self._bar.refresh()

    def update(self, n: int) -> None:
        self.done += n
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(n)
            return
        frac = self.done / max(self.total, 1)
        rate = self.done / max(time.perf_counter() - self._t0, 1e-9)
        bar = "#" * int(30 * frac)
        sys.stderr.write(f"\raudit [{bar:<30}] {self.done}/{self.total} draws ({rate:,.0f}/s)")
        sys.stderr.flush()

    def close(self) -> None:
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.close()
        else:
            sys.stderr.write("\n")


class Sampler:
    """Runs tasks for a list of pairs serially, over ``workers`` processes, or on ``executor``."""

    def __init__(self, mechanism: Any, mode: Mode, pairs: Sequence[tuple[Any, Any]],
                 root: np.random.SeedSequence, workers: int | None, executor: Executor | None,
                 progress: Progress) -> None:
        self.mechanism, self.mode, self.pairs, self.root = mechanism, mode, pairs, root
        self.workers, self.executor, self.progress = workers, executor, progress

    def seed(self, t: Task) -> np.random.SeedSequence:
        return np.random.SeedSequence(self.root.entropy,
                                      spawn_key=(*self.root.spawn_key, t.pair, t.side, t.stage, t.chunk))

    def run(self, tasks: list[Task]) -> dict[tuple[int, int], list[Any]]:
        """Outputs per (pair, side), as a list of chunk results in chunk order."""
        results: dict[tuple[int, int], list[Any]] = {}
        for t, out in zip(tasks, self._map(tasks), strict=True):
            results.setdefault((t.pair, t.side), []).append(out)
        return results

    def _map(self, tasks: list[Task]) -> Iterator[Any]:
        args = [(self.mechanism, self.mode, self.pairs[t.pair][t.side], t.size, self.seed(t))
                for t in tasks]
        if self.executor is not None:
            yield from self._track(tasks, self.executor.map(draw, *zip(*args, strict=True)))
        elif self.workers is not None and self.workers > 1 and len(tasks) > 1:
            _check_picklable(self.mechanism)
            with ProcessPoolExecutor(max_workers=self.workers) as ex:
                yield from self._track(tasks, ex.map(draw, *zip(*args, strict=True)))
        else:
            yield from self._track(tasks, (draw(*a) for a in args))

    def _track(self, tasks: list[Task], outs: Iterable[Any]) -> Iterator[Any]:
        for t, out in zip(tasks, outs, strict=True):
            self.progress.update(t.size)
            yield out


# ------------------------------------------------------------------------------ normalisation


@dataclass
class Batch:
    """Outputs of one input at one stage: ``values`` an (n, d) numeric array when the outputs are
    numbers or equal-shape arrays, else None; ``keys`` hashable keys for exact value counts;
    ``raw`` the outputs as the mechanism returned them (for its ``privacy_loss``)."""

    values: NDArray[Any] | None
    keys: NDArray[Any]
    raw: Any

    @property
    def n(self) -> int:
        return int(self.keys.shape[0])


def _hashable(o: Any) -> Hashable:
    if isinstance(o, np.ndarray):
        return (o.shape, tuple(o.ravel().tolist()))
    if isinstance(o, (list, tuple)):
        return tuple(_hashable(x) for x in o)
    if isinstance(o, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in o.items()))
    if isinstance(o, np.generic):
        return o.item()  # type: ignore[no-any-return]
    try:
        hash(o)
    except TypeError:
        raise ValueError(f"mechanism returned an output of unsupported type {type(o).__name__}") from None
    return o  # type: ignore[no-any-return]


def row_keys(values: NDArray[Any]) -> NDArray[Any]:
    """One comparable key per row (the row's bytes), so rows can be counted and looked up."""
    v = np.ascontiguousarray(values)
    if v.shape[1] == 1:
        col: NDArray[Any] = v[:, 0].copy()
        return col
    out: NDArray[Any] = v.view(np.dtype((np.void, v.dtype.itemsize * v.shape[1])))[:, 0]
    return out


def to_batch(chunks: list[Any], n: int, expected_shape: tuple[int, ...] | None) -> Batch:
    """Normalise raw chunk outputs; raise ValueError naming ``mechanism`` for bad shapes."""
    numeric: list[NDArray[Any]] = []
    objs: list[Any] = []
    for c in chunks:
        if isinstance(c, np.ndarray):
            numeric.append(c)
        else:
            objs.extend(list(c))
    raw: Any
    if numeric and objs:
        raise ValueError("mechanism returned outputs of inconsistent types across draws")
    if numeric:
        raw = np.concatenate(numeric, axis=0) if len(numeric) > 1 else numeric[0]
        if raw.ndim == 0 or raw.shape[0] != n:
            raise ValueError(f"mechanism's vectorised sampler must return {n} outputs stacked on axis 0, "
                             f"got an array of shape {raw.shape}")
        arr: NDArray[Any] | None = raw
        if raw.dtype.kind not in "biuf":
            objs = list(raw)
    else:
        raw = objs
        if len(objs) != n:
            raise ValueError(f"mechanism returned {len(objs)} outputs, expected {n}")
        arr = _try_numeric(objs)
    if arr is not None and arr.dtype.kind in "biuf":
        shape = tuple(arr.shape[1:])
        if expected_shape is not None and shape != expected_shape:
            raise ValueError(f"mechanism returned outputs of shape {shape} on one input and "
                             f"{expected_shape} on another: output shapes must agree")
        values = arr.reshape(n, -1)
        if values.dtype.kind == "b":
            values = values.astype(np.int64)
        if values.dtype.kind == "f":
            # one bit pattern for NaN, so a NaN output ("no answer") is one value when counted
            values = np.where(np.isnan(values), np.nan, values)
        return Batch(values, row_keys(values), raw)
    keys = np.empty(n, dtype=object)
    keys[:] = [_hashable(o) for o in objs]
    return Batch(None, keys, raw)


def _try_numeric(objs: list[Any]) -> NDArray[Any] | None:
    if not objs or isinstance(objs[0], (str, bytes, dict)):
        return None
    try:
        arr = np.asarray(objs)
    except (ValueError, TypeError):
        return None
    return None if arr.dtype == object else arr


def pooled_unique_count(a: Batch, b: Batch) -> int:
    if a.keys.dtype == object:
        return len(set(a.keys.tolist()) | set(b.keys.tolist()))
    return int(np.unique(np.concatenate([a.keys, b.keys])).size)


def root_seed(seed: int | np.random.SeedSequence | None) -> np.random.SeedSequence:
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise ValueError(f"seed must be a non-negative integer, a SeedSequence or None, got {seed!r}")
    return np.random.SeedSequence(None if seed is None else int(seed))


def _check_picklable(mechanism: object) -> None:
    """Worker processes receive the mechanism by pickle: a lambda or a local function cannot go."""
    import pickle

    try:
        pickle.dumps(mechanism)
    except (pickle.PicklingError, AttributeError, TypeError) as exc:
        raise TypeError(f"workers > 1 sends the mechanism to other processes, but {mechanism!r} "
                        f"cannot be pickled ({type(exc).__name__}: {exc}); define it as a "
                        "module-level function or class, or use workers=None") from None

