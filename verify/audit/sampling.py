"""Drawing outputs of a mechanism: reproducible chunked streams, processes or any executor.

Every chunk of ``CHUNK`` draws gets its own ``SeedSequence`` with spawn key
(pair, input, stage, chunk), so the outputs do not depend on how many workers draw them, nor on
how chunks are grouped into tasks. The selection half of an audit is at most
``MAX_SELECTION_DRAWS`` per input (``split_draws``): the driver holds those draws, and the
evaluation half is folded into counts where it is drawn (``streaming``).
"""

from __future__ import annotations

import math
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np

from ..protocols import Auditable, Data, Output, PlainMechanism, SampledMechanism, VectorisedMechanism

CHUNK = 1 << 16
Mode = Literal["mechanism", "vectorised", "scalar"]
#: Most selection draws per input (the draws held in memory to fit scores and choose regions); an
#: audit's draws beyond ``MAX_SELECTION_DRAWS / selection_fraction`` all go to the evaluation half.
MAX_SELECTION_DRAWS = 1_000_000


def split_draws(samples: int, selection_fraction: float) -> tuple[int, int]:
    """(selection, evaluation) draws per input: the selection half is ``selection_fraction`` of the
    samples (at least 2), capped at ``MAX_SELECTION_DRAWS``; the evaluation half is the rest."""
    n_sel = min(max(2, round(samples * selection_fraction)), MAX_SELECTION_DRAWS)
    return n_sel, samples - n_sel


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

    @property
    def remote(self) -> bool:
        """Whether tasks run in other processes (their arguments are pickled)."""
        return self.executor is not None or (self.workers is not None and self.workers > 1)

    def run(self, tasks: list[Task]) -> dict[tuple[int, int], list[Any]]:
        """Outputs per (pair, side), as a list of chunk results in chunk order."""
        results: dict[tuple[int, int], list[Any]] = {}
        args = [(self.mechanism, self.mode, self.pairs[t.pair][t.side], t.size, self.seed(t))
                for t in tasks]
        for t, out in zip(tasks, self.map(draw, args, [t.size for t in tasks]), strict=True):
            results.setdefault((t.pair, t.side), []).append(out)
        return results

    def map(self, fn: Callable[..., Any], args: Sequence[tuple[Any, ...]],
            draws: Sequence[int]) -> Iterator[Any]:
        """``fn(*a)`` for each ``a`` in ``args``, in order, serially, over ``workers`` processes or on
        the executor; ``draws`` (one per call) advance the progress bar."""
        if self.executor is not None and args:
            yield from self._track(draws, _windowed(self.executor, fn, args, IN_FLIGHT_TASKS))
        elif self.workers is not None and self.workers > 1 and len(args) > 1:
            _check_picklable(self.mechanism)
            with ProcessPoolExecutor(max_workers=self.workers) as ex:
                yield from self._track(draws, _windowed(ex, fn, args, max(IN_FLIGHT_TASKS, 2 * self.workers)))
        else:
            yield from self._track(draws, (fn(*a) for a in args))

    def _track(self, draws: Sequence[int], outs: Iterable[Any]) -> Iterator[Any]:
        for n, out in zip(draws, outs, strict=True):
            self.progress.update(n)
            yield out


#: Most tasks submitted to an executor and not yet collected: a task's arguments (for an evaluation
#: task, the pickled scores, up to tens of MB when fitted on ``MAX_SELECTION_DRAWS``) are held by
#: the executor (a local Dask scheduler runs in this process) until it has run, so this bounds what
#: the driver holds; it is also the most tasks that run at once on an executor.
IN_FLIGHT_TASKS = 8


def _windowed(ex: Executor, fn: Callable[..., Any], args: Sequence[tuple[Any, ...]],
              window: int) -> Iterator[Any]:
    """``fn(*a)`` for each ``a`` on ``ex``, results in order, at most ``window`` submitted and not
    yet collected."""
    pending: deque[Future[Any]] = deque()
    for a in args:
        pending.append(ex.submit(fn, *a))
        if len(pending) >= window:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


#: Draws taken twice on one seed to see whether a mechanism's outputs follow the audit's seed.
SEED_CHECK_DRAWS = 4


def follows_seed(mechanism: Auditable, mode: Mode, data: Data, root: np.random.SeedSequence) -> bool:
    """Whether two runs of ``SEED_CHECK_DRAWS`` draws on one seed give the same outputs (a mechanism
    that draws from a random source of its own does not). These draws are used for nothing else."""
    seed = np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, 2**31 + 3))
    first = draw(mechanism, mode, data, SEED_CHECK_DRAWS, seed)
    second = draw(mechanism, mode, data, SEED_CHECK_DRAWS, seed)
    return _same(first, second)


def _same(a: Output, b: Output) -> bool:
    """Equal outputs, bit for bit where they pickle (a NaN equals itself), else by their repr."""
    import pickle

    try:
        return pickle.dumps(a) == pickle.dumps(b)
    except Exception:
        return repr(a) == repr(b)


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

