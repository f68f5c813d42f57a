"""Shared helpers for the reliability drivers: start/stop sheetd on 127.0.0.1, mint tokens, talk HTTP.

Only the standard library is used, so every driver runs with the system python3.
"""
import base64
import hashlib
import hmac
import http.client
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BINARY = os.environ.get("SHEETD_BIN", os.path.join(ROOT, ".build", "release", "sheetd"))
CATALOG = os.path.join(ROOT, "examples", "catalog.json")
ADMIN = "rel-admin-" + os.urandom(16).hex()
SECRET = "rel-secret-" + os.urandom(24).hex()

# Card sheets of examples/catalog.json and their containers (filter in brackets).
CARD_SHEETS = {"home-offers": ("offers-home", ""), "home-reminders": ("reminders-home", "")}


def log(*parts):
    print("  " + " ".join(str(p) for p in parts), flush=True)


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def token(sub, ttl=3600, nbf=None, secret=None, alg="HS256", header=None, exp=True):
    now = int(time.time())
    head = header if header is not None else {"alg": alg, "typ": "JWT"}
    payload = {"sub": sub, "iat": now}
    if exp:
        payload["exp"] = now + ttl
    if nbf is not None:
        payload["nbf"] = now + nbf
    signing = b64(json.dumps(head).encode()) + "." + b64(json.dumps(payload).encode())
    if alg == "none":
        return signing + "."
    mac = hmac.new((secret or SECRET).encode(), signing.encode(), hashlib.sha256).digest()
    return signing + "." + b64(mac)


class Server:
    """One sheetd process on a free port of 127.0.0.1 with its own database and log files."""

    def __init__(self, db, synchronous="NORMAL", extra=(), workdir=None, catalog=True, user=None, access_log=False,
                 binary=None):
        self.db = db
        self.binary = binary or BINARY
        self.workdir = workdir or os.path.dirname(db)
        self.synchronous = synchronous
        self.extra = list(extra)
        self.catalog = catalog
        self.user = user  # run as this uid:gid (for permission faults: root ignores file modes)
        self.access_log = access_log
        self.proc = None
        self.port = None
        self.starts = 0

    @property
    def base(self):
        return f"127.0.0.1:{self.port}"

    def start(self, timeout=30):
        self.starts += 1
        self.out_path = os.path.join(self.workdir, f"server-{self.starts}.out")
        self.err_path = os.path.join(self.workdir, f"server-{self.starts}.err")
        args = [self.binary, "serve", "--port", "0", "--db", self.db, "--synchronous", self.synchronous,
                "--access-log", "true" if self.access_log else "false"] + self.extra
        # The drivers load a few users far past any honest event rate on purpose; hostile.py checks
        # the per-user limit itself (by naming the flag).
        if "--max-events-per-user-per-minute" not in self.extra:
            args += ["--max-events-per-user-per-minute", "0"]
        if self.catalog:
            args += ["--catalog", CATALOG]
        env = dict(os.environ, SHEETD_JWT_SECRET=SECRET, SHEETD_ADMIN_TOKEN=ADMIN)
        preexec = None
        if self.user is not None:
            uid, gid = self.user

            def preexec():
                os.setgroups([])
                os.setgid(gid)
                os.setuid(uid)
        self.started_at = time.monotonic()
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(args, stdout=out, stderr=err, env=env, preexec_fn=preexec)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = re.search(rb'"msg":"listening"[^\n]*"port":(\d+)', open(self.out_path, "rb").read())
            if m:
                self.port = int(m.group(1))
                return self
            if self.proc.poll() is not None:
                raise Failure(f"sheetd exited {self.proc.returncode} at start: {self.logs()[-2000:]}")
            time.sleep(0.02)
        raise Failure("sheetd did not report its port")

    def logs(self):
        text = ""
        for p in (self.out_path, self.err_path):
            try:
                text += open(p, "r", errors="replace").read()
            except OSError:
                pass
        return text

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def terminate(self, timeout=15):
        """SIGTERM; returns (exit code, seconds until exit)."""
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None, time.monotonic() - t0
        return code, time.monotonic() - t0

    def rss_kb(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def ensure_stopped(self):
        if self.alive():
            self.proc.kill()
            self.proc.wait()


class Client:
    """A keep-alive HTTP/1.1 client for one thread. Every call returns (status, headers, body bytes),
    or raises OSError / http.client errors when the server is gone."""

    def __init__(self, server, timeout=15):
        self.server = server
        self.timeout = timeout
        self.conn = None

    def request(self, method, path, body=None, tok=ADMIN, headers=None):
        h = {}
        if tok is not None:
            h["Authorization"] = "Bearer " + tok
        if body is not None:
            if not isinstance(body, (bytes, str)):
                body = json.dumps(body)
            h["Content-Type"] = "application/json"
        h.update(headers or {})
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=self.timeout)
            try:
                self.conn.request(method, path, body=body, headers=h)
                r = self.conn.getresponse()
                data = r.read()
                if r.getheader("Connection", "").lower() == "close":
                    self.close()
                return r.status, {k.lower(): v for k, v in r.getheaders()}, data
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as e:
                # A keep-alive connection closed by the server between requests: retry once on a fresh
                # one, but only when nothing can have been processed (the request was never answered).
                self.close()
                if attempt == 1 or not isinstance(e, http.client.RemoteDisconnected):
                    raise
            except Exception:
                self.close()
                raise

    def json(self, method, path, body=None, tok=ADMIN, headers=None):
        s, h, b = self.request(method, path, body, tok, headers)
        try:
            return s, h, json.loads(b) if b else None
        except ValueError:
            return s, h, b

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def is_postgres(db):
    return db.startswith("postgres://") or db.startswith("postgresql://")


class Postgres:
    """A throwaway PostgreSQL cluster of its own (scripts/postgres.sh), for the PostgreSQL runs."""

    SCRIPT = os.path.join(ROOT, "scripts", "postgres.sh")

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="sheetd-rel-pg-")
        self.url = None

    def start(self):
        r = subprocess.run(["bash", self.SCRIPT, "start", self.dir], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise Failure(f"postgres.sh start: {r.stderr[-1000:]}")
        self.url = r.stdout.strip()
        return self

    def _run(self, command):
        r = subprocess.run(["bash", self.SCRIPT, command, self.dir], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise Failure(f"postgres.sh {command}: {r.stderr[-1000:]}")

    def crash(self):
        """Immediate stop: like a crash of the database server (WAL recovery at the next start)."""
        self._run("crash")

    def up(self):
        self._run("up")

    def stop(self):
        subprocess.run(["bash", self.SCRIPT, "stop", self.dir], capture_output=True, timeout=120)


def _psql():
    import glob
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"))
    return found[-1] if found else "psql"


def _pg_literal(value):
    if isinstance(value, (int, float)):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"


def pg_query(url, sql, args=()):
    """Runs one statement through psql; `?` placeholders are filled with quoted literals. Returns
    rows as tuples of strings (ints where the text is a whole number)."""
    parts = sql.split("?")
    if len(parts) - 1 != len(args):
        raise ValueError("placeholder count")
    text = parts[0] + "".join(_pg_literal(a) + p for a, p in zip(args, parts[1:]))
    r = subprocess.run([_psql(), "-X", "-At", "-F", "\x1f", "-v", "ON_ERROR_STOP=1", url, "-c", text],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise Failure(f"psql: {r.stderr.strip()[-500:]}")
    rows = []
    for line in r.stdout.splitlines():
        rows.append(tuple(int(v) if re.fullmatch(r"-?\d+", v) else v for v in line.split("\x1f")))
    return rows


def integrity(db):
    """PRAGMA integrity_check through a separate connection (the CLI's view of the file)."""
    c = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        return c.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        c.close()


def query(db, sql, args=()):
    if is_postgres(db):
        return pg_query(db, sql, args)
    c = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        return c.execute(sql, args).fetchall()
    finally:
        c.close()


def raw(port, data: bytes, timeout=5.0, read_all=True):
    """Sends raw bytes, returns (status or None, response bytes, seconds)."""
    t0 = time.monotonic()
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        try:
            s.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered early (413, 414, 431) and closed: read what it sent
        try:
            s.shutdown(socket.SHUT_WR) if read_all else None
        except OSError:
            pass
        out = b""
        while True:
            try:
                chunk = s.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not chunk:
                break
            out += chunk
            if not read_all and b"\r\n\r\n" in out:
                break
    finally:
        s.close()
    m = re.match(rb"HTTP/1\.[01] (\d{3})", out)
    return (int(m.group(1)) if m else None), out, time.monotonic() - t0


def tempdir(prefix):
    return tempfile.mkdtemp(prefix=f"sheetd-rel-{prefix}-")


def percentile(values, p):
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


def report(name, figures):
    """Appends the figures of one driver to $RELIABILITY_RESULTS (JSON lines) for RELIABILITY.md."""
    path = os.environ.get("RELIABILITY_RESULTS")
    line = json.dumps({"driver": name, **figures}, sort_keys=True)
    print("RESULT " + line, flush=True)
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


def main(fn):
    # `timeout` sends SIGTERM to the process group: unwind (finally blocks stop servers, unmount,
    # remove temporary directories) instead of dying on the spot.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        fn()
    except Failure as e:
        print(f"FAIL: {e}", flush=True)
        sys.exit(1)
