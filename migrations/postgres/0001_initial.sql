-- sheetd schema for PostgreSQL, version 1 (the same version as migrations/0001_initial.sql).
-- Never edit once shipped: add a new numbered file, here and beside the SQLite one.
--
-- Every per-user table has user_id as the first column of its primary key, every statement sheetd
-- runs on them names one user_id, and no event touches two users: the tables can be distributed by
-- user_id (Citus: create_distributed_table('<table>', 'user_id')), with `sheets` as a reference table.

-- The sheet catalog: one row per definition, stored as the API's canonical JSON (text, not jsonb,
-- so it reads back byte for byte; the cast in the check rejects what is not JSON).
CREATE TABLE sheets (
    id          text NOT NULL PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 128),
    definition  text NOT NULL CHECK ((definition::jsonb) IS NOT NULL),
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Bumped by every event of a user, from one sequence (never reused, also after an erase): the row
-- lock serializes a user's events across replicas, and the value tells a replica whether what it
-- cached for the user is current.
CREATE SEQUENCE user_versions_seq;
CREATE TABLE user_versions (
    user_id  text NOT NULL PRIMARY KEY CHECK (length(user_id) BETWEEN 1 AND 128),
    version  bigint NOT NULL
);

-- The last count reported per user, container and filter ('' = no filter), with the highest
-- sequence number applied (NULL while no report carried one).
CREATE TABLE container_counts (
    user_id       text NOT NULL CHECK (length(user_id) BETWEEN 1 AND 128),
    container_id  text NOT NULL CHECK (length(container_id) BETWEEN 1 AND 128),
    filter        text NOT NULL DEFAULT '',
    count         bigint NOT NULL,
    seq           bigint,
    PRIMARY KEY (user_id, container_id, filter)
);

-- Latched card sheets: the container count when the user dismissed the sheet.
CREATE TABLE latches (
    user_id   text NOT NULL CHECK (length(user_id) BETWEEN 1 AND 128),
    sheet_id  text NOT NULL CHECK (length(sheet_id) BETWEEN 1 AND 128),
    count     bigint NOT NULL,
    PRIMARY KEY (user_id, sheet_id)
);

-- The user's stack of open sheets, position 0 at the bottom.
CREATE TABLE stack (
    user_id   text NOT NULL CHECK (length(user_id) BETWEEN 1 AND 128),
    position  integer NOT NULL CHECK (position >= 0),
    sheet_id  text NOT NULL CHECK (length(sheet_id) BETWEEN 1 AND 128),
    mode      text NOT NULL CHECK (mode IN ('push', 'replace')),
    -- A flow step (replace) remembers the step it replaced: it decides the transition.
    replaced_sheet_id text CHECK (replaced_sheet_id IS NULL OR length(replaced_sheet_id) BETWEEN 1 AND 128),
    PRIMARY KEY (user_id, position)
);

-- Measured content heights in points, per sheet and platform.
CREATE TABLE content_heights (
    user_id   text NOT NULL CHECK (length(user_id) BETWEEN 1 AND 128),
    sheet_id  text NOT NULL CHECK (length(sheet_id) BETWEEN 1 AND 128),
    platform  text NOT NULL CHECK (platform IN ('ios', 'android')),
    height    double precision NOT NULL,
    PRIMARY KEY (user_id, sheet_id, platform)
);

-- Event ids already applied, with the response of their first processing (replayed on retries).
-- Kept at least 24 hours; processed_at is Unix seconds, indexed for the periodic purge.
CREATE TABLE processed_events (
    user_id       text NOT NULL CHECK (length(user_id) BETWEEN 1 AND 128),
    event_id      text NOT NULL,
    outcome       bytea NOT NULL,
    processed_at  bigint NOT NULL,
    PRIMARY KEY (user_id, event_id)
);

CREATE INDEX processed_events_by_time ON processed_events (processed_at);
