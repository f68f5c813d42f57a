-- sheetd schema for PostgreSQL, version 4 (numbered like migrations/0004_replica_versions.sql).
-- Never edit once shipped.
--
-- The catalog's version, bumped in the same transaction as every catalog write (sheets, and any
-- other table a decision reads for every user, such as the campaign settings), so a replica can tell
-- with one cheap read, on the request that needs it, whether its in-memory catalog is current. One
-- row; with Citus it is a reference table beside `sheets`.
CREATE TABLE catalog_version (
    one      boolean NOT NULL PRIMARY KEY DEFAULT true CHECK (one),
    version  bigint NOT NULL
);
INSERT INTO catalog_version (one, version) VALUES (true, 1);
