-- sheetd schema for PostgreSQL, version 6 (numbered like migrations/0006_rollups.sql). Never edit once shipped.
--
-- Statistics come from rollups instead of an event log (issue 25): one row per sheet and UTC hour
-- (bucket = hours since 1970-01-01T00:00Z) with the counters of that hour, added once per sheet and
-- hour by each committed batch of events, in the batch's transaction. `users` counts the users whose
-- latest impression of the sheet falls in that hour (a user moves on with a later impression and
-- leaves when erased), so distinct users from an hour on are a sum. Bucket -1000000000 is the
-- sheet's archive: hours past the retention folded away, and (from this migration) the totals of
-- events whose log rows were gone (erased users); it is counted only without `since`.
-- The activity log and the totals are folded in, then dropped.
--
-- Processed event ids are numbered per user (seq), so that only the latest N of a user are kept
-- (a bounded delete per event) besides the time window.

CREATE TABLE sheet_rollups (
    sheet_id               text NOT NULL CHECK (length(sheet_id) BETWEEN 1 AND 128),
    bucket                 bigint NOT NULL,
    impressions            bigint NOT NULL DEFAULT 0,
    users                  bigint NOT NULL DEFAULT 0,
    dismissed_swipe        bigint NOT NULL DEFAULT 0,
    dismissed_scrim        bigint NOT NULL DEFAULT 0,
    dismissed_closebutton  bigint NOT NULL DEFAULT 0,
    dismissed_cancelbutton bigint NOT NULL DEFAULT 0,
    dismissed_action       bigint NOT NULL DEFAULT 0,
    dismissed_programmatic bigint NOT NULL DEFAULT 0,
    latch_releases         bigint NOT NULL DEFAULT 0,
    opened_from            bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (sheet_id, bucket)
);

-- Retention folds the oldest hours into the archive row, oldest first, in small steps.
CREATE INDEX sheet_rollups_by_bucket ON sheet_rollups (bucket);

INSERT INTO sheet_rollups (sheet_id, bucket, impressions, users, dismissed_swipe, dismissed_scrim, dismissed_closebutton, dismissed_cancelbutton, dismissed_action, dismissed_programmatic, latch_releases, opened_from)
SELECT sheet_id, bucket, sum(impressions), sum(users), sum(dismissed_swipe), sum(dismissed_scrim), sum(dismissed_closebutton), sum(dismissed_cancelbutton), sum(dismissed_action), sum(dismissed_programmatic), sum(latch_releases), sum(opened_from)
FROM (
    -- Every activity row in its hour.
    SELECT sheet_id, CASE WHEN at >= 0 THEN at / 3600000 ELSE (at + 1) / 3600000 - 1 END AS bucket,
           CASE WHEN kind = 'impression' THEN 1 ELSE 0 END AS impressions,
           0 AS users,
           CASE WHEN kind = 'dismissal' AND method = 'swipe' THEN 1 ELSE 0 END AS dismissed_swipe,
           CASE WHEN kind = 'dismissal' AND method = 'scrim' THEN 1 ELSE 0 END AS dismissed_scrim,
           CASE WHEN kind = 'dismissal' AND method = 'closeButton' THEN 1 ELSE 0 END AS dismissed_closebutton,
           CASE WHEN kind = 'dismissal' AND method = 'cancelButton' THEN 1 ELSE 0 END AS dismissed_cancelbutton,
           CASE WHEN kind = 'dismissal' AND method = 'action' THEN 1 ELSE 0 END AS dismissed_action,
           CASE WHEN kind = 'dismissal' AND method = 'programmatic' THEN 1 ELSE 0 END AS dismissed_programmatic,
           CASE WHEN kind = 'latch-release' THEN 1 ELSE 0 END AS latch_releases,
           CASE WHEN kind = 'opened' THEN 1 ELSE 0 END AS opened_from
    FROM sheet_activity
    UNION ALL
    -- Each user once per sheet, in the hour of their latest impression.
    SELECT sheet_id, CASE WHEN max(at) >= 0 THEN max(at) / 3600000 ELSE (max(at) + 1) / 3600000 - 1 END AS bucket,
           0 AS impressions,
           1 AS users,
           0 AS dismissed_swipe,
           0 AS dismissed_scrim,
           0 AS dismissed_closebutton,
           0 AS dismissed_cancelbutton,
           0 AS dismissed_action,
           0 AS dismissed_programmatic,
           0 AS latch_releases,
           0 AS opened_from
    FROM sheet_activity
    WHERE kind = 'impression' GROUP BY user_id, sheet_id
    UNION ALL
    -- The totals kept for good, less what the log still has (erased users' events), into the archive.
    SELECT sheet_id, -1000000000 AS bucket,
           CASE WHEN kind = 'impression' THEN total ELSE 0 END AS impressions,
           0 AS users,
           CASE WHEN kind = 'dismissal' AND method = 'swipe' THEN total ELSE 0 END AS dismissed_swipe,
           CASE WHEN kind = 'dismissal' AND method = 'scrim' THEN total ELSE 0 END AS dismissed_scrim,
           CASE WHEN kind = 'dismissal' AND method = 'closeButton' THEN total ELSE 0 END AS dismissed_closebutton,
           CASE WHEN kind = 'dismissal' AND method = 'cancelButton' THEN total ELSE 0 END AS dismissed_cancelbutton,
           CASE WHEN kind = 'dismissal' AND method = 'action' THEN total ELSE 0 END AS dismissed_action,
           CASE WHEN kind = 'dismissal' AND method = 'programmatic' THEN total ELSE 0 END AS dismissed_programmatic,
           CASE WHEN kind = 'latch-release' THEN total ELSE 0 END AS latch_releases,
           CASE WHEN kind = 'opened' THEN total ELSE 0 END AS opened_from
    FROM sheet_totals
    UNION ALL
    SELECT sheet_id, -1000000000 AS bucket,
           -CASE WHEN kind = 'impression' THEN 1 ELSE 0 END AS impressions,
           0 AS users,
           -CASE WHEN kind = 'dismissal' AND method = 'swipe' THEN 1 ELSE 0 END AS dismissed_swipe,
           -CASE WHEN kind = 'dismissal' AND method = 'scrim' THEN 1 ELSE 0 END AS dismissed_scrim,
           -CASE WHEN kind = 'dismissal' AND method = 'closeButton' THEN 1 ELSE 0 END AS dismissed_closebutton,
           -CASE WHEN kind = 'dismissal' AND method = 'cancelButton' THEN 1 ELSE 0 END AS dismissed_cancelbutton,
           -CASE WHEN kind = 'dismissal' AND method = 'action' THEN 1 ELSE 0 END AS dismissed_action,
           -CASE WHEN kind = 'dismissal' AND method = 'programmatic' THEN 1 ELSE 0 END AS dismissed_programmatic,
           -CASE WHEN kind = 'latch-release' THEN 1 ELSE 0 END AS latch_releases,
           -CASE WHEN kind = 'opened' THEN 1 ELSE 0 END AS opened_from
    FROM sheet_activity
) AS facts
GROUP BY sheet_id, bucket;

DROP TABLE sheet_activity;
DROP TABLE sheet_totals;

ALTER TABLE processed_events ADD COLUMN seq bigint;
UPDATE processed_events p SET seq = r.n
FROM (SELECT user_id, event_id, row_number() OVER (PARTITION BY user_id ORDER BY processed_at, event_id) AS n FROM processed_events) AS r
WHERE p.user_id = r.user_id AND p.event_id = r.event_id;
ALTER TABLE processed_events ALTER COLUMN seq SET NOT NULL;
ALTER TABLE processed_events DROP CONSTRAINT processed_events_pkey;
ALTER TABLE processed_events ADD PRIMARY KEY (user_id, seq);
CREATE UNIQUE INDEX processed_events_by_id ON processed_events (user_id, event_id);
DROP SEQUENCE sheet_activity_seq;
