-- sheetd schema for PostgreSQL, version 9 (numbered like migrations/0009_user_state_rows.sql).
-- Never edit once shipped.
--
-- One row per user holds the user's whole state, in the same bytes as SQLite's `user_states.state`
-- (format 1 of migrations/0002_user_state_rows.sql, with the campaign tags of 0003 and the
-- experiment tags of 0007), beside the user's version (formerly `user_versions`): an event reads
-- its user with one locking upsert that bumps the version and returns the state, and writes one
-- row. The version keeps its meaning: drawn from `user_versions_seq` (never reused, also after an
-- erase) by every write that locks the user, read with the state in one snapshot, 0 for a user
-- without a row (never seen, or erased). A user whose state is empty keeps the row (the state is
-- then the format byte alone), so that the version stays.
CREATE TABLE user_states (
    user_id  text NOT NULL PRIMARY KEY CHECK (length(user_id) BETWEEN 1 AND 128),
    version  bigint NOT NULL,
    state    bytea NOT NULL
);

-- Heights in their shortest exact decimal (with more than 0 extra digits PostgreSQL 12 and later
-- print the shortest string that reads back as the same double; 3 gives 17 digits before 12).
SELECT set_config('extra_float_digits', '3', true);

-- The rows of version 8, in format 1. A field is <byte length> ':' <bytes> ('~' for an absent
-- optional value); lengths count UTF-8 bytes. Segments keep their order (the only records whose
-- order matters); the other records come sorted, as the store's own encoder writes them.
INSERT INTO user_states (user_id, version, state)
SELECT u.user_id, coalesce(v.version, nextval('user_versions_seq')),
       convert_to('1' || coalesce(r.records, ''), 'UTF8')
FROM (
    SELECT user_id FROM user_versions
    UNION SELECT user_id FROM container_counts
    UNION SELECT user_id FROM latches
    UNION SELECT user_id FROM stack
    UNION SELECT user_id FROM content_heights
    UNION SELECT user_id FROM impressions
    UNION SELECT user_id FROM impression_totals
    UNION SELECT user_id FROM last_dismissals
    UNION SELECT user_id FROM user_segments
    UNION SELECT user_id FROM experiment_exposures
    UNION SELECT user_id FROM experiment_pins
) AS u
LEFT JOIN user_versions v ON v.user_id = u.user_id
LEFT JOIN (
    SELECT user_id, string_agg(record, '' ORDER BY tag, k1 COLLATE "C", k2 COLLATE "C", n) AS records
    FROM (
        SELECT user_id, 1 AS tag, container_id AS k1, filter AS k2, 0 AS n, 'c'
            || length(convert_to(container_id, 'UTF8')) || ':' || container_id
            || length(convert_to(filter, 'UTF8')) || ':' || filter
            || length(count::text) || ':' || count::text
            || CASE WHEN seq IS NULL THEN '~' ELSE length(seq::text) || ':' || seq::text END AS record
        FROM container_counts
        UNION ALL
        SELECT user_id, 2, sheet_id, '', 0, 'l'
            || length(convert_to(sheet_id, 'UTF8')) || ':' || sheet_id
            || length(count::text) || ':' || count::text
        FROM latches
        UNION ALL
        SELECT user_id, 3, '', '', position, 's'
            || length(position::text) || ':' || position::text
            || length(convert_to(sheet_id, 'UTF8')) || ':' || sheet_id
            || length(mode) || ':' || mode
            || CASE WHEN replaced_sheet_id IS NULL THEN '~'
                    ELSE length(convert_to(replaced_sheet_id, 'UTF8')) || ':' || replaced_sheet_id END
        FROM stack
        UNION ALL
        SELECT user_id, 4, sheet_id, platform, 0, 'h'
            || length(convert_to(sheet_id, 'UTF8')) || ':' || sheet_id
            || length(platform) || ':' || platform
            || length(height::text) || ':' || height::text
        FROM content_heights
        UNION ALL
        SELECT user_id, 5, sheet_id, '', 0, 'i'
            || length(convert_to(sheet_id, 'UTF8')) || ':' || sheet_id
            || length(array_to_string(times, ',')) || ':' || array_to_string(times, ',')
        FROM impressions
        UNION ALL
        SELECT user_id, 6, sheet_id, '', 0, 't'
            || length(convert_to(sheet_id, 'UTF8')) || ':' || sheet_id
            || length(total::text) || ':' || total::text
        FROM impression_totals
        UNION ALL
        SELECT user_id, 7, sheet_id, '', 0, 'd'
            || length(convert_to(sheet_id, 'UTF8')) || ':' || sheet_id
            || length(at::text) || ':' || at::text
        FROM last_dismissals
        UNION ALL
        SELECT user_id, 8, '', '', position, 'g'
            || length(convert_to(segment, 'UTF8')) || ':' || segment
        FROM user_segments
        UNION ALL
        SELECT user_id, 9, experiment_id, '', 0, 'x'
            || length(convert_to(experiment_id, 'UTF8')) || ':' || experiment_id
            || length(convert_to(arm, 'UTF8')) || ':' || arm
            || length(exposed_at::text) || ':' || exposed_at::text
        FROM experiment_exposures
        UNION ALL
        SELECT user_id, 10, experiment_id, '', 0, 'p'
            || length(convert_to(experiment_id, 'UTF8')) || ':' || experiment_id
            || length(convert_to(arm, 'UTF8')) || ':' || arm
        FROM experiment_pins
    ) AS records
    GROUP BY user_id
) AS r ON r.user_id = u.user_id;

-- The per-user tables the row replaces. experiment_exposures stays (the results count it, as on
-- SQLite, where the state's copy of the exposures is the row's 'x' records); so do the processed
-- event ids and the sequence the versions are drawn from.
DROP TABLE container_counts;
DROP TABLE latches;
DROP TABLE stack;
DROP TABLE content_heights;
DROP TABLE impressions;
DROP TABLE impression_totals;
DROP TABLE last_dismissals;
DROP TABLE user_segments;
DROP TABLE experiment_pins;
DROP TABLE user_versions;
