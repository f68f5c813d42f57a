-- sheetd schema, version 10 (PostgreSQL). Never edit once shipped: add a new numbered file.
--
-- An experiment's identity: the sheet it runs on and its arms as they assign users, fixed once the
-- experiment has an exposure or was stopped (see migrations/0010_experiment_identities.sql).
CREATE TABLE experiment_identities (
    experiment_id text NOT NULL PRIMARY KEY CHECK (length(experiment_id) BETWEEN 1 AND 128),
    sheet_id      text NOT NULL CHECK (length(sheet_id) BETWEEN 1 AND 128),
    arms          text NOT NULL,
    stopped       integer NOT NULL DEFAULT 0 CHECK (stopped IN (0, 1))
);
