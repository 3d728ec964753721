"""The evaluation half of an audit folded into counts where it is drawn: memory bounded at any
sample count.

A chosen test reads its evaluation draws only through integer counts that add over draws
(``Candidate.count``: the draws of each input in a region {s > t} or {s < t}, or in each bin of a
multi-bin Renyi test), so the draws need never be held together. A task is a run of consecutive
seed chunks of one input (``sampling.CHUNK`` draws each, each from its own ``SeedSequence``, as in
the selection half); whoever runs it (this process, a process pool, any ``Executor`` such as a Dask
``client.get_executor()``) draws each chunk, featurises it with the pair's layout, computes the
chosen tests' scores and returns the summed counts: one small integer array per test. The driver
adds the tasks' arrays. Integer sums do not depend on how chunks are grouped into tasks nor on
where they are counted, and every chunk is featurised with the fitted layout as it was fitted, so
the counts (and every bound computed from them) depend on the seed only.
"""

from __future__ import annotations

import math
import pickle
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..protocols import Auditable, Data
from .features import Layout
from .regions import Candidate, checked_scores
from .sampling import CHUNK, Mode, Sampler, Task, draw
from .scores import Score

__all__ = ["MAX_TASKS_PER_INPUT", "TASK_CHUNKS", "ChosenTests", "count_evaluation", "count_task"]

#: Fewest seed chunks per evaluation task (``TASK_CHUNKS * CHUNK`` draws, about a million): a
#: task's memory is one chunk's outputs and scores whatever its size; its result, one integer
#: array per test.
TASK_CHUNKS = 16
#: Most tasks per input of a pair: larger audits get longer tasks, so the pickled scores (up to tens
#: of MB) are sent at most this many times per input.
MAX_TASKS_PER_INPUT = 32

Counts = NDArray[np.int64]


@dataclass(frozen=True)
class ChosenTests:
    """What a worker needs to count one pair's evaluation draws: the layout fitted on the
    selection draws, the scores the tests read (by index), and the tests' regions."""

    layout: Layout
    scores: dict[int, Score]
    regions: tuple[Candidate, ...]


def count_task(mechanism: Auditable, mode: Mode, data: Data, seeds: Sequence[np.random.SeedSequence],
               sizes: Sequence[int], tests: ChosenTests | bytes) -> list[Counts]:
    """Draw ``sizes[i]`` outputs on ``data`` from ``seeds[i]`` for each i, and return per region of
    ``tests`` (or its pickle) the sum over the chunks of ``Candidate.count`` of the region's score.
    Runs in worker processes too."""
    chosen = _load(tests) if isinstance(tests, bytes) else tests
    totals = [np.zeros(0, dtype=np.int64) for _ in chosen.regions]
    # this task's own skeleton table (the same skeleton objects): tasks running in threads of one
    # worker share the unpickled tests
    fitted = chosen.layout
    layout = replace(fitted, skeletons=dict(fitted.skeletons), shapes=list(fitted.shapes))
    known = len(layout.skeletons)
    for seed, n in zip(seeds, sizes, strict=True):
        out = draw(mechanism, mode, data, n, seed)
        # a featurised layout learns skeletons it has not seen (as new categories): forgetting them
        # after each chunk keeps a chunk's features independent of the chunks counted before it
        batch = layout.batch([out], n)
        scored = {i: checked_scores(sc, batch) for i, sc in chosen.scores.items()}
        layout.forget_skeletons(known)
        for j, c in enumerate(chosen.regions):
            k = c.count(scored[c.score])
            totals[j] = k if totals[j].size == 0 else totals[j] + k
    return totals


@lru_cache(maxsize=8)
def _load(blob: bytes) -> ChosenTests:
    """The tests a task was sent, unpickled once per worker process for the tasks that share them."""
    tests = pickle.loads(blob)
    if not isinstance(tests, ChosenTests):
        raise TypeError(f"expected pickled ChosenTests, got {type(tests).__name__}")
    return tests


def _dumps(tests: ChosenTests) -> bytes:
    """The tests pickled for other processes; fitted scores are closures, so by value (cloudpickle)."""
    import cloudpickle  # type: ignore[import-untyped, unused-ignore]

    blob: bytes = cloudpickle.dumps(tests)
    return blob


def count_evaluation(sampler: Sampler, stage: int, n: int,
                     tests: dict[int, ChosenTests]) -> dict[tuple[int, int], list[Counts]]:
    """Per (pair, input): the counts of each of the pair's regions (``tests[pair].regions``, in
    order) on ``n`` draws of stage ``stage`` (seed chunks as ``sampling.make_tasks`` numbers them),
    counted in tasks of at least ``TASK_CHUNKS`` chunks (at most ``MAX_TASKS_PER_INPUT`` tasks per
    input) on the sampler's workers or executor."""
    n_chunks = math.ceil(n / CHUNK)
    per_task = max(TASK_CHUNKS, math.ceil(n_chunks / MAX_TASKS_PER_INPUT))
    sent: dict[int, ChosenTests | bytes] = {
        i: _dumps(t) if sampler.remote else t for i, t in tests.items()}
    keys: list[tuple[int, int]] = []
    args: list[tuple[Any, ...]] = []
    draws: list[int] = []
    for i in tests:
        for side in (0, 1):
            for first in range(0, n_chunks, per_task):
                chunks = range(first, min(first + per_task, n_chunks))
                sizes = [min(CHUNK, n - c * CHUNK) for c in chunks]
                seeds = [sampler.seed(Task(i, side, stage, c, s)) for c, s in zip(chunks, sizes, strict=True)]
                keys.append((i, side))
                args.append((sampler.mechanism, sampler.mode, sampler.pairs[i][side], seeds, sizes, sent[i]))
                draws.append(sum(sizes))
    totals: dict[tuple[int, int], list[Counts]] = {}
    for key, counts in zip(keys, sampler.map(count_task, args, draws), strict=True):
        if key in totals:
            totals[key] = [a + b for a, b in zip(totals[key], counts, strict=True)]
        else:
            totals[key] = counts
    return totals
