"""Issue 27: the command line in daily use: readable guarantees, --tol validated wherever a PLD is
built, CLT/RDP on request, honest timings, stated defaults, strict spec files, a closed pipe."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from accountant.pld.settings import DEFAULT_TOL
from verify.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's usage errors
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_advanced_composition_is_readable(capsys: pytest.CaptureFixture[str]) -> None:
    for extra in ((), ("--json",)):
        code, out, _ = run(capsys, "account", "--pure", "0.1x100", "--delta", "1e-5", "--method",
                           "advanced", *extra)
        assert code == 0 and len(out) < 400, out
        assert "<function" not in out and "array(" not in out and "0x" not in out
        assert "advanced composition of 100 releases" in out


@pytest.mark.parametrize("command", [
    ("account", "--gdp", "0.5"),
    ("compose", "--gdp", "0.5"),
    ("dpsgd", "--sampling-rate", "0.01", "--sigma", "1", "--steps", "10", "--delta", "1e-5"),
])
@pytest.mark.parametrize("tol", ["0", "nan", "-1", "=-1e-3", "1.5", "abc"])
def test_tol_is_validated_wherever_a_pld_is_built(capsys: pytest.CaptureFixture[str],
                                                  command: tuple[str, ...], tol: str) -> None:
    code, out, err = run(capsys, *command, *(("--tol" + tol,) if tol.startswith("=") else ("--tol", tol)))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "--tol" in err, err
    assert "[1e-09, 1]" in err or "invalid float value" in err, err


def test_compose_takes_tol(capsys: pytest.CaptureFixture[str]) -> None:
    flags = ("compose", "--gdp", "0.5x3", "--pure", "0.1", "--json", "--tol")
    fine, coarse = (json.loads(run(capsys, *flags, tol)[1]) for tol in ("1e-4", "0.1"))
    lo_f, hi_f = fine["epsilon_bracket"]["1e-05"]
    lo_c, hi_c = coarse["epsilon_bracket"]["1e-05"]
    assert hi_f - lo_f < hi_c - lo_c and hi_f <= hi_c


def test_dpsgd_comparisons_only_on_request(capsys: pytest.CaptureFixture[str]) -> None:
    base = ("dpsgd", "--sampling-rate", "0.01", "--sigma", "1", "--steps", "100", "--delta", "1e-5", "--json")
    plain = json.loads(run(capsys, *base)[1])
    assert plain["clt_epsilon"] is None and plain["clt_mu"] is None and plain["rdp_epsilon"] is None
    both = json.loads(run(capsys, *base, "--also", "clt,rdp")[1])
    assert both["epsilon"] == plain["epsilon"]
    assert both["epsilon_lower"] <= both["epsilon"] < both["rdp_epsilon"]
    assert both["clt_mu"] is not None
    only = json.loads(run(capsys, *base, "--also", "rdp")[1])
    assert only["rdp_epsilon"] is not None and only["clt_epsilon"] is None
    code, _, err = run(capsys, *base, "--also", "prv")
    assert code == 2 and "--also" in err and err.count("\n") == 1


def test_timings_are_of_the_whole_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "calibrate", "--target-epsilon", "2", "--delta", "1e-5", "--sampling-rate",
                       "0.05", "--steps", "50", "--json", "--rtol", "1e-2")
    d = json.loads(out)
    assert code == 0 and d["seconds"] > 0 and d["cpu_seconds"] > 0
    code, out, _ = run(capsys, "dpsgd", "--sampling-rate", "0.01", "--sigma", "1", "--steps", "10",
                       "--delta", "1e-5")
    assert "(the whole command)" in out and "s CPU" in out


def test_timing_counts_what_follows_the_solve() -> None:
    """The figure is taken after the last computation (the certified epsilon), in a fresh process
    so the process's CPU includes its start-up."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    res = subprocess.run([sys.executable, "-m", "verify.cli", "calibrate", "--target-epsilon", "2",
                          "--delta", "1e-5", "--sampling-rate", "0.05", "--steps", "50", "--rtol", "1e-2",
                          "--json"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    d = json.loads(res.stdout)
    assert d["cpu_seconds"] >= 0.2  # the imports alone (numpy, scipy, the accountant)


def _help(command: str) -> str:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    choices = sub.choices
    assert isinstance(choices, dict)
    return str(choices[command].format_help())


def test_defaults_are_stated_in_help() -> None:
    account = " ".join(_help("account").split())
    assert "report epsilon at this delta (repeatable; default: 1e-05)" in account
    assert "(default: auto)" in account and "(default: 3e-05)" in account
    assert f"{DEFAULT_TOL:g}" == "3e-05"
    dpsgd = " ".join(_help("dpsgd").split())
    assert "(default: 3e-05)" in dpsgd and "default: neither" in dpsgd
    compose = " ".join(_help("compose").split())
    assert "the file's delta, else 1e-05" in compose
    for command, stated in (("audit", "draws per input (default: 100000)"),
                            ("calibrate", "relative precision of the answer (default: 0.001)")):
        text = " ".join(_help(command).split())
        assert stated in text
        assert "(default: None)" not in text and "(default: False)" not in text


def _spec(tmp_path: Path, body: str) -> str:
    p = tmp_path / "spec.toml"
    p.write_text(body)
    return str(p)


@pytest.mark.parametrize("body, words", [
    ('[[release]]\ngdp = "0.5"\n', ("release 1", "gdp must be a number", "the string '0.5'")),
    ('[[release]]\napprox = ["1", 1e-6]\n', ("release 1", "approx must be a number")),
    ('[[release]]\npure = true\n', ("pure must be a number", "bool")),
    ('[[release]]\nsubsampled_gaussian = {sigma = 1.0, sampling_rate = 0.01}\n',
     ("unknown key(s) sigma", "allowed keys: noise_multiplier, sampling_rate")),
    ('[[release]]\nsubsampled_gaussian = {sampling_rate = 0.01}\n',
     ("lacks key(s) noise_multiplier", "allowed keys: noise_multiplier, sampling_rate")),
    ('[[release]]\nrandomized_response = {eps = 1.0, k = "3"}\n', ("k must be an integer",)),
    ('[[release]]\ngpd = 0.5\n', ("unknown: gpd", "give exactly one of")),
    ('delta = "1e-5"\n[[release]]\ngdp = 0.5\n', ("delta must be a number",)),
    ('detla = 1e-5\n[[release]]\ngdp = 0.5\n', ("unknown top-level key(s) detla", "allowed")),
    ('method = "fast"\n[[release]]\ngdp = 0.5\n', ("method must be one of",)),
])
def test_spec_types_are_strict(capsys: pytest.CaptureFixture[str], tmp_path: Path, body: str,
                               words: tuple[str, ...]) -> None:
    code, out, err = run(capsys, "compose", _spec(tmp_path, body))
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert all(w in err for w in words), err
    assert "KeyError" not in err and "Traceback" not in err


def test_a_valid_spec_still_composes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    body = ('delta = [1e-5, 1e-6]\nmethod = "pld"\n[[release]]\ngdp = 0.5\ncount = 2\n'
            '[[release]]\napprox = [0.1, 1e-7]\n[[release]]\nrandomized_response = {eps = 1, k = 3}\n'
            '[[release]]\nsubsampled_gaussian = {noise_multiplier = 1, sampling_rate = 0.01}\ncount = 10\n')
    code, out, _ = run(capsys, "compose", _spec(tmp_path, body), "--json", "--tol", "1e-3")
    d = json.loads(out)
    assert code == 0 and d["count"] == 14 and set(d["epsilon"]) == {"1e-05", "1e-06"}


def test_a_closed_pipe_ends_quietly() -> None:
    """``dpcert ... --json | head -c 0``: the reader is gone before the command writes."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "verify.cli", "account", "--pure", "0.1x100",
                             "--method", "advanced", "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=ROOT)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 0
    assert err == "", err


def test_head_reads_part_and_nothing_is_printed_after() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = (f"{sys.executable} -m verify.cli account --pure 0.1x100 --method advanced --json | head -c 30; "
           "echo")
    res = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert res.stdout.startswith('{"guarantee"') and "Traceback" not in res.stderr, res.stderr
