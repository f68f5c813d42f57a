-- sheetd schema, version 5. Never edit once shipped: add a new numbered file.
--
-- sheet_activity is rebuilt with the same columns, key, index and rows; only the check of `kind`
-- is spelled with OR instead of IN: SQLite compiles a CHECK with an IN list of more than two values
-- into a temporary B-tree built for every inserted row (on the writer, for every event's activity).
-- Same values allowed, same rows kept.
CREATE TABLE sheet_activity_v5 (
    user_id   TEXT NOT NULL CHECK (length(user_id) BETWEEN 1 AND 128),
    seq       INTEGER NOT NULL,
    sheet_id  TEXT NOT NULL CHECK (length(sheet_id) BETWEEN 1 AND 128),
    at        INTEGER NOT NULL,
    kind      TEXT NOT NULL CHECK (kind = 'impression' OR kind = 'dismissal' OR kind = 'latch-release' OR kind = 'opened'),
    method    TEXT,
    PRIMARY KEY (user_id, seq)
) STRICT, WITHOUT ROWID;

INSERT INTO sheet_activity_v5 (user_id, seq, sheet_id, at, kind, method)
SELECT user_id, seq, sheet_id, at, kind, method FROM sheet_activity ORDER BY user_id, seq;

DROP TABLE sheet_activity;
ALTER TABLE sheet_activity_v5 RENAME TO sheet_activity;
CREATE INDEX sheet_activity_by_sheet ON sheet_activity (sheet_id, at);
