"""The dpcert command line, called through verify.cli.main."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from accountant import GDP
from verify.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_account_gdp_table_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "account", "--gdp", "0.5", "--gdp", "0.3x4", "--delta", "1e-5", "--eps", "1")
    assert code == 0
    mu = math.sqrt(0.25 + 4 * 0.09)
    assert f"{mu:.6g}" in out and "epsilon at delta=1e-05" in out and "delta at eps=1" in out
    code, out, _ = run(capsys, "account", "--gdp", "0.5", "--gdp", "0.3x4", "--delta", "1e-5", "--json")
    d = json.loads(out)
    assert math.isclose(d["mu"], mu) and d["count"] == 5
    assert math.isclose(d["epsilon"]["1e-05"], GDP(mu).epsilon(1e-5))


def test_account_pure_approx_exact_and_methods(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "account", "--pure", "0.1x10", "--delta", "0", "--json")
    assert code == 0 and math.isclose(json.loads(out)["epsilon"]["0"], 1.0, rel_tol=1e-9)
    code, out, _ = run(capsys, "account", "--pure", "0.1x10", "--approx", "1,1e-6", "--method", "basic",
                       "--delta", "1e-6", "--json")
    assert code == 0 and math.isclose(json.loads(out)["epsilon"]["1e-06"], 2.0, rel_tol=1e-9)
    code, out, _ = run(capsys, "account", "--pure", "0.1x100", "--method", "clt", "--delta", "1e-5")
    assert code == 0 and "CLT approximation" in out


def test_account_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "account", "--delta", "1e-5")
    assert code == 2 and "at least one guarantee" in err
    code, _, err = run(capsys, "account", "--pure", "-1")
    assert code == 2 and "eps" in err
    code, _, err = run(capsys, "account", "--approx", "1")
    assert code == 2 and "EPS,DELTA" in err
    code, _, err = run(capsys, "account", "--pure", "1xz")
    assert code == 2 and "COUNT" in err


def test_convert(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "convert", "--gdp", "1", "--to", "approx", "--delta", "1e-5", "--json")
    assert code == 0
    d = json.loads(out)
    assert d["from"] == "1-GDP" and d["epsilon"] == GDP(1.0).epsilon(1e-5) and d["delta"] == 1e-5
    code, out, _ = run(capsys, "convert", "--pure", "1", "--to", "gdp")
    assert code == 0 and "GDP" in out
    code, out, _ = run(capsys, "convert", "--gdp", "1", "--to", "zcdp")
    assert code == 0 and "0.5-zCDP" in out
    code, _, err = run(capsys, "convert", "--gdp", "1", "--to", "approx")
    assert code == 2 and "--delta" in err
    code, _, err = run(capsys, "convert", "--gdp", "1")
    assert code == 2 and "--delta" in err


def test_audit_examples_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "audit", "--list")
    assert code == 0 and "textbook-float-laplace-eps-1" in out
    code, out, _ = run(capsys, "audit", "laplace-eps-1", "--samples", "20000", "--json")
    assert code == 0 and json.loads(out)["violation"] is False
    code, out, _ = run(capsys, "audit", "textbook-float-laplace-eps-1", "--samples", "20000")
    assert code == 1 and "VIOLATION" in out
    code, out, _ = run(capsys, "audit", "laplace-eps-1", "--claim", "pure:0.5", "--samples", "20000")
    assert code == 1
    code, _, err = run(capsys, "audit", "no-such-mechanism")
    assert code == 2 and "unknown example" in err


def test_audit_callable(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "audit", "--callable", "verify.examples:textbook_laplace", "--data", "0",
                       "--data2", "1", "--claim", "pure:1", "--samples", "10000", "--json")
    d = json.loads(out)
    assert code == 1 and d["violation"] is True and d["epsilon_lower"] > 1
    code, _, err = run(capsys, "audit", "--callable", "verify.examples:nope", "--data", "0", "--data2", "1",
                       "--claim", "pure:1")
    assert code == 2 and "cannot load" in err
    code, _, err = run(capsys, "audit", "--callable", "verify.examples:textbook_laplace", "--data", "0",
                       "--data2", "1", "--claim", "laplace")
    assert code == 2 and "KIND:VALUE" in err


def test_certify(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "certify", "laplace-eps-1")
    assert code == 0 and "HOLDS" in out
    code, out, _ = run(capsys, "certify", "gaussian-mu-1", "--claim", "approx:1,1e-5", "--json")
    d = json.loads(out)
    assert code == 1 and d["holds"] is False and d["epsilon"] > 1
    code, _, err = run(capsys, "certify", "--mechanism", "verify.examples:GaussianMechanism",
                       "--claim", "gdp:1")
    assert code == 2 and "cannot build" in err  # a class needing arguments: a usage error


def test_json_is_finite_safe(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "account", "--gdp", "1", "--delta", "0", "--json")
    assert json.loads(out)["epsilon"]["0"] == "inf"
    assert np.isfinite(json.loads(run(capsys, "account", "--gdp", "1", "--json")[1])["mu"])


def test_account_mixed_notions_uses_pld_when_available(capsys: pytest.CaptureFixture[str]) -> None:
    from accountant import PureDP, compose

    try:
        compose([GDP(0.5), PureDP(0.1)], method="pld")
    except (ValueError, TypeError):
        code, _, err = run(capsys, "account", "--gdp", "0.5", "--pure", "0.1x100", "--delta", "1e-5")
        assert code == 2 and "cannot compose" in err
        pytest.skip("accountant has no PLD composition on this branch")
    code, out, _ = run(capsys, "account", "--gdp", "0.5", "--pure", "0.1x100", "--approx", "1,1e-6",
                       "--delta", "1e-5", "--json")
    d = json.loads(out)
    assert code == 0 and d["method"] == "pld" and d["count"] == 102
    assert isinstance(d["epsilon"]["1e-05"], float)


# ------------------------------------------------------------------- exit statuses (issue 8)


def failing_mechanism(data: object, rng: np.random.Generator) -> float:
    """An audited callable that raises (exit status 3)."""
    raise RuntimeError("sensor offline\nretry later")


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("argv", [
    ("account", "--pure", "800x2", "--delta", "0"),
    ("account", "--pure", "1e308", "--delta", "0"),
    ("account", "--gdp", "1e4", "--pure", "1"),
    ("convert", "--pure", "1e308", "--to", "zcdp"),
    ("account", "--pure", "nan"),
    ("account", "--pure", "1x10000000000000000000000000000"),
    ("account", "--approx", "1,2"),
    ("account", "--gdp", "1", "--delta", "nan"),
    ("account", "--gdp", "1", "--eps", "-inf"),
    ("convert", "--zcdp", "1e308", "--to", "approx", "--delta", "1e-5"),
    ("audit", "laplace-eps-1", "--samples", "-5"),
    ("audit", "laplace-eps-1", "--confidence", "nan"),
    ("certify", "laplace-eps-1", "--claim", "pure:1e400"),
    ("account", "--bogus"),
    ("account", "--pure"),
])
def test_never_a_traceback(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]) -> None:
    """Legal but extreme input succeeds (0) or is refused in one line (2); never a traceback."""
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's own usage errors
        code = int(exc.code or 0)
    out = capsys.readouterr()
    assert code in (0, 2), (code, out.err)
    if code == 2:
        assert "error" in one_line(out.err)
    else:
        assert out.err == ""


def test_large_legal_epsilon_is_answered(capsys: pytest.CaptureFixture[str]) -> None:
    """800-DP is useless, not invalid: basic composition of two is exactly 1600-DP at delta = 0."""
    code, out, err = run(capsys, "account", "--pure", "800x2", "--delta", "0", "--json")
    assert code == 0 and err == ""
    assert json.loads(out)["epsilon"]["0"] == pytest.approx(1600.0, rel=1e-9)


def test_convert_pure_40_to_gdp(capsys: pytest.CaptureFixture[str]) -> None:
    """mu(eps) = 2 Phi^-1(e^eps/(1 + e^eps)) (Dong, Roth & Su 2022, Cor. 2.13) is finite at eps = 40."""
    import mpmath

    code, out, err = run(capsys, "convert", "--pure", "40", "--to", "gdp", "--json")
    assert code == 0, err
    mp = mpmath.mp.clone()
    mp.dps = 50
    exact = float(-2 * mp.sqrt(2) * mp.erfinv(2 / (1 + mp.exp(40)) - 1))  # 2 Phi^-1(1 - 1/(1 + e^40))
    assert exact == pytest.approx(17.18535143694754, rel=1e-14)
    assert exact <= json.loads(out)["mu"] <= exact * (1 + 1e-9)


def test_audited_code_failure_is_exit_3(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "audit", "--callable", "tests.verify.test_cli:failing_mechanism",
                       "--data", "0", "--data2", "1", "--claim", "pure:1", "--samples", "200")
    assert code == 3
    line = one_line(err)
    assert "audited code failed" in line and "RuntimeError: sensor offline retry later" in line


def test_exit_codes_documented(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--help"], ["audit", "--help"]):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 0
        out = capsys.readouterr().out
        assert all(f"  {c}  " in out for c in "0123") and "audited code raised" in out


def test_usage_error_is_one_line_subprocess() -> None:
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "verify.cli", "account", "--pure", "1e308", "--to", "x"],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 2 and "--to" in one_line(r.stderr)
