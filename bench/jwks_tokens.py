#!/usr/bin/env python3
"""Mints user tokens signed with a private key (RS256, ES256 or EdDSA, as the key's type says), or
HS256 with KEY given as secret:SECRET (no kid), for bench/jwks.sh: one line per token,
"<userId> <token>".

usage: jwks_tokens.py KEY.pem|secret:SECRET KID USERS COUNT OUT
COUNT tokens for users u0000001 ... u<USERS> in turn; each token differs (claim "n"), so with COUNT
> USERS every request of a pass carries a token the server has never verified."""
import base64, hashlib, hmac, json, sys, time
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

def b64(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()

key_path, kid, users, count, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
if key_path.startswith("secret:"):
    secret = key_path[7:].encode()
    key, kid = None, None
else:
    with open(key_path, "rb") as f:
        key = serialization.load_pem_private_key(f.read(), password=None)
if key is None:
    alg, sign = "HS256", lambda m: hmac.new(secret, m, hashlib.sha256).digest()
elif isinstance(key, rsa.RSAPrivateKey):
    alg, sign = "RS256", lambda m: key.sign(m, padding.PKCS1v15(), hashes.SHA256())
elif isinstance(key, ec.EllipticCurvePrivateKey):
    def sign(m):
        r, s = decode_dss_signature(key.sign(m, ec.ECDSA(hashes.SHA256())))
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")
    alg = "ES256"
elif isinstance(key, ed25519.Ed25519PrivateKey):
    alg, sign = "EdDSA", key.sign
else:
    sys.exit("unsupported key type")
now = int(time.time())
header = b64(json.dumps({"alg": alg, "typ": "JWT", **({"kid": kid} if kid else {})}, separators=(",", ":")).encode())
with open(out, "w") as f:
    for i in range(count):
        uid = "u%07d" % (i % users + 1)
        payload = b64(json.dumps({"sub": uid, "iat": now, "exp": now + 86400, "n": i}, separators=(",", ":")).encode())
        signing = header + "." + payload
        f.write(f"{uid} {signing}.{b64(sign(signing.encode()))}\n")
