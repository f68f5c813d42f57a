#!/usr/bin/env python3
"""Turns bench/run.sh's results.tsv into the Markdown section of BENCHMARKS.md (between the markers
of the run's mode; the rest of the file is kept). usage: report.py RESULTS.tsv BENCHMARKS.md"""
import json, os, re, statistics, sys, datetime

results, target = sys.argv[1], sys.argv[2]
E = os.environ
clk = int(E["R_CLK_TCK"])

rows = []
for line in open(results):
    scenario, rnd, kind, js, ticks, hwm, ready, startup, dbb = line.rstrip("\n").split("\t")
    d = json.loads(js)
    req = max(1, d["requests"])
    rows.append(dict(scenario=scenario, round=int(rnd), kind=kind, req=d["requests"],
                     rps=d["requests"] / d["duration_us"] * 1e6, p50=d["p50_us"] / 1000, p99=d["p99_us"] / 1000,
                     cpu=int(ticks) * 1e6 / clk / req, hwm=int(hwm or 0) / 1024, ready=int(ready) / 1000,
                     startup=int(startup or 0) / 1000, errors=d["errors"] + d["status_errors"], dbb=int(dbb)))

def med(xs): return statistics.median(xs) if xs else float("nan")
def spread(xs, fmt): return f"{fmt.format(med(xs))} ({fmt.format(min(xs))}–{fmt.format(max(xs))})" if xs else "–"

LABEL = {"get": "Decision GET", "get-nc": "Decision GET, decision cache off (every decision computed; ten card sheets, three counted per user)", "get304": "Decision GET, If-None-Match (304)", "put": "Count PUT",
         "dismiss": "Dismissal POST", "open": "Presentation POST (opened)", "impression": "Impression POST", "mix": "Mix 80/15/5", "scale": "Decision GET, 10k vs 1M users",
         "scale-nc": "Decision GET, 10k vs 1M users, decision cache off",
         "get-all": f"Decision GET, {E.get('R_ALL_THREADS', '?')} workers (one per core, wrk included)"}
SERVER = {"http_fixed": "C yardstick: fixed JSON", "http_fixed_ten": "C yardstick: fixed JSON (the ten-card body's size)", "sqlite_upsert": "C yardstick: SQLite UPSERT",
          "sheetd": "sheetd", "sheetd-scale": "sheetd, 1M users",
          "sheetd-nc": "sheetd, cache off", "sheetd-ten-nc": "sheetd, cache off, ten card sheets", "sheetd-scale-nc": "sheetd, 1M users, cache off"}
order = [s for s in ["get", "get-nc", "get304", "put", "dismiss", "open", "impression", "mix", "get-all", "scale", "scale-nc"] if any(r["scenario"] == s for r in rows)]

def pick(scenario, kind): return [r for r in rows if r["scenario"] == scenario and r["kind"] == kind]
def ratios(scenario, a, b, key="rps"):
    out = []
    for rnd in sorted({r["round"] for r in rows if r["scenario"] == scenario}):
        x = [r for r in pick(scenario, a) if r["round"] == rnd]
        y = [r for r in pick(scenario, b) if r["round"] == rnd]
        if x and y and y[0][key] > 0: out.append(x[0][key] / y[0][key])
    return out

def db_size(kind, rs):
    """sheetd's database file plus its WAL right after the measured run (the yardsticks: –)."""
    return f"{max(r['dbb'] for r in rs) / 1048576:.1f}" if kind.startswith("sheetd") else "–"

out = []
out.append(f"<!-- bench:{E['R_MODE']}:begin (written by bench/report.py; edit outside the markers) -->")
mode_title = "Quick run" if E["R_MODE"] == "quick" else "Full run"
out.append(f"### {mode_title}: `{E['R_COMMAND'].strip()}`")
out.append("")
out.append(f"- Date: {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}; commit `{E['R_COMMIT']}`")
out.append(f"- Machine: {E['R_CPU']}, {E['R_NPROC']} cores, {E['R_MEM']}, Linux {E['R_KERNEL']}; load average "
           f"{E['R_LOAD_START']} at the start, {E['R_LOAD_END']} at the end (wrk and other work share the cores)")
out.append(f"- Software: Swift {E['R_SWIFT']}, libmicrohttpd {E['R_MHD']}, SQLite {E['R_SQLITE']}, {E['R_WRK']}")
out.append(f"- Load: wrk -t1 -c{E['R_CONNS']} on 127.0.0.1, {E['R_ROUNDS']} interleaved rounds of {E['R_DUR']} s "
           f"after a warm-up (every user's decision requested once, in turn, then {E['R_WARM2']} s of the scenario), every server freshly started; {E['R_THREADS']} MHD worker thread(s) per server (the cores but one, "
           f"which wrk needs) unless the row says otherwise; "
           f"users picked uniformly at random, each request with that user's own HS256 token; sheetd with --access-log false")
out.append(f"- Data: {int(E['R_USERS']):,} users preloaded in {int(E['R_PRELOAD_MS'])/1000:.1f} s, database "
           f"{int(E['R_DB_BYTES'])/1048576:.1f} MiB" +
           (f"; {int(E['R_SCALE_USERS']):,} users preloaded in {int(E['R_SCALE_PRELOAD_MS'])/1000:.1f} s, database "
            f"{int(E['R_SCALE_DB_BYTES'])/1048576:.1f} MiB (requests spread over a random sample of 20,000 of them)"
            if E["R_SCALE"] == "1" else ""))
out.append(f"- Decision body: {E['R_BODY']} bytes on average (the yardsticks answer GETs with a fixed JSON body of that size); "
           f"the ten-card scenario's: {E.get('R_TEN_BODY', '?')} bytes (its yardstick answers that size)")
out.append("")
out.append("| scenario | server | runs | req/s median (min–max) | ratio to yardstick (min–max) | p50 ms | p99 ms median (min–max) | CPU µs/req median (min–max) | peak RSS MiB | database + WAL after, MiB | errors |")
out.append("|---|---|---|---|---|---|---|---|---|---|---|")
for s in order:
    kinds = [k for k in ["http_fixed", "http_fixed_ten", "sqlite_upsert", "sheetd", "sheetd-scale", "sheetd-nc", "sheetd-ten-nc", "sheetd-scale-nc"] if pick(s, k)]
    base = kinds[0]
    for k in kinds:
        rs = pick(s, k)
        ratio = "–"
        if k != base:
            rr = ratios(s, k, base)
            cr = ratios(s, k, base, "cpu")
            ratio = f"{spread(rr, '{:.2f}')}; CPU {med(cr):.2f}×" if rr else "–"
        out.append(f"| {LABEL[s]} | {SERVER[k]} | {len(rs)} | {spread([r['rps'] for r in rs], '{:,.0f}')} | {ratio} | "
                   f"{med([r['p50'] for r in rs]):.2f} | {spread([r['p99'] for r in rs], '{:.2f}')} | "
                   f"{spread([r['cpu'] for r in rs], '{:.1f}')} | {max(r['hwm'] for r in rs):.1f} | "
                   f"{db_size(k, rs)} | {sum(r['errors'] for r in rs)} |")
out.append("")

# Targets
t = []
def verdict(ok): return "**met**" if ok else "**missed**"
# A ratio that two decimals would round onto its target gets a third, so that "0.75×, missed" never
# reads as a contradiction.
def rx(x, target): return f"{x:.3f}×" if round(x, 2) == target and x != target else f"{x:.2f}×"
if pick("get", "sheetd"):
    rr = ratios("get", "sheetd", "http_fixed"); p99 = med([r["p99"] for r in pick("get", "sheetd")])
    t.append(("Decision GET ≥ 0.75× fixed-JSON yardstick req/s, p99 < 5 ms", f"{rx(med(rr), 0.75)}, p99 {p99:.2f} ms",
              verdict(med(rr) >= 0.75 and p99 < 5)))
    cr = ratios("get", "sheetd", "http_fixed", "cpu")
    t.append(("Cached decision GET: server CPU/request ≤ 1.15× the fixed-JSON yardstick's", f"CPU {rx(med(cr), 1.15)}",
              verdict(med(cr) <= 1.15)))
if pick("get-nc", "sheetd-ten-nc"):
    cr = ratios("get-nc", "sheetd-ten-nc", "http_fixed_ten", "cpu"); p99 = med([r["p99"] for r in pick("get-nc", "sheetd-ten-nc")])
    t.append(("Uncached decision GET (ten card sheets, three counted per user): server CPU/request ≤ 2.0× the fixed-JSON yardstick's (issue 47), p99 < 5 ms",
              f"CPU {rx(med(cr), 2.0)}, p99 {p99:.2f} ms", verdict(med(cr) <= 2.0 and p99 < 5)))
if pick("put", "sheetd"):
    rr = ratios("put", "sheetd", "sqlite_upsert"); p99 = med([r["p99"] for r in pick("put", "sheetd")])
    t.append(("Count PUT ≥ 0.8× SQLite yardstick req/s, p99 < 15 ms, ack after commit", f"{rx(med(rr), 0.8)}, p99 {p99:.2f} ms",
              verdict(med(rr) >= 0.8 and p99 < 15)))
if pick("dismiss", "sheetd"):
    rr = ratios("dismiss", "sheetd", "sqlite_upsert")
    t.append(("Dismissal POST ≥ 0.9× SQLite yardstick req/s", rx(med(rr), 0.9), verdict(med(rr) >= 0.9)))
if pick("mix", "sheetd"):
    rr = ratios("mix", "sheetd", "sqlite_upsert")
    t.append(("Mix 80/15/5 ≥ 0.8× SQLite yardstick req/s", rx(med(rr), 0.8), verdict(med(rr) >= 0.8)))
# Round three: every event route and the mix at most 2x the SQLite yardstick's server CPU per request.
for name in ["put", "dismiss", "open", "impression", "mix"]:
    if pick(name, "sheetd"):
        cr = ratios(name, "sheetd", "sqlite_upsert", "cpu")
        t.append((f"{LABEL[name]}: server CPU/request ≤ 2.0× the SQLite yardstick's", f"CPU {rx(med(cr), 2.0)}", verdict(med(cr) <= 2.0)))
if pick("scale", "sheetd-scale"):
    a = med([r["p99"] for r in pick("scale", "sheetd-scale")]); b = med([r["p99"] for r in pick("scale", "sheetd")])
    t.append(("1M users: decision p99 within 1.5× of 10k", f"{a:.2f} ms vs {b:.2f} ms = {a/b:.2f}×", verdict(a <= 1.5 * b)))
if pick("scale-nc", "sheetd-scale-nc"):
    a = med([r["p99"] for r in pick("scale-nc", "sheetd-scale-nc")]); b = med([r["p99"] for r in pick("scale-nc", "sheetd-nc")])
    t.append(("1M users, decision cache off (every decision reads SQLite): p99 within 1.5× of 10k", f"{a:.2f} ms vs {b:.2f} ms = {a/b:.2f}×", verdict(a <= 1.5 * b)))
sd = [r for r in rows if r["kind"] == "sheetd"]
if sd:
    peak = max(r["hwm"] for r in sd)
    t.append(("Peak RSS < 64 MiB (10k users, every scenario)", f"{peak:.1f} MiB", verdict(peak < 64)))
    ready = [r["ready"] for r in sd]
    sc = [r["ready"] for r in rows if r["kind"] == "sheetd-scale"]
    txt = f"10k: median {med(ready):.0f} ms, max {max(ready):.0f} ms (internal startup_us median {med([r['startup'] for r in sd]):.1f} ms)"
    if sc: txt += f"; 1M: median {med(sc):.0f} ms, max {max(sc):.0f} ms"
    t.append(("Ready < 200 ms on an existing database (spawn → \"listening\" line)", txt, verdict(max(ready + sc) < 200)))
out.append("| target | measured (medians) | |")
out.append("|---|---|---|")
for a, b, c in t: out.append(f"| {a} | {b} | {c} |")
out.append("")
out.append(f"<!-- bench:{E['R_MODE']}:end -->")
section = "\n".join(out)

text = open(target).read() if os.path.exists(target) else "# Benchmarks\n\n"
pat = re.compile(rf"<!-- bench:{E['R_MODE']}:begin.*?<!-- bench:{E['R_MODE']}:end -->", re.S)
if pat.search(text): text = pat.sub(lambda _: section, text)
else: text = text.rstrip("\n") + "\n\n" + section + "\n"
open(target, "w").write(text)
print(section)
