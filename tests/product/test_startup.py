"""Start-up: `import accountant` and `dpcert --help` load no scipy, sympy or mechanisms (their
exports load on first use); the lazy exports behave as the eager ones did."""

from __future__ import annotations

import subprocess
import sys

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


def test_lazy_exports_behave_like_eager_ones() -> None:
    import accountant
    import verify
    import verify.audit.core  # binding the subpackage must not hide the function verify.audit

    assert callable(verify.audit) and callable(verify.certify)
    assert accountant.GDP(1.0).mu == 1.0 and "dpsgd_noise_multiplier" in dir(accountant)
    assert accountant.pld.distribution.PLD is accountant.PLD  # a submodule used as an attribute
    assert all(hasattr(accountant, name) for name in accountant.__all__)
