"""schemathesis hooks for fuzz.py (loaded through SCHEMATHESIS_HOOKS).

An event's `occurredAt` must lie within 24 h before the server's clock and 60 s after it
(openapi.yaml, `OccurredAt`). A window relative to "now" is a rule JSON Schema cannot state, so a
schema-valid date-time such as 2000-01-01T00:00:00Z is refused with 400 by design. This hook moves a
well-formed `occurredAt` that falls outside the window to the current time; the member is still sent
and exercised, and a malformed one (a negative case) is left as generated, so every check stays on.
The 400 for an out-of-window time is tested in OccurredAtTests.

The stats series (`/v1/sheets/{sheetId}/stats/series`) has the same kind of rule: `since` from 1970,
`until` after `since`, and at most 1000 buckets between them (ending now without `until`). A
well-formed range outside that is moved to the last day, so the 200 path is fuzzed too; the 400s are
tested in StatsSeriesAPITests.
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


def _series_range(case, now):
    query = case.query
    if not isinstance(query, dict):
        return
    since = _parse(query["since"]) if isinstance(query.get("since"), str) else None
    if since is None:
        return
    until = _parse(query["until"]) if isinstance(query.get("until"), str) else None
    end = until or now
    if since.year >= 1970 and timedelta(0) < end - since <= timedelta(days=30) and (until is None or until <= now + timedelta(days=30)):
        return
    start = now - timedelta(days=1)
    query["since"] = start.strftime("%Y-%m-%dT%H:%M:%SZ")
    if until is not None:
        query["until"] = now.strftime("%Y-%m-%dT%H:%M:%SZ")


@schemathesis.hook
def map_case(context, case):
    if case.operation.path.endswith("/stats/series"):
        _series_range(case, datetime.now(timezone.utc))
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
