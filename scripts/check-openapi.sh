#!/usr/bin/env bash
# Validates openapi.yaml: the document itself (openapi-spec-validator, OpenAPI 3.1), then every
# example in it against its schema, examples/catalog.json against the definition schema, and the
# policy's golden decisions (Tests/SheetPolicyTests/Golden) against the decision schema.
# Tools live in a venv under .build/venv-tools (created on first use). Exits non-zero on failure.
#
#   scripts/check-openapi.sh [SPEC]        (default: openapi.yaml at the repository root)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
spec=${1:-$root/openapi.yaml}
catalog=$root/examples/catalog.json
tools=$root/.build/venv-tools
pkgs=(openapi-spec-validator jsonschema referencing PyYAML)

say() { printf 'check-openapi: %s\n' "$*" >&2; }

command -v python3 >/dev/null || { say "python3 is required"; exit 2; }

# Find or make a Python that has the tools: a venv (installing python3-venv when we are root on
# Debian and it is missing), else a pip --target directory ($tools/lib) on PYTHONPATH.
have_tools() { "$python" -c 'import openapi_spec_validator, jsonschema, referencing, yaml' 2>/dev/null; }
python=""
if [ -x "$tools/bin/python" ]; then
  python=$tools/bin/python
elif [ -d "$tools/lib" ]; then
  python=python3
  export PYTHONPATH="$tools/lib${PYTHONPATH:+:$PYTHONPATH}"
fi
if [ -z "$python" ] || ! have_tools; then
  rm -rf "$tools"
  if ! python3 -m venv "$tools" >/dev/null 2>&1; then
    rm -rf "$tools"
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      say "installing python3-venv"
      ver=$(python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
      { apt-get install -y -q python3-venv "python$ver-venv" \
        || { apt-get update -q && apt-get install -y -q python3-venv "python$ver-venv"; } \
        || apt-get install -y -q python3-venv; } >/dev/null 2>&1 || true
      python3 -m venv "$tools" >/dev/null 2>&1 || rm -rf "$tools"
    fi
  fi
  if [ -x "$tools/bin/python" ]; then
    say "installing ${pkgs[*]} into $tools"
    "$tools/bin/python" -m pip install -q --disable-pip-version-check "${pkgs[@]}"
    python=$tools/bin/python
  else
    say "no venv available; installing ${pkgs[*]} into $tools/lib with pip --target"
    mkdir -p "$tools/lib"
    python3 -m pip install -q --disable-pip-version-check --target "$tools/lib" "${pkgs[@]}" \
      || python3 -m pip install -q --disable-pip-version-check --break-system-packages --target "$tools/lib" "${pkgs[@]}"
    python=python3
    export PYTHONPATH="$tools/lib${PYTHONPATH:+:$PYTHONPATH}"
  fi
  have_tools || { say "could not install ${pkgs[*]}"; exit 2; }
fi

"$python" - "$spec" "$catalog" <<'PY'
import copy, json, sys
from urllib.parse import unquote
import yaml
from openapi_spec_validator import validate
from openapi_spec_validator.readers import read_from_filename
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

spec_path, catalog_path = sys.argv[1], sys.argv[2]
spec, _ = read_from_filename(spec_path)
validate(spec)
print(f"check-openapi: {spec_path}: valid OpenAPI {spec['openapi']}")

ROOT = "urn:sheetd:openapi"
registry = Registry().with_resource(ROOT, Resource.from_contents(spec, default_specification=DRAFT202012))

def rooted(node):
    """A copy of a schema whose local $refs point into the whole document."""
    if isinstance(node, dict):
        return {k: (ROOT + v if k == "$ref" and isinstance(v, str) and v.startswith("#") else rooted(v))
                for k, v in node.items()}
    if isinstance(node, list):
        return [rooted(v) for v in node]
    return node

def deref(node):
    while isinstance(node, dict) and "$ref" in node and len(node) == 1:
        cur = spec
        for part in node["$ref"][2:].split("/"):  # a JSON pointer: percent-decoded, then ~1 is / and ~0 is ~
            part = unquote(part).replace("~1", "/").replace("~0", "~")
            cur = cur[int(part)] if isinstance(cur, list) else cur[part]
        node = cur
    return node

failures, checked, failed_checks, failed_rules = [], 0, 0, 0

def fail(message):
    """A broken rule that is not an example's schema check (each one counts as a failed check)."""
    global failed_rules
    failed_rules += 1
    failures.append(message)

def check(where, schema, value):
    global checked, failed_checks
    checked += 1
    v = Draft202012Validator(rooted(schema), registry=registry)
    errors = sorted(v.iter_errors(value), key=lambda e: list(e.absolute_path))
    failed_checks += 1 if errors else 0
    for err in errors:
        path = "/".join(str(p) for p in err.absolute_path) or "(root)"
        failures.append(f"{where}: at {path}: {err.message[:300]}")

def check_media(where, media):
    for ctype, mt in (media or {}).items():
        schema = mt.get("schema")
        if schema is None:
            continue
        if "example" in mt:
            check(f"{where} {ctype} example", schema, mt["example"])
        for name, ex in (mt.get("examples") or {}).items():
            ex = deref(ex)
            if "value" in ex:
                check(f"{where} {ctype} examples.{name}", schema, ex["value"])
        if not ("example" in mt or mt.get("examples")):
            fail(f"{where} {ctype}: no example")

def check_params(where, params):
    for p in params or []:
        p = deref(p)
        if "example" in p:
            value = p["example"]
            if p.get("in") in ("path", "query", "header") and deref(p["schema"]).get("type") == "number":
                value = float(value)
            check(f"{where} parameter {p['name']} example", p["schema"], value)

methods = {"get", "put", "post", "delete", "patch", "head", "options"}
operation_ids = set()
for path, item in spec["paths"].items():
    check_params(path, item.get("parameters"))
    for method, op in item.items():
        if method not in methods:
            continue
        where = f"{method.upper()} {path}"
        if not op.get("operationId"):
            fail(f"{where}: no operationId")
        elif op["operationId"] in operation_ids:
            fail(f"{where}: duplicate operationId {op['operationId']}")
        operation_ids.add(op.get("operationId"))
        check_params(where, op.get("parameters"))
        if "requestBody" in op:
            check_media(f"{where} request", deref(op["requestBody"]).get("content"))
        for status, resp in op["responses"].items():
            resp = deref(resp)
            if "X-Request-Id" not in (resp.get("headers") or {}):
                fail(f"{where} {status}: no X-Request-Id header")
            check_media(f"{where} {status}", resp.get("content"))

for name, resp in spec["components"]["responses"].items():
    check_media(f"components.responses.{name}", resp.get("content"))
for name, schema in spec["components"]["schemas"].items():
    for i, ex in enumerate(schema.get("examples") or []):
        check(f"components.schemas.{name} examples[{i}]", schema, ex)

# The example catalog file uses the API's definition JSON.
with open(catalog_path) as f:
    catalog = json.load(f)
check("examples/catalog.json", {"type": "object", "additionalProperties": False, "required": ["sheets"],
      "properties": {"sheets": {"type": "array", "items": {"$ref": "#/components/schemas/SheetDefinitionInput"}}}},
      catalog)
ids = [s.get("id") for s in catalog.get("sheets", [])]
if any(i is None for i in ids):
    fail("examples/catalog.json: every entry needs an id")
if len(set(ids)) != len(ids):
    fail("examples/catalog.json: duplicate ids")

# The policy's reviewed golden decisions are what GET /v1/users/{userId}/decision serves.
import glob, os
golden_dir = os.path.join(os.path.dirname(os.path.abspath(catalog_path)), "..", "Tests", "SheetPolicyTests", "Golden")
for path in sorted(glob.glob(os.path.join(golden_dir, "*.json"))):
    with open(path) as f:
        check(f"golden {os.path.basename(path)}", {"$ref": "#/components/schemas/Decision"}, json.load(f))

for f in failures:
    print("FAIL " + f)
# The document's validity is one check, each example one more; each other rule broken is a failure.
print(f"check-openapi: {checked} examples checked, {len(failures)} problems")
print(f"check-openapi: {1 + checked - failed_checks} passed, {failed_checks + failed_rules} failed")
sys.exit(1 if failures else 0)
PY
