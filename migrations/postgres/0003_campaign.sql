-- sheetd schema for PostgreSQL, version 3: campaign rules (issue 15), numbered like
-- migrations/0003_campaign.sql. Never edit once shipped. Per-user tables are keyed by user_id first
-- (distributable by user_id, see 0001); settings and sheet_totals hold no user and are small.

-- The impression log behind the campaign rules: per user and sheet, Unix milliseconds oldest first
-- (pruned past the longest rule period on every impression; '{}' = none kept).
CREATE TABLE impressions (
    user_id   text NOT NULL CHECK (length(user_id) BETWEEN 1 AND 128),
    sheet_id  text NOT NULL CHECK (length(sheet_id) BETWEEN 1 AND 128),
    times     bigint[] NOT NULL,
    PRIMARY KEY (user_id, sheet_id)
);

-- Impressions per user and sheet since the user was first seen: counters kept for good.
CREATE TABLE impression_totals (
    user_id   text NOT NULL CHECK (length(user_id) BETWEEN 1 AND 128),
    sheet_id  text NOT NULL CHECK (length(sheet_id) BETWEEN 1 AND 128),
    total     bigint NOT NULL,
    PRIMARY KEY (user_id, sheet_id)
);

-- The user's latest dismissal of each sheet (Unix milliseconds), for cooldowns.
CREATE TABLE last_dismissals (
    user_id   text NOT NULL CHECK (length(user_id) BETWEEN 1 AND 128),
    sheet_id  text NOT NULL CHECK (length(sheet_id) BETWEEN 1 AND 128),
    at        bigint NOT NULL,
    PRIMARY KEY (user_id, sheet_id)
);

-- The operator's segments of a user (PUT /v1/users/{userId}/attributes), in stored order.
CREATE TABLE user_segments (
    user_id   text NOT NULL CHECK (length(user_id) BETWEEN 1 AND 128),
    position  integer NOT NULL CHECK (position >= 0),
    segment   text NOT NULL,
    PRIMARY KEY (user_id, position)
);

-- The service-wide campaign settings (GET/PUT /v1/settings): one row, absent until first written.
CREATE TABLE settings (
    id                         integer NOT NULL PRIMARY KEY CHECK (id = 1),
    global_cap_max             bigint CHECK (global_cap_max >= 1),
    global_cap_period_seconds  bigint CHECK (global_cap_period_seconds >= 1),
    min_interval_seconds       bigint CHECK (min_interval_seconds >= 1),
    CHECK ((global_cap_max IS NULL) = (global_cap_period_seconds IS NULL))
);

-- The activity log: append-only, written in the transaction of the user's event that caused it.
--   kind: 'impression' | 'dismissal' (method: the dismissal method) | 'latch-release' | 'opened'
--   (a presentation opened with this sheet as its parentSheetId); at: Unix milliseconds.
CREATE SEQUENCE sheet_activity_seq;
CREATE TABLE sheet_activity (
    user_id   text NOT NULL CHECK (length(user_id) BETWEEN 1 AND 128),
    seq       bigint NOT NULL DEFAULT nextval('sheet_activity_seq'),
    sheet_id  text NOT NULL CHECK (length(sheet_id) BETWEEN 1 AND 128),
    at        bigint NOT NULL,
    kind      text NOT NULL CHECK (kind IN ('impression', 'dismissal', 'latch-release', 'opened')),
    method    text,
    PRIMARY KEY (user_id, seq)
);

CREATE INDEX sheet_activity_by_sheet ON sheet_activity (sheet_id, at);

-- Per-sheet totals of the activity kinds (method '' when none), counted for good (no user id: an
-- erase leaves them). A writer adds its batch's totals just before its commit, in key order, so
-- writers never deadlock on them and hold their row locks only for the commit.
CREATE TABLE sheet_totals (
    sheet_id  text NOT NULL CHECK (length(sheet_id) BETWEEN 1 AND 128),
    kind      text NOT NULL,
    method    text NOT NULL DEFAULT '',
    total     bigint NOT NULL,
    PRIMARY KEY (sheet_id, kind, method)
);
