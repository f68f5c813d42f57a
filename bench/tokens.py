#!/usr/bin/env python3
"""Mints HS256 user tokens for the load scripts: one line per user, "<userId> <token>".

usage: tokens.py SECRET USERS SAMPLE OUT
Users are u0000001 … u<USERS> (zero-padded, as bench/preload.sh creates them). With SAMPLE < USERS
a uniform random sample of SAMPLE users is minted (the 1M-user run: requests spread over the whole
key space without minting a million tokens)."""
import base64, hashlib, hmac, json, random, sys, time

def b64(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()

secret, users, sample, out = sys.argv[1].encode(), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
now = int(time.time())
header = b64(b'{"alg":"HS256","typ":"JWT"}')
ids = range(1, users + 1) if sample >= users else sorted(random.Random(42).sample(range(1, users + 1), sample))
with open(out, "w") as f:
    for n in ids:
        uid = "u%07d" % n
        payload = b64(json.dumps({"sub": uid, "iat": now, "exp": now + 86400}, separators=(",", ":")).encode())
        signing = (header + "." + payload).encode()
        sig = b64(hmac.new(secret, signing, hashlib.sha256).digest())
        f.write(f"{uid} {header}.{payload}.{sig}\n")
