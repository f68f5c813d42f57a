-- sheetd schema, version 3: campaign rules (issue 15). Never edit once shipped: add a new numbered file.
--
-- user_states.state keeps format 1 and gains four record tags (rows written before decode unchanged;
-- a binary older than this version refuses the database, so it never meets them):
--   'i' sheet_id times        the impression log of a sheet: Unix milliseconds, oldest first,
--                             comma-separated ('' = none kept); pruned past the longest rule period
--   't' sheet_id total        impressions of the sheet since the user was first seen (never pruned)
--   'd' sheet_id at           the user's latest dismissal of the sheet (Unix milliseconds)
--   'g' segment               one of the user's segments, in stored order (sorted, no duplicates)

-- The service-wide campaign settings (GET/PUT /v1/settings): one row, absent until first written
-- (both rules off). NULL is off.
CREATE TABLE settings (
    id                         INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    global_cap_max             INTEGER CHECK (global_cap_max >= 1),
    global_cap_period_seconds  INTEGER CHECK (global_cap_period_seconds >= 1),
    min_interval_seconds       INTEGER CHECK (min_interval_seconds >= 1),
    CHECK ((global_cap_max IS NULL) = (global_cap_period_seconds IS NULL))
) STRICT;

-- The activity log: append-only, one row per fact about a sheet, written in the transaction of the
-- user's event that caused it. Keyed by user_id first like every per-user table (a user's erase
-- deletes their rows); read per sheet and time for GET /v1/sheets/{sheetId}/stats.
--   kind: 'impression' | 'dismissal' (method: the dismissal method) | 'latch-release' | 'opened'
--   (a presentation opened with this sheet as its parentSheetId); at: Unix milliseconds.
CREATE TABLE sheet_activity (
    user_id   TEXT NOT NULL CHECK (length(user_id) BETWEEN 1 AND 128),
    seq       INTEGER NOT NULL,
    sheet_id  TEXT NOT NULL CHECK (length(sheet_id) BETWEEN 1 AND 128),
    at        INTEGER NOT NULL,
    kind      TEXT NOT NULL CHECK (kind IN ('impression', 'dismissal', 'latch-release', 'opened')),
    method    TEXT,
    PRIMARY KEY (user_id, seq)
) STRICT, WITHOUT ROWID;

CREATE INDEX sheet_activity_by_sheet ON sheet_activity (sheet_id, at);

-- Per-sheet totals of the activity kinds (method '' when the kind has none), counted for good: they
-- hold no user id, so a user's erase leaves them, and they are the stats without `since`.
CREATE TABLE sheet_totals (
    sheet_id  TEXT NOT NULL CHECK (length(sheet_id) BETWEEN 1 AND 128),
    kind      TEXT NOT NULL,
    method    TEXT NOT NULL DEFAULT '',
    total     INTEGER NOT NULL,
    PRIMARY KEY (sheet_id, kind, method)
) STRICT, WITHOUT ROWID;
