"""Start-up: `import accountant` and `dpcert --help` load no scipy, sympy or mechanisms (their
exports load on first use); `dpcert dpsgd` loads what its accounting needs (numpy, mpmath: no
scipy at all) and none of the rest; the lazy exports behave as the eager ones did."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("scipy", "sympy", "mechanisms", "verify.audit", "accountant.notions")


def loaded_after(code: str) -> set[str]:
    probe = f"{code}\nimport sys\nprint(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_import_accountant_and_help_are_light() -> None:
    assert not {m for m in loaded_after("import accountant") if m.split(".")[0] in HEAVY or m in HEAVY}
    mods = loaded_after("import contextlib, io\nfrom verify.cli import main\n"
                        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
                        "    main(['--help'])")
    assert not {m for m in mods if m.split(".")[0] in HEAVY or m in HEAVY}


#: What ``dpcert dpsgd`` must not load: the other commands' libraries, and scipy (its accounting
#: runs on numpy's FFT, ``accountant.core.normal`` and ``accountant.core.recurrence``).
NOT_FOR_DPSGD = ("sympy", "matplotlib", "mechanisms", "verify.audit", "verify.certify", "verify.training",
                 "accountant.extensions", "scipy", "dp_accounting")


def test_dpsgd_command_loads_only_its_accounting() -> None:
    mods = loaded_after("import contextlib, io\nfrom verify.cli import main\n"
                        "with contextlib.redirect_stdout(io.StringIO()):\n"
                        "    assert main(['dpsgd', '--sampling-rate', '0.01', '--sigma', '1',\n"
                        "                 '--steps', '1', '--delta', '1e-5']) == 0")
    assert "accountant.pld.distribution" in mods  # the probe did run the command
    assert not {m for m in mods if any(m == h or m.startswith(h + ".") for h in NOT_FOR_DPSGD)}


#: (argv, what the one-line error must say, modules it must not have loaded, one it ran with)
BAD_INPUTS = [
    (["dpsgd", "--sampling-rate", "1.5", "--sigma", "1", "--steps", "1", "--delta", "1e-5"],
     "sampling_rate must lie in (0.0, 1.0], got 1.5", NOT_FOR_DPSGD, "accountant.compose.dpsgd"),
    (["power", "--claim", "pure:-1", "--truth", "pure:1.5"],
     "--claim pure:-1: eps must lie in [0.0, inf), got -1.0", ("verify.audit",), "accountant.notions"),
    (["power", "--claim", "pure:1", "--truth", "gdp:nan"],
     "--truth gdp:nan: mu must lie in (0.0, inf), got nan", ("verify.audit",), "accountant.notions"),
    (["audit", "--callable", "math:pi", "--data", "0", "--data2", "1", "--claim", "pure:1"],
     "--callable math:pi is a float, not callable", ("verify.audit",), "verify.cli.audit"),
    (["certify", "--mechanism", "nosuch", "--claim", "pure:1"],
     "expected MODULE:NAME, got 'nosuch'", ("verify.certify",), "verify.cli.certify"),
]


@pytest.mark.parametrize(("argv", "message", "unloaded", "loaded"), BAD_INPUTS,
                         ids=[" ".join(case[0][:3]) for case in BAD_INPUTS])
def test_bad_input_is_refused_before_the_engine_is_loaded(argv: list[str], message: str,
                                                           unloaded: tuple[str, ...], loaded: str) -> None:
    # the error path (one line, exit status 2) loads no more than reading the inputs needs
    mods = loaded_after("import contextlib, io\nfrom verify.cli import main\n"
                        "with contextlib.redirect_stderr(io.StringIO()) as err:\n"
                        f"    assert main({argv!r}) == 2\n"
                        "line = err.getvalue()\n"
                        f"assert line.count('\\n') == 1 and {message!r} in line, line")
    assert loaded in mods  # the probe did run the command
    assert not {m for m in mods if any(m == h or m.startswith(h + ".") for h in unloaded)}


def test_lazy_exports_behave_like_eager_ones() -> None:
    import accountant
    import verify
    import verify.audit.core  # binding the subpackage must not hide the function verify.audit

    assert callable(verify.audit) and callable(verify.certify)
    assert accountant.GDP(1.0).mu == 1.0 and "dpsgd_noise_multiplier" in dir(accountant)
    assert accountant.pld.distribution.PLD is accountant.PLD  # a submodule used as an attribute
    assert all(hasattr(accountant, name) for name in accountant.__all__)
