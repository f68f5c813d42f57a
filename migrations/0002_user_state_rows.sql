-- sheetd schema, version 2. Never edit once shipped: add a new numbered file.
--
-- One row per user holds the user's whole state, so a decision reads it with one key lookup and an
-- event rewrites one row (in the event's own transaction). A user with an empty state has no row.
--
-- `state` format 1 (bytes): '1', then records in any order, each a tag and a fixed number of fields.
-- A field is <decimal byte length> ':' <bytes>, or '~' for an absent optional value.
--   'c' container_id filter count seq?          one per container and filter ('' = no filter)
--   'l' sheet_id count                           a latched card sheet
--   's' position sheet_id mode replaced_sheet_id?  one per stack entry, position 0 at the bottom
--   'h' sheet_id platform height                 a measured content height (shortest exact decimal)
CREATE TABLE user_states (
    user_id  TEXT NOT NULL PRIMARY KEY CHECK (length(user_id) BETWEEN 1 AND 128),
    state    BLOB NOT NULL
) STRICT, WITHOUT ROWID;

-- The rows of version 1, in format 1 (printf('%!.17g') keeps every bit of a height).
INSERT INTO user_states (user_id, state)
SELECT user_id, CAST('1' || group_concat(record, '') AS BLOB)
FROM (
    SELECT user_id, 'c'
        || length(CAST(container_id AS BLOB)) || ':' || container_id
        || length(CAST(filter AS BLOB)) || ':' || filter
        || length(CAST(count AS TEXT)) || ':' || count
        || CASE WHEN seq IS NULL THEN '~' ELSE length(CAST(seq AS TEXT)) || ':' || seq END AS record
    FROM container_counts
    UNION ALL
    SELECT user_id, 'l'
        || length(CAST(sheet_id AS BLOB)) || ':' || sheet_id
        || length(CAST(count AS TEXT)) || ':' || count
    FROM latches
    UNION ALL
    SELECT user_id, 's'
        || length(CAST(position AS TEXT)) || ':' || position
        || length(CAST(sheet_id AS BLOB)) || ':' || sheet_id
        || length(mode) || ':' || mode
        || CASE WHEN replaced_sheet_id IS NULL THEN '~'
                ELSE length(CAST(replaced_sheet_id AS BLOB)) || ':' || replaced_sheet_id END
    FROM stack
    UNION ALL
    SELECT user_id, 'h'
        || length(CAST(sheet_id AS BLOB)) || ':' || sheet_id
        || length(platform) || ':' || platform
        || length(printf('%!.17g', height)) || ':' || printf('%!.17g', height)
    FROM content_heights
)
GROUP BY user_id;

DROP TABLE container_counts;
DROP TABLE latches;
DROP TABLE stack;
DROP TABLE content_heights;
