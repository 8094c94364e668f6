-- Priorities: among ready jobs the highest is leased first (a rescan someone waits on
-- before a full scan, both before scheduled refreshes). Existing jobs keep 10, a scan's.
ALTER TABLE jobs ADD COLUMN priority BIGINT NOT NULL DEFAULT 10;
CREATE INDEX jobs_queued ON jobs (priority DESC, run_after, id) WHERE status = 'queued';
