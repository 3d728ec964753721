"""Scale: processes, any Executor (Dask when installed), progress bar, determinism across them."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TypedDict

import pytest

import verify
from accountant import PureDP
from verify import examples


class _Run(TypedDict):
    """The keyword arguments the runs below share."""

    samples: int
    seed: int


def test_executor_and_processes_match_serial() -> None:
    mech = examples.ScalarLaplace(1.0)
    kw: _Run = {"samples": 150_000, "seed": 5}  # more than two chunks per input
    serial = verify.audit(mech, [(0.0, 1.0)], PureDP(1.0), **kw)
    with ThreadPoolExecutor(2) as ex:
        threaded = verify.audit(mech, [(0.0, 1.0)], PureDP(1.0), executor=ex, **kw)
    procs = verify.audit(mech, [(0.0, 1.0)], PureDP(1.0), workers=2, **kw)
    assert serial.points == threaded.points == procs.points


def test_progress_bar_writes_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    verify.audit(examples.GeometricMechanism(1.0), [(0, 1)], PureDP(1.0), samples=2000, seed=0, progress=True)
    err = capsys.readouterr().err
    assert "audit" in err or "draws" in err


def test_dask_local_cluster() -> None:
    distributed = pytest.importorskip("distributed")
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2,
                            dashboard_address=None) as client:
        mech = examples.RandomizedResponse(1.0)
        a = verify.audit(mech, [(0, 1)], PureDP(1.0), samples=100_000, seed=1,
                         executor=client.get_executor())
    b = verify.audit(mech, [(0, 1)], PureDP(1.0), samples=100_000, seed=1)
    assert a.points == b.points
