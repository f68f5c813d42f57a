-- sheetd schema for PostgreSQL, version 8 (numbered like migrations/0008_catalog_revisions.sql).
-- Never edit once shipped. Version 7 is another change; the migrator applies every shipped version
-- it has not applied, so the two are independent.
--
-- Catalog history: every catalog or settings change appends a revision holding the whole catalog
-- as it was then, who made it and why; a restore appends a new revision equal to an old one. The
-- store keeps the newest N. Identity numbers are never reused.
CREATE TABLE catalog_revisions (
    revision                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    created_at                 timestamptz NOT NULL DEFAULT now(),
    actor                      text NOT NULL CHECK (length(actor) BETWEEN 1 AND 128),
    comment                    text CHECK (comment IS NULL OR length(comment) <= 1000),
    restored_from              bigint,
    global_cap_max             bigint,
    global_cap_period_seconds  bigint,
    min_interval_seconds       bigint
);

CREATE TABLE catalog_revision_sheets (
    revision    bigint NOT NULL REFERENCES catalog_revisions (revision) ON DELETE CASCADE,
    id          text NOT NULL CHECK (length(id) BETWEEN 1 AND 128),
    definition  text NOT NULL,
    PRIMARY KEY (revision, id)
);
