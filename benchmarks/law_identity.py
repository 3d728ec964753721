"""Bit-identity of the PLD accountant's composed laws, for pure performance work (issue 14).

``dump`` builds every law of ``PLD.law`` (each direction x pessimistic/optimistic x coarse x
precise) for a fixed set of compositions with the code of this tree (or of ``--tree``, e.g. the
parent commit exported by ``git archive``), and pickles them; ``compare`` reports, field by
field, where two dumps differ (arrays with np.array_equal and equal dtypes, scalars with ==, NaN
equal to NaN). A change meant to alter no number dumps the parent's laws and its own, then
compares them.

Compositions: W1-W5 of ``accounting.py`` at tol 3e-5 and 1e-6 (W4 at 3e-5 only), Poisson-
subsampled Gaussians (q in {1e-3, 0.1, 0.5}, sigma in {0.6, 2}, T in {1, 7, 1000}), Laplace,
binary and 3-ary randomized response, a Gaussian mixture (a record sampled up to twice) and a
subsampled Laplace. ``--quick`` leaves out W4 and the tol 1e-6 rows (about 40% of the time).

    python -m benchmarks.law_identity dump OUT.pkl [--quick] [--tree DIR]
    python -m benchmarks.law_identity compare A.pkl B.pkl

Exit status of ``compare``: 0 when every field of every law is identical, 1 otherwise.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import pickle
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

Key = tuple[str, str, bool, bool, bool]


def compositions(quick: bool) -> list[tuple[str, Callable[[], Any]]]:
    from accountant import GDP, PLD, compose, subsample
    from accountant.pld.models.mixture import MixtureGaussianPair
    from benchmarks.accounting import WORKLOADS, dpcert_pld

    out: list[tuple[str, Callable[[], Any]]] = []
    for w in WORKLOADS:
        for tol in (3e-5, 1e-6):
            w4_fine = "W4" in w.name and tol == 1e-6
            if w4_fine or (quick and ("W4" in w.name or tol == 1e-6)):
                continue

            def workload(w: Any = w, tol: float = tol) -> PLD:
                return dpcert_pld(w, tol)
            out.append((f"{w.name} tol {tol}", workload))
    for q in (1e-3, 0.1, 0.5):
        for s in (0.6, 2.0):
            for t in (1, 7, 1000):
                def sg(q: float = q, s: float = s, t: int = t) -> PLD:
                    one = subsample(GDP(1.0 / s), rate=q, scheme="poisson")
                    return one if t == 1 else compose([one] * t, tol=3e-5)
                out.append((f"subsampled Gaussian q {q} sigma {s} T {t}", sg))
    out += [
        ("Laplace b 2 x5", lambda: PLD.laplace(2.0).self_compose(5)),
        ("RR eps 1 x30", lambda: PLD.randomized_response(1.0).self_compose(30)),
        ("3-ary RR eps 1 x3", lambda: PLD.randomized_response(1.0, k=3).self_compose(3)),
        ("mixture x50", lambda: PLD.from_pair(
            MixtureGaussianPair(1.0, (0.0, 1.0, 2.0), (0.81, 0.18, 0.01)), 50)),
        ("subsampled Laplace x20",
         lambda: compose([subsample(PLD.laplace(1.0), rate=0.05)] * 20, tol=3e-5)),
    ]
    return out


def dump(path: str, quick: bool, tree: Path) -> None:
    sys.path[:0] = [str(tree)]
    import accountant

    print(f"code: {Path(accountant.__file__).parent}")
    laws: dict[Key, dict[str, Any]] = {}
    start = time.process_time()
    for name, make in compositions(quick):
        pld = make()
        for d in pld.directions:
            for pessimistic in (True, False):
                for coarse in (False, True):
                    for precise in ((False, True) if pessimistic else (False,)):
                        law = pld.law(d, pessimistic, coarse, precise)
                        laws[(name, d, pessimistic, coarse, precise)] = {
                            f.name: getattr(law, f.name) for f in dataclasses.fields(law)}
        print(f"{name:45s} {time.process_time() - start:6.1f} s", flush=True)
    with open(path, "wb") as f:
        pickle.dump(laws, f)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype
                and np.array_equal(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return bool(a == b)


def compare(path_a: str, path_b: str) -> int:
    with open(path_a, "rb") as f:
        a = pickle.load(f)
    with open(path_b, "rb") as f:
        b = pickle.load(f)
    if a.keys() != b.keys():
        print("the dumps hold different laws")
        return 1
    fields = differ = 0
    for key, law in a.items():
        for name, value in law.items():
            fields += 1
            if not _same(value, b[key][name]):
                differ += 1
                print("DIFFERS", key, name)
    print(f"{len(a)} laws, {fields} fields compared, {differ} differ")
    return 0 if differ == 0 else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_dump = sub.add_parser("dump")
    p_dump.add_argument("out")
    p_dump.add_argument("--quick", action="store_true")
    p_dump.add_argument("--tree", type=Path, default=Path(__file__).resolve().parents[1])
    p_cmp = sub.add_parser("compare")
    p_cmp.add_argument("a")
    p_cmp.add_argument("b")
    args = parser.parse_args()
    if args.cmd == "dump":
        dump(args.out, args.quick, args.tree)
        return 0
    return compare(args.a, args.b)


if __name__ == "__main__":
    raise SystemExit(main())
