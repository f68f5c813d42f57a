-- sheetd schema, version 11. Never edit once shipped: add a new numbered file.
--
-- Catalog history stores changes, not copies (version 8 copied every sheet into every revision): a
-- revision has one catalog_revision_changes row per sheet it changed (definition NULL: deleted).
-- Revision N's catalog is, for each id, the newest row at or below N that is not a deletion; the
-- oldest kept revision's rows (and older rows it still needs) are its whole catalog. `bytes` is the
-- definition's length in bytes, what the history's byte budget counts (before the definition, so
-- that summing it reads no overflow page; the id index covers it too). `sheet_count` is each revision's number of sheets.
-- Existing history converts losslessly: each revision keeps the rows that differ from the revision
-- before it, and a deletion row for each sheet that revision dropped.
CREATE TABLE catalog_revision_changes (
    revision    INTEGER NOT NULL,
    id          TEXT NOT NULL CHECK (length(id) BETWEEN 1 AND 128),
    bytes       INTEGER NOT NULL,
    definition  TEXT,
    PRIMARY KEY (revision, id)
) STRICT;

CREATE INDEX catalog_revision_changes_by_id ON catalog_revision_changes (id, revision, bytes);

ALTER TABLE catalog_revisions ADD COLUMN sheet_count INTEGER NOT NULL DEFAULT 0;

UPDATE catalog_revisions SET sheet_count = (SELECT count(*) FROM catalog_revision_sheets s WHERE s.revision = catalog_revisions.revision);

INSERT INTO catalog_revision_changes (revision, id, bytes, definition)
SELECT s.revision, s.id, length(CAST(s.definition AS BLOB)), s.definition
FROM catalog_revision_sheets s
WHERE NOT EXISTS (
    SELECT 1 FROM catalog_revision_sheets p
    WHERE p.id = s.id AND p.definition = s.definition
        AND p.revision = (SELECT max(r.revision) FROM catalog_revisions r WHERE r.revision < s.revision))
ORDER BY s.revision, s.id;

INSERT INTO catalog_revision_changes (revision, id, bytes, definition)
SELECT n.revision, p.id, 0, NULL
FROM catalog_revisions n
JOIN catalog_revision_sheets p ON p.revision = (SELECT max(r.revision) FROM catalog_revisions r WHERE r.revision < n.revision)
WHERE NOT EXISTS (SELECT 1 FROM catalog_revision_sheets s WHERE s.revision = n.revision AND s.id = p.id);

DROP TABLE catalog_revision_sheets;
