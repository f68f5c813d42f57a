"""schemathesis hooks for fuzz.py (loaded through SCHEMATHESIS_HOOKS).

An event's `occurredAt` must lie within 24 h before the server's clock and 60 s after it
(openapi.yaml, `OccurredAt`). A window relative to "now" is a rule JSON Schema cannot state, so a
schema-valid date-time such as 2000-01-01T00:00:00Z is refused with 400 by design. This hook moves a
well-formed `occurredAt` that falls outside the window to the current time; the member is still sent
and exercised, and a malformed one (a negative case) is left as generated, so every check stays on.
The 400 for an out-of-window time is tested in OccurredAtTests.
"""
from datetime import datetime, timedelta, timezone

import schemathesis

WINDOW_BEFORE = timedelta(hours=24)
WINDOW_AFTER = timedelta(seconds=60)
# Margin so that a time set now is still inside the window when the server reads it.
MARGIN = timedelta(minutes=5)


def _parse(value):
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


@schemathesis.hook
def map_case(context, case):
    body = case.body
    if not isinstance(body, dict):
        return case
    value = body.get("occurredAt")
    if not isinstance(value, str):
        return case
    when = _parse(value)
    if when is None:
        return case
    now = datetime.now(timezone.utc)
    if now - WINDOW_BEFORE + MARGIN <= when <= now + WINDOW_AFTER - MARGIN / 10:
        return case
    body["occurredAt"] = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    return case
