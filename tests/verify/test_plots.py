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
