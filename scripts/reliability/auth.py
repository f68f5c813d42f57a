#!/usr/bin/env python3
"""Auth: every /v1/users route rejects missing, malformed, expired, not-yet-valid, wrongly signed,
alg-none (and other algorithms) and other-user tokens; the right user and the admin pass. Afterwards
no token, secret or request body appears in the server's logs (debug level, access log on).
"""
import json
import shutil

from common import ADMIN, SECRET, Client, Server, b64, check, log, main, report, tempdir, token

USER = "auth-u"
MARK = "bodymark7f3a"  # in every body: must never reach the logs


def routes(u):
    q = "screen=home&tab=accounts&platform=ios"
    return [
        ("PUT", f"/v1/users/{u}/containers/c-{MARK}/count", {"count": 1, "eventId": f"e-{MARK}"}),
        ("POST", f"/v1/users/{u}/dismissals", {"sheetId": "home-offers", "method": "swipe", "eventId": f"d-{MARK}"}),
        ("POST", f"/v1/users/{u}/presentations", {"sheetId": "offer-detail", "mode": "push", "eventId": f"p-{MARK}"}),
        ("PUT", f"/v1/users/{u}/sheets/offer-detail/content-height", {"height": 300, "platform": "ios", "eventId": f"h-{MARK}"}),
        ("GET", f"/v1/users/{u}/decision?{q}", None),
        ("GET", f"/v1/users/{u}/state", None),
        ("DELETE", f"/v1/users/{u}", None),
    ]


def bad_tokens():
    good = token(USER)
    h, p, s = good.split(".")
    return {
        "missing": None,
        "empty bearer": "",
        "not a JWT": "not-a-jwt",
        "two parts": f"{h}.{p}",
        "four parts": f"{good}.x",
        "bad base64": f"{h}.!!!.{s}",
        "payload not JSON": f"{h}.{b64(b'nope')}.{s}",
        "expired": token(USER, ttl=-3600),
        "not yet valid": token(USER, nbf=3600),
        "no exp": token(USER, exp=False),
        "wrong secret": token(USER, secret="another-secret-0123456789abcdef"),
        "tampered payload": f"{h}.{b64(json.dumps({'sub': USER, 'exp': 4102444800}).encode())}.{s}",
        "tampered sub": good.replace(p, b64(json.dumps({"sub": "other-u", "exp": 4102444800}).encode())),
        "truncated signature": good[:-4],
        "alg none": token(USER, alg="none"),
        "alg None (case)": token(USER, alg="none", header={"alg": "None", "typ": "JWT"}),
        "alg none with signature": token(USER, header={"alg": "none", "typ": "JWT"}),
        "alg HS512": token(USER, header={"alg": "HS512", "typ": "JWT"}),
        "alg RS256": token(USER, header={"alg": "RS256", "typ": "JWT"}),
        "no alg": token(USER, header={"typ": "JWT"}),
        "admin token with a suffix": ADMIN + "x",
        "admin token prefix": ADMIN[:-1],
    }


def run():
    work = tempdir("auth")
    server = Server(f"{work}/sheetd.sqlite", workdir=work, access_log=True, extra=["--log-level", "debug"])
    server.start()
    c = Client(server)
    tried = 0
    used_tokens = set()
    try:
        for name, tok in bad_tokens().items():
            if tok:
                used_tokens.add(tok)
            for method, path, body in routes(USER):
                s, h, b = c.request(method, path, body, tok=tok)
                tried += 1
                check(s == 401, f"{name}: {method} {path} answered {s} {b[:200]}")
                check(h.get("www-authenticate", "").startswith("Bearer"), f"{name}: no WWW-Authenticate")
                check(h.get("content-type", "").startswith("application/problem+json"), f"{name}: content type")
        other = token("other-u")
        used_tokens.add(other)
        for method, path, body in routes(USER):
            s, _, b = c.request(method, path, body, tok=other)
            tried += 1
            check(s == 403, f"other user's token: {method} {path} answered {s}")
        mine = token(USER)
        used_tokens.add(mine)
        for method, path, body in routes(USER):
            s, _, b = c.request(method, path, body, tok=mine)
            check(s in (200, 204), f"own token: {method} {path} answered {s} {b[:200]}")
        for method, path, body in routes("someone"):
            s, _, b = c.request(method, path, body, tok=ADMIN)
            check(s in (200, 204), f"admin: {method} {path} answered {s} {b[:200]}")
        # A user token may not write the catalog.
        s, _, _ = c.request("PUT", "/v1/sheets/x", {"kind": "action", "screen": "s"}, tok=mine)
        check(s == 403, f"user token writing the catalog: {s}")
        code, _ = server.terminate()
        check(code == 0, "stop")
        logs = server.logs()
        leaks = [what for what, needle in [("admin token", ADMIN), ("JWT secret", SECRET), ("body", MARK)] if needle in logs]
        leaks += [f"token {t[:12]}..." for t in used_tokens if len(t) > 8 and t in logs]
        # Any JWT-shaped string at all.
        leaks += ["a JWT header" for _ in [1] if "eyJ" in logs]
        check(not leaks, f"secrets in the logs: {leaks}")
        lines = logs.count("\n")
    finally:
        c.close()
        server.ensure_stopped()
        shutil.rmtree(work, ignore_errors=True)
    report("auth", {"rejections_checked": tried, "bad_token_kinds": len(bad_tokens()), "routes": len(routes(USER)),
                    "log_lines_scanned": lines, "leaks": 0})
    log(f"auth: {len(bad_tokens())} bad token kinds + another user's token x {len(routes(USER))} routes = {tried} "
        f"rejections (401/403); {lines} log lines hold no token, secret or body")


if __name__ == "__main__":
    main(run)
