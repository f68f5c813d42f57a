-- sheetd schema, version 1. Never edit once shipped: add a new numbered file.
--
-- Ids are 1 to 128 characters (the API validates the alphabet). Per-user tables are keyed by
-- user_id first, so one user's rows sit together and a user's state is a handful of range scans.
-- WITHOUT ROWID: every table is looked up by its natural key only, and rows are small.

-- The sheet catalog: one row per definition, stored as the API's canonical JSON.
CREATE TABLE sheets (
    id          TEXT NOT NULL PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 128),
    definition  TEXT NOT NULL CHECK (json_valid(definition)),
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- The last count reported per user, container and filter ('' = no filter), with the highest
-- sequence number applied (NULL while no report carried one).
CREATE TABLE container_counts (
    user_id       TEXT NOT NULL CHECK (length(user_id) BETWEEN 1 AND 128),
    container_id  TEXT NOT NULL CHECK (length(container_id) BETWEEN 1 AND 128),
    filter        TEXT NOT NULL DEFAULT '',
    count         INTEGER NOT NULL,
    seq           INTEGER,
    PRIMARY KEY (user_id, container_id, filter)
) STRICT, WITHOUT ROWID;

-- Latched card sheets: the container count when the user dismissed the sheet.
CREATE TABLE latches (
    user_id   TEXT NOT NULL CHECK (length(user_id) BETWEEN 1 AND 128),
    sheet_id  TEXT NOT NULL CHECK (length(sheet_id) BETWEEN 1 AND 128),
    count     INTEGER NOT NULL,
    PRIMARY KEY (user_id, sheet_id)
) STRICT, WITHOUT ROWID;

-- The user's stack of open sheets, position 0 at the bottom.
CREATE TABLE stack (
    user_id   TEXT NOT NULL CHECK (length(user_id) BETWEEN 1 AND 128),
    position  INTEGER NOT NULL CHECK (position >= 0),
    sheet_id  TEXT NOT NULL CHECK (length(sheet_id) BETWEEN 1 AND 128),
    mode      TEXT NOT NULL CHECK (mode IN ('push', 'replace')),
    -- A flow step (replace) remembers the step it replaced: it decides the transition.
    replaced_sheet_id TEXT CHECK (replaced_sheet_id IS NULL OR length(replaced_sheet_id) BETWEEN 1 AND 128),
    PRIMARY KEY (user_id, position)
) STRICT, WITHOUT ROWID;

-- Measured content heights in points, per sheet and platform.
CREATE TABLE content_heights (
    user_id   TEXT NOT NULL CHECK (length(user_id) BETWEEN 1 AND 128),
    sheet_id  TEXT NOT NULL CHECK (length(sheet_id) BETWEEN 1 AND 128),
    platform  TEXT NOT NULL CHECK (platform IN ('ios', 'android')),
    height    REAL NOT NULL,
    PRIMARY KEY (user_id, sheet_id, platform)
) STRICT, WITHOUT ROWID;

-- Event ids already applied, with the response of their first processing (replayed on retries).
-- Kept at least 24 hours; processed_at is Unix seconds, indexed for the periodic purge.
CREATE TABLE processed_events (
    user_id       TEXT NOT NULL CHECK (length(user_id) BETWEEN 1 AND 128),
    event_id      TEXT NOT NULL,
    outcome       BLOB NOT NULL,
    processed_at  INTEGER NOT NULL,
    PRIMARY KEY (user_id, event_id)
) STRICT, WITHOUT ROWID;

CREATE INDEX processed_events_by_time ON processed_events (processed_at);
