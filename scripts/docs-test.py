#!/usr/bin/env python3
"""The documentation is tested like code: README.md and docs/*.md.

  scripts/docs-test.py [BINARY]    every check below (default binary: .build/debug/sheetd)
  scripts/docs-test.py --static    only the checks that need no server (links, duplicates, tables)

Static checks, one per item:
  links         every relative link and image of the Markdown files names a file that exists, and
                every #anchor a heading of its file (GitHub's slugs); README.md, docs/, the other
                top-level .md files, examples/*/README.md
  duplicates    no paragraph (or code block) of 100 characters or more is in two places of README.md
                and docs/*.md: each fact has one home
  configuration every setting of Sources/sheetd/Configuration.swift (flag and variable) has its row
                in docs/configuration.md
  modules       every module in Sources/ is named in the README's Architecture section
  routes        every path of openapi.yaml is named in README.md or docs/*.md (a static file's folder
                will do: /console/ for /console/console.css)
Live checks: every ```sh block of README.md and docs/*.md, in reading order (README.md first, then
DOC_ORDER), runs as pasted against one sheetd started here (port 0, a temporary database, the example
catalog, as `make run` serves it). The only changes to the pasted text: http://127.0.0.1:8080 is the
started server's address and .build/release/sheetd the binary under test (`sheetd` is on PATH too).
$SHEETD_ADMIN_TOKEN and $SHEETD_USER_TOKEN (user demo-user) are set as `make run` prints them, and
SHEETD_DB names the server's database. A block passes when
  - bash runs it with `set -eo pipefail` and it exits 0,
  - every curl in it answered 2xx or 304, or the 4xx/5xx code a comment line before it names
    ("# ... is refused (409 experiment-running)"),
  - every fragment its comments quote appears in its output: a JSON member ("reason":"cooling-down",
    a whole object when balanced; fragments with "..." are prose) or a header (Content-Encoding: gzip).
A Markdown comment on the line before a block changes how it runs:
  <!-- docs-test: skip REASON -->   not run (needs Docker, another port, a stopped server, ...); the
                                    reason is required and printed with the block's curl lines
  <!-- docs-test: background -->    run while the next block runs (a stream in one terminal, a write in
                                    another); passes when it printed two `event: decision`s
  <!-- docs-test: answer -->        (before a block of any language) what the sh block before it printed,
                                    abridged with "…": each JSON member, header and string of 20
                                    characters or more it shows must be in that output
Ends with "docs-test: N passed, M failed" and exits 1 when anything failed.
"""
import glob
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The order a reader follows after the README's tour; the blocks of one file build on the ones before.
DOC_ORDER = ["docs/api.md", "docs/experiments.md", "docs/console.md", "docs/ios.md", "docs/android.md",
             "docs/authentication.md", "docs/configuration.md", "docs/operations.md", "docs/scaling-out.md",
             "docs/performance.md"]
DOCUMENTED_PORT = "http://127.0.0.1:8080"

passed = 0
failed = 0


def ok(what):
    global passed
    passed += 1
    print(f"ok   {what}")


def fail(what, detail=""):
    global failed
    failed += 1
    print(f"FAIL {what}")
    if detail:
        print("     " + detail.rstrip().replace("\n", "\n     "))


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def documentation_files():
    """README.md and docs/*.md: the files whose facts must each have one home."""
    return ["README.md"] + sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))


def linked_files():
    """Every Markdown file whose links are checked."""
    files = set(documentation_files())
    files |= {os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "*.md"))}
    files |= {os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "examples", "*", "README.md"))}
    return sorted(files)


# --- Markdown: fenced blocks, headings, anchors --------------------------------------------------------

FENCE = re.compile(r"^(\s*)(```+)\s*([\w+-]*)")


def split_blocks(text):
    """Yields ("text", lines) and ("code", info, lines, marker, start line) in order."""
    lines = text.split("\n")
    i, prose, last_prose_line = 0, [], ""
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            prose.append(lines[i])
            if lines[i].strip():
                last_prose_line = lines[i].strip()
            i += 1
            continue
        indent, ticks, info = m.group(1), m.group(2), m.group(3)
        start = i + 1
        body = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(ticks):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        i += 1
        yield ("text", prose)
        prose = []
        marker = re.match(r"<!--\s*docs-test:\s*(.*?)\s*-->$", last_prose_line)
        yield ("code", info, body, marker.group(1) if marker else None, start)
        last_prose_line = ""
    yield ("text", prose)


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    found, seen = set(), {}
    for kind, *rest in split_blocks(read(path)):
        if kind != "text":
            continue
        for line in rest[0]:
            m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
        for line in rest[0]:  # explicit anchors
            found.update(re.findall(r'<a (?:name|id)="([^"]+)"', line))
    return found


LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def check_links():
    anchor_cache = {}
    for path in linked_files():
        for kind, *rest in split_blocks(read(path)):
            if kind != "text":
                continue
            text = "\n".join(rest[0])
            text = re.sub(r"`[^`\n]*`", "", text)  # code spans are not links
            for target in LINK.findall(text):
                if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                    continue
                file_part, _, anchor = target.partition("#")
                if file_part:
                    resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part))
                else:
                    resolved = path
                what = f"link {path} -> {target}"
                if not os.path.exists(os.path.join(ROOT, resolved)):
                    fail(what, f"{resolved} does not exist")
                    continue
                if anchor:
                    if not resolved.endswith(".md"):
                        fail(what, "an anchor into a file that is not Markdown")
                        continue
                    if resolved not in anchor_cache:
                        anchor_cache[resolved] = anchors(resolved)
                    if anchor not in anchor_cache[resolved]:
                        fail(what, f"{resolved} has no heading with the anchor #{anchor}")
                        continue
                ok(what)


def check_duplicates():
    homes = {}
    for path in documentation_files():
        for kind, *rest in split_blocks(read(path)):
            if kind == "text":
                paragraphs = "\n".join(rest[0]).split("\n\n")
            else:
                paragraphs = ["\n".join(rest[1])]
            for p in paragraphs:
                key = " ".join(p.split())
                if len(key) >= 100:
                    homes.setdefault(key, []).append(path)
    twice = {k: v for k, v in homes.items() if len(v) > 1}
    if twice:
        fail("no paragraph in two places of README.md and docs/*.md",
             "\n".join(f"{', '.join(v)}: {k[:100]}..." for k, v in twice.items()))
    else:
        ok(f"no paragraph in two places of README.md and docs/*.md ({len(homes)} paragraphs)")


def check_configuration_table():
    source = read("Sources/sheetd/Configuration.swift")
    table = read("docs/configuration.md")
    options = re.findall(r'Option\(\s*"(--[a-z0-9-]+)",\s*"(SHEETD_[A-Z0-9_]+)"', source)
    if len(options) < 10:
        fail("configuration: the settings of Configuration.swift", f"found only {len(options)} Option rows")
    for flag, variable in options:
        if re.search(rf"^\| `{re.escape(flag)}` \| `{variable}` \|", table, re.M):
            ok(f"configuration: {flag} / {variable} has its row in docs/configuration.md")
        else:
            fail(f"configuration: {flag} / {variable} has its row in docs/configuration.md")


def check_modules():
    readme = read("README.md")
    m = re.search(r"^## Architecture\n(.*?)(?=^## |\Z)", readme, re.M | re.S)
    if not m:
        fail("modules: README.md has an Architecture section")
        return
    section = m.group(1)
    for module in sorted(os.listdir(os.path.join(ROOT, "Sources"))):
        if not os.path.isdir(os.path.join(ROOT, "Sources", module)):
            continue
        if re.search(rf"(?<![\w/]){re.escape(module)}(?!\w)", section):
            ok(f"modules: Sources/{module} is named in the README's Architecture")
        else:
            fail(f"modules: Sources/{module} is named in the README's Architecture",
                 "add it to the diagram or the list of modules")


def check_routes():
    spec = read("openapi.yaml")
    paths = re.search(r"^paths:\n(.*?)^\S", spec, re.M | re.S)
    routes = re.findall(r"^  (/\S*):\s*$", paths.group(1) if paths else "", re.M)
    if len(routes) < 10:
        fail("routes: the paths of openapi.yaml", f"found only {len(routes)}")
    # Parameters named differently in prose ({id}, {sheetId}) are the same route.
    docs = re.sub(r"\{[^}/]*\}", "{}", "\n".join(read(p) for p in documentation_files()))
    for route in routes:
        generic = re.sub(r"\{[^}/]*\}", "{}", route)
        named = re.search(rf"{re.escape(generic)}(?![\w/{{-])", docs) is not None
        folder = route.rsplit("/", 1)[0] + "/"
        if named or (folder != "/" and f"`{folder}`" in docs):
            ok(f"routes: {route} is named in the documentation")
        else:
            fail(f"routes: {route} is named in the documentation", "add it to the table in docs/api.md")


# --- running the sh blocks ---------------------------------------------------------------------------

CURL_STATUS = "docs-test-status"
PRELUDE = f"""set -eo pipefail
curl() {{ command curl --write-out '%{{stderr}}{CURL_STATUS} %{{http_code}}\\n' "$@"; }}
"""


def curl_expectations(block_lines):
    """The status each curl of the block must answer, in order: None (2xx or 304) or the code the
    comment lines since the previous curl name."""
    expected, comments = [], []
    for line in block_lines:
        stripped = line.strip()
        if stripped.startswith("#"):
            comments.append(stripped)
            continue
        for _ in re.finditer(r"(?:^|\$\(|[;&|]\s*)\s*curl\s", stripped):
            codes = re.findall(r"(?<![\w.])([45]\d\d)(?![\w.])", " ".join(comments))
            expected.append(int(codes[-1]) if codes else None)
            comments = []
    return expected


def balanced(text, start):
    """The end of the JSON value starting at text[start], or None."""
    opening = text[start]
    if opening == '"':
        end = text.find('"', start + 1)
        return end + 1 if end > 0 else None
    if opening in "{[":
        depth, i, in_string = 0, start, False
        while i < len(text):
            c = text[i]
            if in_string:
                in_string = c != '"'
            elif c == '"':
                in_string = True
            elif c in "{[":
                depth += 1
            elif c in "}]":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return None
    m = re.match(r"-?[\w.]+", text[start:])
    return start + m.end() if m else None


def quoted_fragments(block_lines):
    """What the block's comments say its output contains."""
    fragments = []
    for line in block_lines:
        stripped = line.strip()
        if not stripped.startswith("#"):
            continue
        for m in re.finditer(r'"[A-Za-z][\w-]*":', stripped):
            end = balanced(stripped, m.end()) if m.end() < len(stripped) else None
            if end is None:
                continue
            fragment = stripped[m.start():end]
            if "..." in fragment or "…" in fragment:
                continue
            fragments.append(fragment)
        for m in re.finditer(r"\b([A-Z][a-z]+(?:-[A-Z][a-z]+)+): ([\w=-]+)", stripped):
            fragments.append(f"{m.group(1)}: {m.group(2)}")
    return fragments


def answer_fragments(block_lines):
    """What an answer block shows: its JSON members and headers (as in comments), and its longer strings."""
    text = "\n".join(block_lines)
    compact, in_string = [], False
    for c in text:  # the JSON without the whitespace between its tokens
        if c == '"':
            in_string = not in_string
        if in_string or not c.isspace():
            compact.append(c)
    fragments = [f for f in quoted_fragments(["# " + "".join(compact)]) if not re.match(r"[A-Z][a-z]+-", f)]
    head = block_lines[:block_lines.index("")] if "" in block_lines else []
    fragments += [line for line in head if re.match(r"(HTTP/|[A-Za-z][\w-]*: )", line) and "…" not in line]
    fragments += [s for s in re.findall(r'"[^"\n]{20,}"', text) if "…" not in s and "..." not in s]
    return fragments


def contains(output, fragment):
    if re.match(r"(HTTP/|[A-Z][a-z]+-|[A-Za-z][\w-]*: )", fragment):  # the status line or a header
        return re.search(re.escape(fragment), output, re.I) is not None
    return "".join(fragment.split()) in "".join(output.split())


class Server:
    def __init__(self, binary, work):
        self.work = work
        self.db = os.path.join(work, "sheetd.sqlite")
        self.env = dict(os.environ)
        self.env["SHEETD_ADMIN_TOKEN"] = "docs-admin-" + secrets.token_hex(16)
        self.env["SHEETD_JWT_SECRET"] = "docs-secret-" + secrets.token_hex(32)
        self.log = open(os.path.join(work, "server.log"), "w+")
        self.process = subprocess.Popen(
            [binary, "serve", "--port", "0", "--db", self.db, "--catalog", "examples/catalog.json"],
            cwd=ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT)
        self.port = None
        for _ in range(300):
            self.log.seek(0)
            m = re.search(r'"msg":"listening"[^}]*"port":(\d+)', self.log.read())
            if m:
                self.port = int(m.group(1))
                break
            if self.process.poll() is not None:
                break
            time.sleep(0.1)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()


def read_events(process, output, events, seconds):
    """A background block's output once it holds `events` decision events, or after `seconds`."""
    deadline = time.time() + seconds
    while output.count(b"event: decision") < events and time.time() < deadline and process.poll() is None:
        output += process.stdout.read() or b""
        time.sleep(0.05)
    return output


def run_blocks(binary):
    binary = os.path.abspath(binary)
    if not os.access(binary, os.X_OK):
        fail(f"sh blocks: {binary} is not an executable (build it first)")
        return
    work = tempfile.mkdtemp(prefix="sheetd-docs-test.")
    server = Server(binary, work)
    try:
        if server.port is None:
            server.log.seek(0)
            fail("sh blocks: sheetd started and reported its port", server.log.read()[-2000:])
            return
        ok(f"sh blocks: sheetd started on port {server.port}")
        base = f"http://127.0.0.1:{server.port}"
        bin_dir = os.path.join(work, "bin")
        os.mkdir(bin_dir)
        os.symlink(binary, os.path.join(bin_dir, "sheetd"))
        env = dict(server.env)
        env["PATH"] = bin_dir + os.pathsep + env["PATH"]
        env["SHEETD_DB"] = server.db
        token = subprocess.run([binary, "token", "--user", "demo-user"], cwd=ROOT, env=env,
                               capture_output=True, text=True)
        if token.returncode != 0:
            fail("sh blocks: sheetd token --user demo-user", token.stderr)
            return
        env["SHEETD_USER_TOKEN"] = token.stdout.strip()

        blocks = []
        for path in ["README.md"] + DOC_ORDER:
            if not os.path.exists(os.path.join(ROOT, path)):
                continue
            for kind, *rest in split_blocks(read(path)):
                if kind == "code" and (rest[0] in ("sh", "bash", "shell") or rest[2] == "answer"):
                    blocks.append((path, *rest))
        unlisted = set(documentation_files()) - {"README.md"} - set(DOC_ORDER)
        for path in sorted(unlisted):
            if any(k == "code" and r[0] in ("sh", "bash", "shell") for k, *r in split_blocks(read(path))):
                fail(f"sh blocks: {path} is in DOC_ORDER", "scripts/docs-test.py runs blocks only of listed files")

        background = None
        last_output = None
        for path, _, lines, marker, start in blocks:
            where = f"{path}:{start}"
            if marker == "answer":
                missing = [f for f in answer_fragments(lines) if last_output is None or not contains(last_output, f)]
                if missing:
                    fail(f"{where}: the answer shown is what the block before printed", "lacks " + "\n".join(missing))
                else:
                    ok(f"{where}: the answer shown is what the block before printed ({len(answer_fragments(lines))} fragments)")
                continue
            curls = sum(len(re.findall(r"(?:^|\$\(|[;&|]\s*)\s*curl\s", l.strip())) for l in lines
                        if not l.strip().startswith("#"))
            if marker and marker.startswith("skip"):
                reason = marker[4:].strip()
                if reason:
                    ok(f"{where}: not run ({reason}; {curls} curl line(s))")
                else:
                    fail(f"{where}: a skipped block says why", marker)
                continue
            script = "\n".join(lines).replace(DOCUMENTED_PORT, base).replace(".build/release/sheetd", binary)
            if marker == "background":
                process = subprocess.Popen(["bash", "-c", PRELUDE + script], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                           stderr=subprocess.DEVNULL, start_new_session=True)
                os.set_blocking(process.stdout.fileno(), False)
                # The next block changes the decision only once the stream has sent the current one.
                background = (where, process, read_events(process, b"", 1, 20))
                continue
            if marker is not None:
                fail(f"{where}: a known docs-test marker", marker)
                continue
            try:
                run = subprocess.run(["bash", "-c", PRELUDE + script], cwd=ROOT, env=env,
                                     capture_output=True, text=True, timeout=120)
            except subprocess.TimeoutExpired:
                fail(f"{where}: ends within 120 s")
                continue
            last_output = run.stdout
            statuses = [int(s) for s in re.findall(rf"^{CURL_STATUS} (\d+)$", run.stderr, re.M)]
            stderr = "\n".join(l for l in run.stderr.split("\n") if not l.startswith(CURL_STATUS))
            expected = curl_expectations(lines)
            problems = []
            if run.returncode != 0:
                problems.append(f"exit {run.returncode}: {stderr[-800:]}")
            if len(statuses) != len(expected):
                problems.append(f"{len(expected)} curl line(s), {len(statuses)} answer(s)")
            for i, (status, want) in enumerate(zip(statuses, expected)):
                good = status == want if want else (200 <= status < 300 or status == 304)
                if not good:
                    problems.append(f"curl {i + 1} answered {status}, expected {want or '2xx or 304'}")
            for fragment in quoted_fragments(lines):
                if not contains(run.stdout, fragment):
                    problems.append(f"the output lacks {fragment}")
            if problems:
                fail(f"{where}: runs as pasted ({len(expected)} curl line(s))",
                     "\n".join(problems) + "\n--- output ---\n" + run.stdout[-1500:])
            else:
                ok(f"{where}: runs as pasted ({len(expected)} curl line(s), answers {statuses})")
            if background:
                bwhere, process, output = background
                background = None
                output = read_events(process, output, 2, 10)
                os.killpg(process.pid, signal.SIGTERM)
                process.wait()
                events = output.count(b"event: decision")
                if events >= 2:
                    ok(f"{bwhere}: the stream printed the decision, then the change ({events} events)")
                else:
                    fail(f"{bwhere}: the stream printed the decision, then the change",
                         f"{events} event(s): {output[-600:].decode(errors='replace')}")
        if background:
            fail(f"{background[0]}: a background block is followed by a block that runs")
            os.killpg(background[1].pid, signal.SIGTERM)
    finally:
        server.stop()
        if server.process.returncode not in (0, None):
            fail(f"sheetd exited {server.process.returncode} after SIGTERM")
        shutil.rmtree(work, ignore_errors=True)


def main():
    args = sys.argv[1:]
    static_only = "--static" in args
    args = [a for a in args if a != "--static"]
    os.chdir(ROOT)
    check_links()
    check_duplicates()
    check_configuration_table()
    check_modules()
    check_routes()
    if not static_only:
        run_blocks(args[0] if args else ".build/debug/sheetd")
    print(f"docs-test: {passed} passed, {failed} failed")
    sys.exit(0 if failed == 0 else 1)


if __name__ == "__main__":
    main()
