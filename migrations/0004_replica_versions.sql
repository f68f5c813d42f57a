-- sheetd schema, version 4. Never edit once shipped: add a new numbered file.
--
-- PostgreSQL's version 4 adds the catalog version replicas compare (migrations/postgres/0004).
-- One process owns a SQLite file, so its caches are invalidated in memory and nothing is stored
-- here: this version only keeps both backends' numbering in step.
SELECT 1;
