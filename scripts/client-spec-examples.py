#!/usr/bin/env python3
"""The bridge between openapi.yaml and the Swift client's conformance test (Tests/SheetdClientTests).

  client-spec-examples.py examples SPEC   prints every JSON example of the spec as a JSON list of
                                          {"where", "schema", "value"}, "schema" naming the component
                                          schema it is an instance of (responses, request bodies,
                                          components.responses and components.schemas examples)
  client-spec-examples.py validate SPEC   reads such a list on stdin (the client's encodings) and
                                          validates each value against its component schema; prints
                                          {"checked": N, "failures": [...]}

Needs PyYAML, jsonschema and referencing (scripts/check-openapi.sh installs them in .build/venv-tools).
"""
import json, sys
from urllib.parse import unquote
import yaml
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

mode, spec_path = sys.argv[1], sys.argv[2]
with open(spec_path) as f:
    spec = yaml.safe_load(f)
ROOT = "urn:sheetd:openapi"
registry = Registry().with_resource(ROOT, Resource.from_contents(spec, default_specification=DRAFT202012))

def deref(node):
    while isinstance(node, dict) and "$ref" in node and len(node) == 1:
        cur = spec
        for part in node["$ref"][2:].split("/"):  # a JSON pointer: percent-decoded, then ~1 is / and ~0 is ~
            part = unquote(part).replace("~1", "/").replace("~0", "~")
            cur = cur[int(part)] if isinstance(cur, list) else cur[part]
        node = cur
    return node

def schema_name(schema):
    """The component schema a media schema is (a $ref, or an allOf starting with one)."""
    if not isinstance(schema, dict):
        return None
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if "allOf" in schema and schema["allOf"] and "$ref" in schema["allOf"][0]:
        return schema["allOf"][0]["$ref"].rsplit("/", 1)[-1]
    return None

def examples():
    out = []
    def media(where, content):
        for ctype, mt in (content or {}).items():
            if "json" not in ctype:
                continue
            name = schema_name(mt.get("schema"))
            if name is None:
                continue
            if "example" in mt:
                out.append({"where": f"{where} {ctype} example", "schema": name, "value": mt["example"]})
            for key, ex in (mt.get("examples") or {}).items():
                ex = deref(ex)
                if "value" in ex:
                    out.append({"where": f"{where} {ctype} examples.{key}", "schema": name, "value": ex["value"]})
    for path, item in spec["paths"].items():
        for method, op in item.items():
            if method not in {"get", "put", "post", "delete", "patch"}:
                continue
            where = f"{method.upper()} {path}"
            if "requestBody" in op:
                media(f"{where} request", deref(op["requestBody"]).get("content"))
            for status, resp in op["responses"].items():
                media(f"{where} {status}", deref(resp).get("content"))
    for name, resp in spec["components"]["responses"].items():
        media(f"components.responses.{name}", resp.get("content"))
    for name, schema in spec["components"]["schemas"].items():
        for i, ex in enumerate(schema.get("examples") or []):
            out.append({"where": f"components.schemas.{name} examples[{i}]", "schema": name, "value": ex})
    return out

if mode == "examples":
    json.dump(examples(), sys.stdout)
elif mode == "validate":
    items = json.load(sys.stdin)
    failures = []
    for item in items:
        schema = {"$ref": ROOT + "#/components/schemas/" + item["schema"]}
        v = Draft202012Validator(schema, registry=registry)
        for err in v.iter_errors(item["value"]):
            path = "/".join(str(p) for p in err.absolute_path) or "(root)"
            failures.append(f'{item["where"]} ({item["schema"]}): at {path}: {err.message[:300]}')
    json.dump({"checked": len(items), "failures": failures}, sys.stdout)
else:
    sys.exit(f"unknown mode {mode}")
