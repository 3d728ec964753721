"""Issue 9, step 6: a user's script using compose, a calibrated mechanism and an audit passes
``mypy --strict`` (the public API's types are precise), and it runs."""

from __future__ import annotations

import os
import runpy
from pathlib import Path

import pytest
from mypy import api

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("user_script.py")


WRONG = ("from accountant import GDP, PureDP, compose\n"
         "mu: float = compose([PureDP(1.0), PureDP(2.0)]).mu\n"  # an FDP has no mu
         "ok: GDP = compose([GDP(1.0), GDP(2.0)])\n")


@pytest.fixture(scope="module")
def mypy_output(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One mypy --strict run (under the project's configuration) over the user script and a
    script with a deliberate mistake."""
    wrong = tmp_path_factory.mktemp("typing") / "wrong.py"
    wrong.write_text(WRONG)
    saved = os.environ.get("MYPYPATH")
    os.environ["MYPYPATH"] = str(ROOT)
    try:
        out, err, _ = api.run(["--strict", "--config-file", str(ROOT / "pyproject.toml"),
                               "--no-incremental", "--cache-dir", os.devnull, str(SCRIPT),
                               str(wrong)])
    finally:
        if saved is None:
            del os.environ["MYPYPATH"]
        else:
            os.environ["MYPYPATH"] = saved
    return out + err


def test_user_script_passes_mypy_strict(mypy_output: str) -> None:
    assert "user_script.py" not in mypy_output, mypy_output


def test_types_are_precise_enough_to_catch_a_mistake(mypy_output: str) -> None:
    errors = [line for line in mypy_output.splitlines() if "error:" in line]
    assert len(errors) == 1 and "wrong.py:2" in errors[0] and '"FDP" has no attribute "mu"' in errors[0]


def test_user_script_runs(capsys: pytest.CaptureFixture[str]) -> None:
    runpy.run_path(str(SCRIPT), run_name="__main__")
    assert len(capsys.readouterr().out.split()) == 6
