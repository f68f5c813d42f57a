-- sheetd schema for PostgreSQL, version 11 (numbered like migrations/0011_catalog_history_changes.sql).
-- Never edit once shipped.
--
-- Catalog history stores changes, not copies (version 8 copied every sheet into every revision): a
-- revision has one catalog_revision_changes row per sheet it changed (definition NULL: deleted).
-- Revision N's catalog is, for each id, the newest row at or below N that is not a deletion. `bytes`
-- is the definition's length in bytes, what the history's byte budget counts; `sheet_count` is each
-- revision's number of sheets. created_at becomes the RFC 3339 text the API shows (written by the
-- server, as on SQLite, so that both backends share one history SQL). Existing history converts
-- losslessly: each revision keeps the rows that differ from the revision before it, and a deletion
-- row for each sheet that revision dropped.
CREATE TABLE catalog_revision_changes (
    revision    bigint NOT NULL,
    id          text NOT NULL CHECK (length(id) BETWEEN 1 AND 128),
    bytes       bigint NOT NULL,
    definition  text,
    PRIMARY KEY (revision, id)
);

CREATE INDEX catalog_revision_changes_by_id ON catalog_revision_changes (id, revision, bytes);

ALTER TABLE catalog_revisions ADD COLUMN sheet_count bigint NOT NULL DEFAULT 0;

ALTER TABLE catalog_revisions ALTER COLUMN created_at DROP DEFAULT;
ALTER TABLE catalog_revisions ALTER COLUMN created_at TYPE text
    USING to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');

UPDATE catalog_revisions SET sheet_count = (SELECT count(*) FROM catalog_revision_sheets s WHERE s.revision = catalog_revisions.revision);

INSERT INTO catalog_revision_changes (revision, id, bytes, definition)
SELECT s.revision, s.id, octet_length(s.definition), s.definition
FROM catalog_revision_sheets s
WHERE NOT EXISTS (
    SELECT 1 FROM catalog_revision_sheets p
    WHERE p.id = s.id AND p.definition = s.definition
        AND p.revision = (SELECT max(r.revision) FROM catalog_revisions r WHERE r.revision < s.revision));

INSERT INTO catalog_revision_changes (revision, id, bytes, definition)
SELECT n.revision, p.id, 0, NULL
FROM catalog_revisions n
JOIN catalog_revision_sheets p ON p.revision = (SELECT max(r.revision) FROM catalog_revisions r WHERE r.revision < n.revision)
WHERE NOT EXISTS (SELECT 1 FROM catalog_revision_sheets s WHERE s.revision = n.revision AND s.id = p.id);

DROP TABLE catalog_revision_sheets;
