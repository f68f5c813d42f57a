#!/usr/bin/env python3
"""schemathesis against openapi.yaml and a live server with the admin token, every check enabled.
Run with the venv's python (scripts/reliability.sh makes it). Exits non-zero on any failure or when
fewer than --min-cases test cases were generated.

    fuzz.py [--max-examples 100] [--min-cases 1000] [--seed N]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

from common import ADMIN, ROOT, Server, check, log, main, report, tempdir


def run():
    p = argparse.ArgumentParser()
    p.add_argument("--max-examples", type=int, default=100)
    p.add_argument("--min-cases", type=int, default=1000)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--workers", default="1")
    a = p.parse_args()
    st = os.path.join(os.path.dirname(sys.executable), "st")
    check(os.path.exists(st), f"schemathesis is not installed next to {sys.executable}")
    work = tempdir("fuzz")
    server = Server(f"{work}/sheetd.sqlite", workdir=work)
    server.start()
    try:
        config = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schemathesis.toml")
        cmd = [st, "--config-file", config, "run", os.path.join(ROOT, "openapi.yaml"), "--url", f"http://{server.base}",
               "-H", f"Authorization: Bearer {ADMIN}", "--checks", "all", "--max-examples", str(a.max_examples),
               "--workers", a.workers, "--request-timeout", "10", "--no-color", "--generation-database", "none",
               "--report", "junit", "--report-dir", work, "--output-truncate", "false"]
        if a.seed is not None:
            cmd += ["--seed", str(a.seed)]
        log("st " + " ".join(c if "Bearer" not in c else "Authorization: Bearer ***" for c in cmd[1:]))
        # fuzz_hooks.py keeps a schema-valid occurredAt inside the server's clock window (see there).
        here = os.path.dirname(os.path.abspath(__file__))
        env = dict(os.environ, SCHEMATHESIS_HOOKS="fuzz_hooks", PYTHONPATH=here + os.pathsep + os.environ.get("PYTHONPATH", ""))
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=work, timeout=900, env=env)
        out = proc.stdout + proc.stderr
        out = out.replace(ADMIN, "***")
        with open(os.path.join(ROOT, ".build", "schemathesis-last.txt"), "w") as f:
            f.write(out)
        tail = out[-6000:]
        cases = sum(int(n) for n in re.findall(r"(\d+) generated", out))
        m = re.search(r"Test cases:\s*\n?\s*(\d+) generated", out)
        if m:
            cases = int(m.group(1))
        check(server.alive(), "the server died under schemathesis: " + server.logs()[-12000:])
        check(proc.returncode == 0, f"schemathesis failed (exit {proc.returncode}); full output in .build/schemathesis-last.txt\n{tail}")
        check(cases >= a.min_cases, f"only {cases} test cases generated (want {a.min_cases})\n{tail}")
        code, _ = server.terminate()
        check(code == 0, "stop")
        summary = [l for l in out.splitlines() if re.search(r"generated|passed|Operations|Test Phases|Examples|Coverage|Fuzzing|Stateful", l)]
        log("\n  ".join(summary[-12:]))
    finally:
        server.ensure_stopped()
        shutil.rmtree(work, ignore_errors=True)
    report("schemathesis", {"cases": cases, "max_examples": a.max_examples, "checks": "all", "failures": 0})


if __name__ == "__main__":
    main(run)
