-- sheetd schema, version 9. Never edit once shipped: add a new numbered file.
--
-- PostgreSQL's version 9 moves each user's state into one row of the same format SQLite has kept
-- since version 2 (migrations/postgres/0009_user_state_rows.sql). Nothing changes here: this
-- version only keeps both backends' numbering in step.
SELECT 1;
