-- sheetd schema, version 7. Never edit once shipped: add a new numbered file.
--
-- Experiments (issue 27). One row per experiment and exposed user: the arm and the time of the
-- user's first exposure (insert-or-ignore: a user is exposed once per experiment), the user's
-- impressions of the sheet and conversions counted for the arm while exposed, and whether a QA pin
-- takes the user out of the results. Conversions outside any exposure's window are counted per
-- experiment in experiment_unattributed. The user's own copy of their exposures and pins is in
-- their state (tags x and p of the state format).
CREATE TABLE experiment_exposures (
    experiment_id TEXT NOT NULL CHECK (length(experiment_id) BETWEEN 1 AND 128),
    user_id       TEXT NOT NULL CHECK (length(user_id) BETWEEN 1 AND 128),
    arm           TEXT NOT NULL CHECK (length(arm) BETWEEN 1 AND 128),
    exposed_at    INTEGER NOT NULL,
    impressions   INTEGER NOT NULL DEFAULT 0,
    conversions   INTEGER NOT NULL DEFAULT 0,
    pinned        INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (experiment_id, user_id)
) STRICT, WITHOUT ROWID;

-- Erasing a user finds their rows.
CREATE INDEX experiment_exposures_by_user ON experiment_exposures (user_id);

CREATE TABLE experiment_unattributed (
    experiment_id TEXT NOT NULL PRIMARY KEY CHECK (length(experiment_id) BETWEEN 1 AND 128),
    conversions   INTEGER NOT NULL DEFAULT 0
) STRICT, WITHOUT ROWID;
