"""Where the certified bracket's time goes: per law and per grid operation, against dp_accounting.

For each workload chosen (default: W3 T=1e4 and W4 of ``benchmarks.accounting``) the script runs, in
turn and ``--repeats`` times, dpcert's bracket (``epsilon_bracket`` at the default tol), dp_accounting's
PLD accountant at its default grid, and the bracket again with timers on the accountant's grid
operations. It prints the CPU seconds of each part of the timed bracket (medians over the repeats):

- each law built: the pessimistic law of the "remove" direction (the upper end), the coarse screening
  law of the "add" direction, the optimistic law (the lower end); within a law, its source (the
  mechanism discretised), the squarings of its self-composition (of which: the products bulk x far
  tail of the squares with a far tail, ``far_tail_square``), the other products, the coarsenings;
- the readout: everything else (the epsilon searches on the laws, the lower end).

The last column is (bracket - part) / dp_accounting: the bracket's ratio to dp_accounting if that part
took no time at all, a floor for what any speed-up of that part alone can reach. The timers add a few
wrapper calls per operation; the untimed bracket is printed for comparison.

    python -m benchmarks.bracket_cost [--repeats 5] [--only "W3 DP-SGD T=1e4,W4"]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import accountant.pld.distribution as distribution
import accountant.pld.grid.composition as composition
import accountant.pld.grid.convolve as convolution
from accountant.pld.grid.law import GridLaw
from benchmarks.accounting import WORKLOADS, Workload, dp_accounting_pld, dpcert

#: The rows printed, in order: (key, label); a key (law, op) or (law, "") for the whole law.
LAWS = (("pessimistic", "pessimistic law (remove)"), ("screen", "screening law (add, coarse)"),
        ("optimistic", "optimistic law (remove)"))
OPS = (("source", "source"), ("squares", "squarings"), ("cross", "  of which bulk x far tail"),
       ("products", "other products"), ("coarsen", "coarsenings"))


#: What ``Timers.installed`` wraps, (owner, attribute): the names the accountant calls them by.
PATCHED: tuple[tuple[Any, str], ...] = (
    (distribution.PLD, "law"), (distribution, "self_compose"), (distribution, "compose_laws"),
    (composition, "convolve"), (composition, "to_grid"), (convolution, "far_tail_square"),
    (convolution, "fft_conv"))


class Timers:
    """CPU seconds by (law, operation), accumulated while ``installed``."""

    def __init__(self) -> None:
        self.seconds: dict[tuple[str, str], float] = defaultdict(float)
        self.law = ""
        self.in_square = False

    def add(self, key: tuple[str, str], start: float) -> None:
        self.seconds[key] += time.process_time() - start

    @contextmanager
    def installed(self) -> Iterator[None]:
        """Wrap ``PLD.law``, ``self_compose`` and the grid operations it calls for the duration."""
        saved: list[tuple[Any, str, Any]] = []

        def patch(owner: Any, name: str, make: Callable[[Any], Any]) -> None:
            old = getattr(owner, name)
            saved.append((owner, name, old))
            setattr(owner, name, make(old))

        def law(old: Callable[..., GridLaw]) -> Callable[..., GridLaw]:
            def timed(pld: Any, direction: str = "remove", pessimistic: bool = True,
                      coarse: bool = False, *args: Any, **kw: Any) -> GridLaw:
                outer, start = self.law, time.process_time()
                self.law = "screen" if coarse else "pessimistic" if pessimistic else "optimistic"
                try:
                    return old(pld, direction, pessimistic, coarse, *args, **kw)
                finally:
                    self.add((self.law, ""), start)
                    self.law = outer
            return timed

        def compose(old: Callable[..., GridLaw]) -> Callable[..., GridLaw]:
            def timed(*args: Any, **kw: Any) -> GridLaw:
                # the sources are discretised before: a law's time less its compositions
                start = time.process_time()
                try:
                    return old(*args, **kw)
                finally:
                    self.add((self.law, "composition"), start)
            return timed

        def conv(old: Callable[..., GridLaw]) -> Callable[..., GridLaw]:
            def timed(a: GridLaw, b: GridLaw, *args: Any, **kw: Any) -> GridLaw:
                start = time.process_time()
                try:
                    return old(a, b, *args, **kw)
                finally:
                    self.add((self.law, "squares" if a is b else "products"), start)
            return timed

        def to_grid(old: Callable[..., GridLaw]) -> Callable[..., GridLaw]:
            def timed(law: GridLaw, h: float) -> GridLaw:
                start = time.process_time()
                try:
                    return old(law, h)
                finally:
                    self.add((self.law, "coarsen"), start)
            return timed

        def far(old: Callable[..., Any]) -> Callable[..., Any]:
            def timed(*args: Any, **kw: Any) -> Any:
                self.in_square = True
                try:
                    return old(*args, **kw)
                finally:
                    self.in_square = False
            return timed

        def fft_conv(old: Callable[..., Any]) -> Callable[..., Any]:
            def timed(a: Any, b: Any, *args: Any, **kw: Any) -> Any:
                if not (self.in_square and b is not None):
                    return old(a, b, *args, **kw)
                start = time.process_time()
                try:
                    return old(a, b, *args, **kw)
                finally:
                    self.add((self.law, "cross"), start)
            return timed

        makers = (law, compose, compose, conv, to_grid, far, fft_conv)
        for (owner, name), make in zip(PATCHED, makers, strict=True):
            patch(owner, name, make)
        try:
            yield
        finally:
            for owner, name, old in reversed(saved):
                setattr(owner, name, old)


def cpu(f: Callable[[], object]) -> float:
    start = time.process_time()
    f()
    return time.process_time() - start


def measure(w: Workload, repeats: int) -> None:
    dpcert(w)
    dp_accounting_pld(w)  # imports and first calls, uncounted
    plain, anchor, timed, total = [], [], [], []
    parts: dict[tuple[str, str], list[float]] = defaultdict(list)
    for _ in range(repeats):
        plain.append(cpu(lambda: dpcert(w)))
        anchor.append(cpu(lambda: dp_accounting_pld(w)))
        timers = Timers()
        with timers.installed():
            total.append(cpu(lambda: dpcert(w)))
        timed.append(total[-1])
        for law, _label in LAWS:
            s = timers.seconds
            parts[(law, "")].append(s[(law, "")])
            parts[(law, "source")].append(s[(law, "")] - s[(law, "composition")])
            for op in ("squares", "cross", "products", "coarsen"):
                parts[(law, op)].append(s[(law, op)])
        parts[("readout", "")].append(total[-1] - sum(timers.seconds[(law, "")] for law, _ in LAWS))
    t_dpa, t_br, t_timed = (statistics.median(v) for v in (anchor, plain, timed))
    print(f"\n{w.name}, delta = {w.delta:g}, default tol; CPU s, medians of {repeats} runs in turn")
    print(f"dp_accounting PLD (default grid): {t_dpa:.3f} s; dpcert bracket: {t_br:.3f} s "
          f"({t_br / t_dpa:.2f}x), with the timers {t_timed:.3f} s")
    print(f"{'part':34s} {'s':>7s} {'share':>6s} {'without it / dpa':>17s}")
    print("-" * 68)

    def row(label: str, values: list[float]) -> None:
        s = statistics.median(values)
        print(f"{label:34s} {s:7.3f} {s / t_timed:6.0%} {(t_timed - s) / t_dpa:16.2f}x")

    for law, label in LAWS:
        row(label, parts[(law, "")])
        for op, op_label in OPS:
            row("  " + op_label, parts[(law, op)])
    row("readout (searches, lower end)", parts[("readout", "")])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--only", default="W3 DP-SGD T=1e4,W4",
                    help="comma-separated prefixes of workload names")
    a = ap.parse_args(argv)
    if a.repeats < 1:
        ap.error(f"--repeats must be at least 1, got {a.repeats}")
    prefixes = [p.strip() for p in a.only.split(",") if p.strip()]
    chosen = [w for w in WORKLOADS if any(w.name.startswith(p) for p in prefixes)]
    if not chosen:
        ap.error(f"--only {a.only!r} matches no workload ({', '.join(w.name for w in WORKLOADS)})")
    print(f"dp_accounting {importlib.metadata.version('dp-accounting')}")
    for w in chosen:
        measure(w, a.repeats)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
