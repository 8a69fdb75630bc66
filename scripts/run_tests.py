"""Run every stage of `make test`, independent stages side by side, and print their times.

Usage: python3 scripts/run_tests.py [--jobs N] [stage ...]   (no stage: all of them)

Each stage is a `make` target (the Makefile holds the commands; this script only schedules
them). A stage starts as soon as the stages it needs have passed, at most ``--jobs`` at a
time (default: no limit). Two cores cannot run eleven stages at full speed at once, so the
stages carry priorities: those that run on one core (the site builds, the PDF, nbgrader)
and the browser test run at normal priority, while nbval (two workers), lint and the Binder
check run under ``nice`` on whatever CPU the others leave. The unit tests (one process: a
second would only repeat its imports) run at a niceness between the two: fully in the
background, they were starved until the others ended and then ran alone on one core for
their last 8 to 22 seconds (four runs of `make test` on a 2-core machine: 305 to 316 s);
at niceness 5 they end with the other stages (two runs: 284 and 287 s).

Each stage's output goes to ``_build/test-logs/<stage>.log``; a failing stage prints the end
of its log, the stages that need it are not run, and the others go on. At the end a table
gives each stage's status, wall time, CPU time and the last line of its report (for a
skipped browser test: why). The exit status is 0 only if no stage failed.

Needs only the Python standard library (it runs before the environment exists).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "_build" / "test-logs"


class Stage(NamedTuple):
    name: str
    target: str
    needs: tuple[str, ...]
    what: str
    nice: int = 0  # added to the stage's niceness: 0 for the long chains, more for what can wait
    settings: tuple[str, ...] = ()  # make variables for this run of the target


BACKGROUND = 10  # niceness of the stages that fill in: about a tenth of a core's share under contention
UNIT_NICE = 5  # the unit tests: a third of a normal stage's CPU share, enough to end with the others


# Listed in the order they start when --jobs limits them: the site build early, since the
# browser test and the PDF need it.
STAGES = (
    Stage("env", "env", (), ".venv from requirements-dev.txt (pip cache)"),
    Stage("reader", "env-reader", (), ".venv-reader from requirements.txt alone, kernel posenc-reader"),
    Stage("build", "test-build", ("env",), "book built with -W from the outputs nbval verifies"),
    Stage(
        "student",
        "test-student",
        ("env",),
        "student edition run the Colab way (set-up cell installs posenc), site built -W, leak check",
    ),
    Stage(
        "notebooks",
        "test-notebooks",
        ("env", "reader"),
        "nbval strict: every chapter re-executed in the reader kernel and compared",
        BACKGROUND,
    ),
    Stage("pdf", "test-pdf", ("build",), "the book as one PDF (XeLaTeX), read back"),
    Stage("browser", "test-browser", ("build",), "built site in headless Chromium"),
    Stage(
        "unit",
        "test-unit",
        ("env",),
        "unit and property tests of posenc and the tooling, in one process",
        UNIT_NICE,
        ("UNIT_WORKERS=0",),
    ),
    Stage("nbgrader", "test-nbgrader", ("env",), "nbgrader generate_assignment, autograde, feedback"),
    Stage("lint", "lint", ("env",), "ruff, chapters included; the workflows' schema and audit", BACKGROUND),
    Stage(
        "binder",
        "test-binder",
        ("notebooks",),
        "the reader kernel nbval used is Binder's: requirements.txt only",
        BACKGROUND,
    ),
)

OK = ("passed", "skipped")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
SUMMARY = re.compile(r"^=+ (.*\b(passed|failed|skipped|error)\b.*) =+$")


def report_line(log: str) -> str:
    """The most telling line of a stage's log: a skip reason, pytest's or Sphinx's summary, or the
    last line with a word in it (colour codes removed, so rules of ``=`` do not count)."""
    log = ANSI.sub("", log)
    skip = re.search(r"SKIPPED \[\d+\] [^:]+:\d+: ((?:browser|PDF) test SKIPPED: [^\n]*)", log)
    if skip:
        return skip.group(1)
    summaries = [m.group(1) for line in log.splitlines() if (m := SUMMARY.match(line.strip()))]
    if summaries:
        return summaries[-1]
    sphinx = re.findall(r"^build succeeded\b.*$", log, re.MULTILINE)
    if sphinx:
        return sphinx[-1].strip()
    lines = [
        line.strip() for line in log.splitlines() if re.search(r"\w", line) and not line.startswith("make")
    ]
    return lines[-1][:100] if lines else ""


def command_of(stage: Stage) -> list[str]:
    """The command that runs ``stage``: its make target with its settings, under nice if it waits."""
    command = ["make", "--no-print-directory", stage.target, *stage.settings]
    return ["nice", "-n", str(stage.nice), *command] if stage.nice else command


def status_of(returncode: int, log: str) -> str:
    if returncode != 0:
        return "FAILED"
    return "skipped" if "test SKIPPED" in log else "passed"


def run(stages: tuple[Stage, ...], jobs: int) -> int:
    LOGS.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    pending = list(stages)
    running: dict[str, tuple[subprocess.Popen, float, object]] = {}
    results: dict[str, tuple[str, float, str]] = {}
    cpu: dict[str, float] = {}

    def stamp() -> str:
        return f"[{time.perf_counter() - start:5.0f} s]"

    while pending or running:
        for stage in list(pending):
            if len(running) >= jobs:
                break
            failed_need = [
                n for n in stage.needs if n in results and results[n][0] not in ("passed", "skipped")
            ]
            if failed_need:
                pending.remove(stage)
                results[stage.name] = ("not run", 0.0, f"needs {', '.join(failed_need)}")
                continue
            if all(n in results or n not in {s.name for s in stages} for n in stage.needs):
                pending.remove(stage)
                log = open(LOGS / f"{stage.name}.log", "w")  # noqa: SIM115 (closed when the stage ends)
                proc = subprocess.Popen(
                    command_of(stage),
                    cwd=ROOT,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
                running[stage.name] = (proc, time.perf_counter(), log)
                niced = f" (nice {stage.nice})" if stage.nice else ""
                print(f"{stamp()} start {stage.name}{niced}: {stage.what}", flush=True)
        time.sleep(0.2)
        for name, (proc, began, log) in list(running.items()):
            # wait4 instead of poll: it also returns the CPU time of the stage's whole
            # process tree (make and every process it waited for)
            pid, wait_status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid == 0:
                continue
            proc.returncode = os.waitstatus_to_exitcode(wait_status)
            cpu[name] = usage.ru_utime + usage.ru_stime
            log.close()
            del running[name]
            text = (LOGS / f"{name}.log").read_text(errors="replace")
            status = status_of(proc.returncode, text)
            results[name] = (status, time.perf_counter() - began, report_line(text))
            print(f"{stamp()} {status} {name} ({results[name][1]:.0f} s): {results[name][2]}", flush=True)
            if status == "FAILED":
                tail = "\n".join(text.splitlines()[-60:])
                print(
                    f"----- end of {LOGS.relative_to(ROOT) / (name + '.log')} -----\n{tail}\n-----",
                    flush=True,
                )

    total = time.perf_counter() - start
    limit = f"up to {jobs} stages at once" if jobs < len(stages) else "every stage as soon as it could start"
    width = max(len(s.name) for s in stages)
    print(f"\n{'stage':<{width}}  {'status':<8} {'time':>6} {'CPU':>6}  report")
    for stage in stages:
        status, seconds, note = results[stage.name]
        used = f"{cpu[stage.name]:5.0f}s" if stage.name in cpu else f"{'':6}"
        print(f"{stage.name:<{width}}  {status:<8} {seconds:5.0f}s {used}  {note}")
    print(
        f"{'total':<{width}}  {'':<8} {total:5.0f}s {sum(cpu.values()):5.0f}s  "
        f"wall time, {limit}; CPU time of every stage's processes"
    )
    failed = [name for name, (status, _, _) in results.items() if status not in OK]
    if failed:
        print(f"make test FAILED: {', '.join(failed)} (logs in {LOGS.relative_to(ROOT)}/)")
        return 1
    skipped = [name for name, (status, _, _) in results.items() if status == "skipped"]
    print("make test passed" + (f"; SKIPPED: {', '.join(skipped)} (reason above)" if skipped else ""))
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--jobs", type=int, default=len(STAGES), help="stages run at once (default: no limit)"
    )
    parser.add_argument("stages", nargs="*", help="stages to run (default: all); needs are not added")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    known = {s.name for s in STAGES}
    unknown = [s for s in args.stages if s not in known]
    if unknown:
        parser.error(f"unknown stage(s) {unknown}; choose from {sorted(known)}")
    stages = tuple(s for s in STAGES if not args.stages or s.name in args.stages)
    return run(stages, args.jobs)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
