"""verify.plots and `dpcert plot`: the arrays against closed forms, files written, the hint
naming the `plot` extra when matplotlib is missing."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from accountant import GDP, PureDP, dpsgd_epsilon
from verify import plots
from verify.cli import main


def test_arrays_match_closed_forms() -> None:
    a, b = plots.tradeoff_points(GDP(1.0))
    exact = stats.norm.cdf(stats.norm.ppf(1 - a) - 1.0)  # G_mu [Dong, Roth & Su, Def. 2.7]
    assert a[0] == 0.0 and a[-1] == 1.0 and np.allclose(b, exact, atol=1e-12)
    _, d = plots.profile_points(PureDP(1.0), [0.5, 1.0, 2.0])
    assert d[1] == 0.0 and d[2] == 0.0 and d[0] == pytest.approx(PureDP(1.0).delta(0.5))
    p = plots.steps_points(0.01, 1.0, [100, 200], 1e-5)
    assert p["upper"][1] == dpsgd_epsilon(0.01, 1.0, 200, 1e-5).epsilon_upper
    assert np.all(p["lower"] <= p["upper"]) and np.all(p["upper"] <= p["rdp"])


def test_cli_writes_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    png, svg = tmp_path / "t.png", tmp_path / "p.svg"
    assert main(["plot", "tradeoff", "--gdp", "1", "--laplace", "2", "--pure", "0.1x10", "-o", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["plot", "profile", "--gaussian", "4x10", "-o", str(svg)]) == 0
    assert "<svg" in svg.read_text()
    steps = tmp_path / "s.png"
    assert main(["plot", "steps", "--sampling-rate", "0.01", "--sigma", "1", "--steps", "300", "--delta",
                 "1e-5", "--points", "3", "-o", str(steps)]) == 0 and steps.stat().st_size > 1000
    audit = tmp_path / "a.png"
    assert main(["plot", "audit", "laplace-eps-1", "--samples", "5000", "-o", str(audit)]) == 0
    assert audit.stat().st_size > 1000
    capsys.readouterr()
    assert main(["plot", "tradeoff", "--gdp", "1", "-o", str(tmp_path / "x.jpg")]) == 2
    assert main(["plot", "tradeoff", "-o", str(png)]) == 2
    assert "at least one guarantee" in capsys.readouterr().err


def test_missing_matplotlib_names_the_extra(monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)  # import fails as if not installed
    with pytest.raises(ModuleNotFoundError, match=r"`plot` extra"):
        plots.plot_tradeoff([GDP(1.0)])
    assert main(["plot", "tradeoff", "--gdp", "1", "-o", str(tmp_path / "t.png")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "pip install -e '.[plot]'" in err


def test_audit_figure_shows_the_witness_off_the_axis_and_boxes_as_boxes() -> None:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from verify.audit import audit
    from verify.cli.inputs import example_case

    case = example_case("textbook-float-laplace-eps-1")  # the CLI's `plot audit` example
    report = audit(case.mechanism, case.pairs, case.claim, samples=5000, seed=0)
    assert report.violation and report.witness is not None
    r = report.roc_points()
    w = r["witness"]
    assert report.points[w] is report.witness
    # the witness (beta = 0 here) lies strictly inside the axes and the zoom window, not on an edge
    assert r["ylim"][0] < r["beta"][w] < r["ylim"][1] and r["xlim"][0] < r["alpha"][w] < r["xlim"][1]
    x0, x1, y0, y1 = r["zoom"]
    assert x0 < r["alpha_lower"][w] and r["alpha_upper"][w] < x1 and y0 < r["beta_lower"][w]
    # the window shows the claim above the witness, is square, and makes the box a visible fraction
    assert r["beta_upper"][w] < float(case.claim.tradeoff(r["alpha"][w])) < y1
    assert x1 - x0 == pytest.approx(y1 - y0)
    assert (r["alpha_upper"][w] - r["alpha_lower"][w]) / (x1 - x0) > 0.03
    ax = plots.plot_audit(report)
    inset = ax.child_axes[0]
    assert ax.get_ylim() == pytest.approx(r["ylim"]) and inset.get_xlim() == pytest.approx((x0, x1))
    boxes = [p for p in inset.patches if p.get_width() > 0]
    assert len(boxes) == len(report.points)
    assert boxes[w].get_width() == pytest.approx(r["alpha_upper"][w] - r["alpha_lower"][w])
    assert boxes[w].get_height() == pytest.approx(r["beta_upper"][w] - r["beta_lower"][w])


def test_steps_figure_starts_where_the_data_starts() -> None:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    grid = plots.steps_grid(10_000, 8)
    assert grid[0] == 1 and grid[-1] == 10_000 and grid == sorted(set(grid))
    assert grid[:4] == [1, 6, 35, 210] and grid[4:] == [1250 * i for i in range(1, 9)]
    assert plots.steps_grid(300, 3) == [1, 10, 100, 200, 300] and plots.steps_grid(5, 8) == [1, 2, 3, 4, 5]
    with pytest.raises(ValueError, match="steps"):
        plots.steps_grid(0)
    ax = plots.plot_steps(0.01, 1.0, [1, 30, 100], 1e-5)
    assert ax.get_xlim() == (1.0, 100.0)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    # the PLD bracket is far narrower than the figure: no band, and no legend entry for one
    assert not ax.collections and not any("bracket" in t for t in labels)
    assert any(t.startswith("PLD upper bound (certified; exact within") for t in labels)
    assert [len(line.get_xdata()) for line in ax.get_lines()] == [3, 3, 3]


def test_profile_figure_says_which_curve_is_tight() -> None:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from accountant import FDP, PLD, ZCDP, ApproxDP, LaplaceTradeoff, compose

    assert plots.profile_kind(GDP(1.0)) == "tight" and plots.profile_kind(PureDP(1.0)) == "tight"
    assert plots.profile_kind(ApproxDP(1.0, 1e-5)) == "tight"
    assert plots.profile_kind(ZCDP(0.5)) == "conversion bound"
    laplace3 = compose([FDP(LaplaceTradeoff(1.0))] * 3)  # a numeric PLD: a bound with its error
    assert isinstance(laplace3, PLD) and plots.profile_kind(laplace3) == "numeric bound"
    assert plots.profile_kind(compose([PureDP(1.0)] * 4, method="clt")) == "approximation"
    ax = plots.plot_profile([GDP(1.0), ZCDP(0.5)], ["G", "Z"], eps=[0.0, 1.0, 2.0])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["G: tight", "Z: conversion bound"]
    assert [line.get_linestyle() for line in ax.get_lines()] == ["-", "--"]
