-- sheetd schema for PostgreSQL, version 2: numbered like migrations/0002_user_state_rows.sql.
-- Never edit once shipped. The SQLite store moved each user's state into one row; the PostgreSQL
-- store still keeps the per-table rows of version 1 (its own decision; see PostgresUserStateSQL), so
-- this version changes nothing here and only keeps both backends' numbering in step.
SELECT 1;
