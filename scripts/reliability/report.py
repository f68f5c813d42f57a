#!/usr/bin/env python3
"""Renders RELIABILITY.md from the JSON lines the drivers wrote (scripts/reliability.sh runs it).

    report.py RESULTS.jsonl RELIABILITY.md
"""
import datetime
import json
import os
import platform
import subprocess
import sys

TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "RELIABILITY.template.md")


CRASH_LABELS = {"postgres": "PostgreSQL, `synchronous_commit` on"}


def load(path):
    out = {}
    for line in open(path):
        line = line.strip()
        if line:
            r = json.loads(line)
            out.setdefault(r["driver"], []).append(r)
    return out


def run():
    results, target = sys.argv[1], sys.argv[2]
    r = load(results)
    crash = {x["synchronous"]: x for x in r["crash"]}
    g = r["graceful"][0]
    st = r["storage"][0]["cases"]
    con = r["concurrency"][0]
    pgcon = r["concurrency-postgres"][0]
    cor = r["corpus"][0]
    slow = r["slow"][0]
    hostile = r["hostile"][0]
    auth = r["auth"][0]
    fuzz = r["schemathesis"][0]
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = "?"
    lock = st["database locked by another process"]
    full = st["full disk (8 MB tmpfs)"]
    rofile = st["read-only database file"]
    try:
        import tempfile
        tmp_fs = subprocess.run(["df", "--output=fstype", tempfile.gettempdir()], capture_output=True, text=True).stdout.split()[-1]
        tmp_fs = f"{tmp_fs} ({tempfile.gettempdir()})"
    except (OSError, IndexError):
        tmp_fs = "the temporary directory's file system"
    full_ratio = "?"
    if "NORMAL" in crash and "FULL" in crash and crash["NORMAL"]["acknowledged_events"]:
        full_ratio = round(100 * crash["FULL"]["acknowledged_events"] / crash["NORMAL"]["acknowledged_events"])
    values = {
        "tmp_fs": tmp_fs, "full_ratio": full_ratio,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit,
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores (shared with other builds)",
        "crash_rows": "\n".join(
            f"| {CRASH_LABELS.get(m, m)} | {c['rounds']} | {c['clients']} | {c['acknowledged_events']} | **{c['lost']}** | "
            f"{'n/a (PostgreSQL: WAL recovery)' if m == 'postgres' else 'ok, every round'} | "
            f"{c['replays_checked']} | {c['restart_ms_median']} ms (max {c['restart_ms_max']} ms) |"
            for m, c in sorted(crash.items(), key=lambda kv: ["NORMAL", "FULL", "postgres"].index(kv[0]))),
        "pg_crash_note": (f"In this run {crash['postgres']['database_crashes']} of the {crash['postgres']['rounds']} rounds "
                          "crashed the database as well; its restart with WAL recovery took at most "
                          f"{crash['postgres']['database_restart_ms_max']} ms (the restart column is sheetd's, once "
                          "the database was up)." if "postgres" in crash else "(not run)"),
        "pgcon_conns": pgcon["connections"], "pgcon_requests": pgcon["requests"],
        "pgcon_ops": ", ".join(f"{v} {k}" for k, v in sorted(pgcon["by_op"].items())),
        "pgcon_p50": pgcon["p50_ms"], "pgcon_p99": pgcon["p99_ms"], "pgcon_etags": pgcon["distinct_etags"],
        "g_rounds": g["rounds"], "g_clients": g["clients"], "g_acked": g["acknowledged_events"],
        "g_stop_median": g["stop_ms_median"], "g_stop_max": g["stop_ms_max"], "g_drain": g["drain_timeout_s"],
        "lock_acked": lock["acked"], "lock_refused": lock["refused"], "lock_latency": lock["refusal_latency_ms_max"],
        "lock_recovery": lock["recovery_ms"],
        "full_acked": full["acked"], "full_refused": full["refused"], "full_latency": full["refusal_latency_ms_max"],
        "full_recovery": full["recovery_ms"], "rofile_recovery": rofile["recovery_ms"],
        "con_conns": con["connections"], "con_requests": con["requests"], "con_ops": ", ".join(f"{v} {k}" for k, v in sorted(con["by_op"].items())),
        "con_p50": con["p50_ms"], "con_p99": con["p99_ms"], "con_etags": con["distinct_etags"],
        "fuzz_cases": fuzz["cases"], "fuzz_examples": fuzz["max_examples"],
        "cor_cases": cor["cases"], "cor_repeat": cor["repeat"], "cor_requests": cor["requests"],
        "cor_slowest": cor["slowest_ms"], "cor_slowest_case": cor["slowest_case"],
        "cor_cpu_case_max": cor["cpu_case_max_ms"], "cor_cpu_case": cor["cpu_case_max"], "cor_cpu_p99": cor["cpu_request_p99_ms"],
        "cor_cpu_max": cor["cpu_request_max_ms"], "cor_par_seconds": cor["parallel_seconds"], "cor_par_requests": cor["parallel_requests"],
        "cor_hz_p50": cor["healthz_p50_ms"], "cor_hz_p99": cor["healthz_p99_ms"], "cor_hz_probes": cor["healthz_probes"],
        "cor_hz_alone_p50": cor["healthz_alone_p50_ms"], "cor_hz_alone_p99": cor["healthz_alone_p99_ms"],
        "cor_rss_first": cor["rss_kb_first"], "cor_rss_warm": cor["rss_kb_after_warmup"], "cor_rss_last": cor["rss_kb_last"],
        "cor_sweep_n": cor.get("sweep_requests", "?"), "cor_sweep_unanswered": cor.get("sweep_unanswered", "?"),
        "cor_sweep_slowest": cor.get("sweep_slowest_ms", "?"), "cor_sweep_fallbacks": cor.get("sweep_fallbacks", "?"),
        "slow_n": slow["slow_connections"], "slow_b50": slow["baseline_p50_ms"], "slow_b99": slow["baseline_p99_ms"],
        "slow_d50": slow["during_p50_ms"], "slow_d99": slow["during_p99_ms"], "slow_req": slow["during_requests"],
        "slow_idle": slow["idle_closed"], "slow_timeout": slow["idle_timeout_s"], "slow_within": slow["idle_closed_within_s"],
        "auth_kinds": auth["bad_token_kinds"], "auth_routes": auth["routes"], "auth_checked": auth["rejections_checked"],
        "auth_lines": auth["log_lines_scanned"],
        "h_writes": hostile["writes"], "h_cuts": hostile["cuts"], "h_rss0": hostile["rss_start_mib"], "h_rss_peak": hostile["rss_peak_mib"],
        "h_lp_settled": hostile.get("closed_1000_settled_s", "?"), "h_lp_limited": hostile.get("closed_320_settled_s", "?"),
        "h_expired": hostile["expired_stream_lasted_s"], "h_accepted": hostile["events_accepted_of_700"],
        "h_cycles": hostile["disconnect_cycles"], "h_warns": hostile["warn_lines"],
    }
    text = open(TEMPLATE).read()
    for k, v in values.items():
        text = text.replace("{{" + k + "}}", str(v))
    missing = [part.split("}}")[0] for part in text.split("{{")[1:]]
    if missing:
        raise SystemExit(f"report.py: unfilled fields {missing}")
    with open(target, "w") as f:
        f.write(text)


if __name__ == "__main__":
    run()
