-- sheetd schema, version 10. Never edit once shipped: add a new numbered file.
--
-- An experiment's identity (issue 42): the sheet it runs on and its arms as they assign users (ids,
-- weights, holdout, in order), recorded by every catalog write that carries the experiment, in the
-- write's own transaction. Once the experiment has an exposure, or once it was stopped, no catalog
-- write (PUT, DELETE then PUT elsewhere, a restored revision, a --catalog file) may give its id
-- another identity: results would count users under arms that no longer exist. Rows are never
-- removed, so an id stays bound after its sheet is deleted.
CREATE TABLE experiment_identities (
    experiment_id TEXT NOT NULL PRIMARY KEY CHECK (length(experiment_id) BETWEEN 1 AND 128),
    sheet_id      TEXT NOT NULL CHECK (length(sheet_id) BETWEEN 1 AND 128),
    arms          TEXT NOT NULL,
    stopped       INTEGER NOT NULL DEFAULT 0 CHECK (stopped IN (0, 1))
) STRICT, WITHOUT ROWID;
