#!/usr/bin/env bash
# The decision examples of openapi.yaml (getDecision's 200) are live answers: this script starts the
# debug sheetd with examples/catalog.json, replays each example's events and rewrites the examples
# in place. `--check` only compares and exits 1 when openapi.yaml differs from what the server answers.
#
#   scripts/decision-examples.sh [--check] [BINARY]     (default binary: .build/debug/sheetd)
set -euo pipefail
cd "$(dirname "$0")/.."
mode=write; [ "${1:-}" = --check ] && { mode=check; shift; }
binary=${1:-.build/debug/sheetd}
work=$(mktemp -d)
export SHEETD_ADMIN_TOKEN="examples-admin-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export SHEETD_JWT_SECRET="examples-secret-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
"$binary" serve --port 0 --db "$work/db.sqlite" --catalog examples/catalog.json --access-log false >"$work/log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
port=""
for _ in $(seq 1 100); do
  port=$(grep -o '"port":[0-9]*' "$work/log" 2>/dev/null | head -1 | cut -d: -f2 || true)
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { echo "sheetd did not report its port:"; cat "$work/log"; exit 1; }
b=http://127.0.0.1:$port
auth=(-H "Authorization: Bearer $SHEETD_ADMIN_TOKEN" -H 'Content-Type: application/json')
count() { curl -sf -X PUT "${auth[@]}" -d "{\"count\": $3}" "$b/v1/users/$1/containers/$2/count" >/dev/null; }
height() { curl -sf -X PUT "${auth[@]}" -d "{\"height\": $3, \"platform\": \"$4\"}" "$b/v1/users/$1/sheets/$2/content-height" >/dev/null; }
push() { curl -sf -X POST "${auth[@]}" -d "{\"sheetId\": \"$2\", \"mode\": \"push\"${3:+, \"parentSheetId\": \"$3\"}}" "$b/v1/users/$1/presentations" >/dev/null; }
dismiss() { curl -sf -X POST "${auth[@]}" -d "{\"sheetId\": \"$2\", \"method\": \"swipe\"}" "$b/v1/users/$1/dismissals" >/dev/null; }
decide() { curl -sf "${auth[@]}" "$b/v1/users/$1/decision?$2" >"$work/$3.json"; }
home='screen=home&tab=accounts'

count u1 offers-home 2; count u1 reminders-home 1; height u1 home-offers 312 ios
decide u1 "$home&platform=ios" cardsAvailableIos
count u2 offers-home 2
decide u2 "$home&platform=android" cardsAwaitingHeightAndroid
count u3 offers-home 2; height u3 home-offers 312 ios; push u3 offer-detail home-offers
decide u3 "$home&platform=ios" nestedStackIos
count u4 offers-home 2; height u4 home-offers 312 ios; push u4 transfer-confirm home-offers
decide u4 "$home&platform=ios" nestedFromAnotherScreenIos
push u5 atm-finder
decide u5 'screen=atm-locator&platform=android' noSwipeNonModalAndroid
count u6 offers-home 2; height u6 home-offers 312 ios
decide u6 "$home&platform=ios&keyboard=true" contentKeyboardIos
count u7 offers-home 2; dismiss u7 home-offers
decide u7 "$home&platform=ios" latched
decide u8 "$home&platform=ios" noCards
count u9 offers-payments 1
decide u9 'screen=payments&platform=ios&appVersion=2.9.4&locale=de-CH' notInAudienceIos

python3 - "$work" "$mode" <<'PY'
import json, re, sys
work, mode = sys.argv[1], sys.argv[2]
examples = [
    ("cardsAvailableIos", "Offer cards present on iOS; the reminders card sheet yields"),
    ("cardsAwaitingHeightAndroid", "Offer cards on Android before their content height is known"),
    ("nestedStackIos", "A card's detail opened over the offers card sheet (reason stack)"),
    ("nestedFromAnotherScreenIos", "A sheet of the payments screen pushed over the offers card sheet presents on "
     "the root's screen and tab; its scrim tap is off, so UIKit needs the delegate"),
    ("noSwipeNonModalAndroid", "A medium sheet that must not be swiped away on Android - gestures stay on (it "
     "resizes), Hidden is vetoed, the scrim is drawn only when expanded"),
    ("contentKeyboardIos", "A content sheet with the keyboard up grows by the keyboard instead of jumping to large"),
    ("latched", "The card sheet was dismissed and the count has not changed"),
    ("noCards", "Card sheets exist on this screen, none has cards"),
    ("notInAudienceIos", "A campaign rule holds the only card sheet (the app is older than its audience allows)"),
]
PLAIN = re.compile(r"^[A-Za-z][A-Za-z0-9 ._/-]*$")
def scalar(v):
    if v is None: return "null"
    if isinstance(v, bool): return "true" if v else "false"
    if isinstance(v, (int, float)): return str(int(v)) if float(v).is_integer() else repr(v)
    if PLAIN.match(v) and v not in ("true", "false", "null", "yes", "no", "on", "off") and not v.endswith(" "):
        return v
    return json.dumps(v) if "'" in v else "'" + v + "'"
def flowable(v):
    if isinstance(v, dict): return len(v) <= 3 and all(not isinstance(x, (dict, list)) for x in v.values())
    if isinstance(v, list):
        scalars = all(not isinstance(x, (dict, list)) for x in v) and len(flow(v)) <= 60
        return scalars or (len(v) <= 2 and all(isinstance(x, dict) and flowable(x) for x in v))
    return True
def flow(v):
    if isinstance(v, dict): return "{}" if not v else "{ " + ", ".join(f"{k}: {flow(x)}" for k, x in v.items()) + " }"
    if isinstance(v, list): return "[" + ", ".join(flow(x) for x in v) + "]"
    return scalar(v)
def emit(v, indent, out):
    pad = " " * indent
    if isinstance(v, dict):
        for k, x in v.items():
            if isinstance(x, (dict, list)) and x and not flowable(x):
                out.append(f"{pad}{k}:")
                emit(x, indent + 2, out)
            else:
                out.append(f"{pad}{k}: {flow(x)}")
    else:
        for item in v:
            if isinstance(item, dict) and not flowable(item):
                sub = []
                emit(item, indent + 2, sub)
                sub[0] = pad + "- " + sub[0][indent + 2:]
                out.extend(sub)
            else:
                out.append(f"{pad}- {flow(item)}")
lines = []
for name, summary in examples:
    with open(f"{work}/{name}.json") as f:
        value = json.load(f)
    lines += [" " * 16 + f"{name}:", " " * 18 + f"summary: {summary}", " " * 18 + "value:"]
    emit(value, 20, lines)
block = "\n".join(lines) + "\n"
spec = open("openapi.yaml").read()
start = spec.index("                cardsAvailableIos:\n")
end = spec.index("        '304':\n", start)
if mode == "check":
    if spec[start:end] != block:
        print("decision-examples: openapi.yaml's decision examples differ from the live answers; run scripts/decision-examples.sh")
        sys.exit(1)
    print(f"decision-examples: {len(examples)} decision examples equal the live answers")
else:
    open("openapi.yaml", "w").write(spec[:start] + block + spec[end:])
    print(f"decision-examples: {len(examples)} decision examples written")
PY
