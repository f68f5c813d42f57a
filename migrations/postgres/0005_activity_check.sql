-- sheetd schema, version 5. Never edit once shipped: add a new numbered file.
--
-- SQLite's version 5 rebuilds sheet_activity to spell its check of `kind` without an IN list (a
-- per-row cost in SQLite only; migrations/0005). PostgreSQL's table is unchanged: this version only
-- keeps both backends' numbering in step.
SELECT 1;
