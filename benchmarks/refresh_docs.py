"""Refresh a measurements page of the documentation from a benchmark's output.

Runs ``python -m benchmarks.NAME [ARGS]`` as a subprocess from the repository root (with the root on
``PYTHONPATH``, so the checkout's packages are measured, installed or not), captures what it prints
to stdout, and writes it into ``docs/measurements/PAGE.md`` between two markers that record the
command, under a header giving the commit, the date and the machine (platform, CPU model and count,
load average at the start, Python, numpy and scipy, and the version of every anchor library the
benchmark imports). The prose around the markers is kept as written: a page is the text a person
wrote plus the tables a run printed, each table with its provenance.

    python -m benchmarks.refresh_docs NAME [--page PAGE] [--timeout SECONDS] [-- ARGS...]
    python -m benchmarks.refresh_docs --page PAGE [--timeout SECONDS]      # every block of PAGE
    python -m benchmarks.refresh_docs --list                               # blocks and their pages

A block is identified by its command (``NAME ARGS``): running the same command again replaces its
block, a new command appends a block at the end of the page. ``--page`` alone re-runs every
command recorded on that page. A run that fails or times out leaves the page as it was and exits
non-zero (its stderr is shown), except with ``--record-failure``: for a benchmark whose exit status
is its verdict (``soundness.py`` exits 1 on an under-report or a crash, ``audit.py`` on a verdict
different from the known one), the table is the measurement, so it is written with the exit status
in the header. A timeout never writes. The default page of a benchmark is ``PAGES[NAME]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import os
import platform
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
DOCS = ROOT / "docs" / "measurements"

#: The page each benchmark refreshes by default (``docs/measurements/<page>.md``).
PAGES = {
    "accounting": "accounting",
    "accounting_truths": "accounting",
    "bracket_cost": "accounting",
    "soundness": "soundness",
    "calibration": "calibration",
    "ledger": "calibration",
    "rdp_orders": "rdp",
    "pairs_peers": "pairs_peers",
    "audit": "audit",
    "audit_search": "audit",
    "estimators": "estimators",
    "inference": "inference",
    "one_shot_audit": "one_shot_audit",
    "bcdp": "bcdp",
    "one_run": "one_run",
    "shuffle": "samplers",
    "estimator_pieces": "estimator_pieces",
    "per_call": "estimators",
}

#: Distribution name of each library a benchmark may import (module name -> distribution).
ANCHORS = {
    "dp_accounting": "dp-accounting",
    "prv_accountant": "prv-accountant",
    "autodp": "autodp",
    "opacus": "opacus",
    "torch": "torch",
    "diffprivlib": "diffprivlib",
    "opendp": "opendp",
    "pydp": "python-dp",
    "sklearn": "scikit-learn",
    "mpmath": "mpmath",
}

#: What a run measures: a change here (not yet committed) is marked in the page's header.
CODE = ("accountant", "mechanisms", "verify", "benchmarks", "pyproject.toml")

BEGIN = re.compile(r"^<!-- BEGIN refresh_docs: (?P<cmd>.+?) -->$", re.M)
END = "<!-- END refresh_docs -->"


@dataclass(frozen=True)
class Run:
    """One benchmark run: its command, what it printed, how long it took."""

    command: str
    stdout: str
    seconds: float
    started: dt.datetime
    load: tuple[float, float, float]
    commit: str
    status: int = 0


def _git(*args: str) -> str:
    out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    return out.stdout.strip()


def commit() -> str:
    """The short commit, marked when the measured code (the packages, the benchmarks) differs from it."""
    head = _git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = _git("status", "--porcelain", "--untracked-files=no", "--", *CODE).splitlines()
    return f"{head} (with uncommitted changes)" if dirty else head


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def imported_anchors(script: Path) -> list[str]:
    """The anchor libraries a benchmark imports (its own source, and the local modules it imports)."""
    sources = [script.read_text(encoding="utf-8")]
    for local in re.findall(r"^\s*(?:from|import)\s+(\w+)", sources[0], re.M):
        if (BENCH / f"{local}.py").is_file() and BENCH / f"{local}.py" != script:
            sources.append((BENCH / f"{local}.py").read_text(encoding="utf-8"))
    text = "\n".join(sources)
    return [m for m in ANCHORS if re.search(rf"\b(?:from|import)\s+{m}\b", text)]


def machine(script: Path, load: tuple[float, float, float]) -> list[str]:
    import numpy
    import scipy

    libs = ", ".join(f"{ANCHORS[m]} {version(ANCHORS[m])}" for m in imported_anchors(script))
    return [
        f"platform {platform.platform()}",
        f"CPU {cpu_model()} x {os.cpu_count()} (load average {load[0]:.2f} / {load[1]:.2f} / "
        f"{load[2]:.2f} at the start: the machine is shared, so times vary with the load)",
        f"Python {platform.python_version()}, numpy {numpy.__version__}, scipy {scipy.__version__}"
        + (f"; anchors imported by the benchmark: {libs}" if libs else ""),
    ]


def run(name: str, args: list[str], timeout: float | None, record_failure: bool = False) -> Run:
    script = BENCH / f"{name}.py"
    if not script.is_file():
        raise SystemExit(f"no benchmark {script.relative_to(ROOT)}")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    command = shlex.join(["python", "-m", f"benchmarks.{name}", *args])
    print(f"running {command} ...", file=sys.stderr, flush=True)
    load = os.getloadavg()
    at = commit()  # at the start: the tree may move while a long benchmark runs
    started = dt.datetime.now(dt.timezone.utc)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-m", f"benchmarks.{name}", *args], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        partial = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        sys.stderr.write(partial[-4000:])
        raise SystemExit(f"{command}: timed out after {timeout} s; the page is unchanged") from exc
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
        if not (record_failure and proc.stdout.strip()):
            raise SystemExit(f"{command}: exit status {proc.returncode}; the page is unchanged")
    return Run(command, proc.stdout.rstrip("\n"), seconds, started, load, at, proc.returncode)


def block(r: Run) -> str:
    name = r.command.split()[2].removeprefix("benchmarks.")
    header = [
        f"`{r.command}`, run by `python -m benchmarks.refresh_docs` on {r.started:%Y-%m-%d %H:%M} UTC "
        f"at commit `{r.commit}`, in {r.seconds:.0f} s of wall time"
        + (f"; it exited with status {r.status} (the benchmark reports a failure: see its output)."
           if r.status else "."),
        "",
        *(f"- {line}" for line in machine(BENCH / f"{name}.py", r.load)),
        "",
        "```text",
        r.stdout,
        "```",
    ]
    return f"<!-- BEGIN refresh_docs: {r.command} -->\n" + "\n".join(header) + f"\n{END}"


def write(page: Path, r: Run) -> None:
    text = page.read_text(encoding="utf-8") if page.exists() else f"# {page.stem}\n"
    new = block(r)
    for m in BEGIN.finditer(text):
        if m.group("cmd") == r.command:
            end = text.index(END, m.end()) + len(END)
            text = text[:m.start()] + new + text[end:]
            break
    else:
        text = text.rstrip("\n") + "\n\n" + new + "\n"
    page.write_text(text, encoding="utf-8")
    print(f"{page.relative_to(ROOT)}: refreshed `{r.command}` ({r.seconds:.0f} s)", file=sys.stderr)


def commands(page: Path) -> list[tuple[str, list[str]]]:
    out = []
    for m in BEGIN.finditer(page.read_text(encoding="utf-8")):
        argv = shlex.split(m.group("cmd"))
        out.append((argv[2].removeprefix("benchmarks."), argv[3:]))
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    extra: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("name", nargs="?", help="benchmark script, without benchmarks/ and .py")
    ap.add_argument("--page", help="docs/measurements/PAGE.md (default: the benchmark's page)")
    ap.add_argument("--timeout", type=float, default=None, help="seconds before the run is abandoned")
    ap.add_argument("--list", action="store_true", help="list the commands recorded on every page")
    ap.add_argument("--record-failure", action="store_true",
                    help="write the output of a run that exits non-zero, with its exit status")
    a = ap.parse_args(argv)
    if a.list:
        for page in sorted(DOCS.glob("*.md")):
            for name, args in commands(page):
                print(f"{page.relative_to(ROOT)}: {shlex.join([name, *args])}")
        return 0
    if a.name is None and a.page is None:
        ap.error("give a benchmark NAME, or --page to re-run every command recorded on a page")
    page_name = a.page or PAGES.get(a.name or "", a.name)
    page = DOCS / f"{Path(page_name).stem}.md"
    todo = [(a.name, extra)] if a.name else commands(page)
    if not todo:
        ap.error(f"{page.relative_to(ROOT)} records no command")
    DOCS.mkdir(parents=True, exist_ok=True)
    for name, args in todo:
        write(page, run(name, args, a.timeout, a.record_failure))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
