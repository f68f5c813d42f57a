-- sheetd schema, version 8. Never edit once shipped: add a new numbered file.
-- (Version 7 is another change; the migrator applies every shipped version it has not applied,
-- whatever the order they arrive in, so these two are independent.)
--
-- Catalog history: every catalog or settings change appends a revision holding the whole catalog
-- as it was then (every sheet's canonical JSON and the settings), who made it and why. A restore
-- appends a new revision equal to an old one (restored_from). The store keeps the newest N.
-- AUTOINCREMENT: a revision number is never reused after old revisions are dropped.
CREATE TABLE catalog_revisions (
    revision                   INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at                 TEXT NOT NULL,
    actor                      TEXT NOT NULL CHECK (length(actor) BETWEEN 1 AND 128),
    comment                    TEXT CHECK (comment IS NULL OR length(comment) <= 1000),
    restored_from              INTEGER,
    global_cap_max             INTEGER,
    global_cap_period_seconds  INTEGER,
    min_interval_seconds       INTEGER
) STRICT;

CREATE TABLE catalog_revision_sheets (
    revision    INTEGER NOT NULL REFERENCES catalog_revisions (revision) ON DELETE CASCADE,
    id          TEXT NOT NULL CHECK (length(id) BETWEEN 1 AND 128),
    definition  TEXT NOT NULL,
    PRIMARY KEY (revision, id)
) STRICT, WITHOUT ROWID;
