-- Priorities: among ready jobs the highest is leased first (a rescan someone waits on
-- before a full scan, both before scheduled refreshes). Existing jobs keep 10, a scan's.
ALTER TABLE jobs ADD COLUMN priority BIGINT NOT NULL DEFAULT 10;
CREATE INDEX jobs_queued ON jobs (priority DESC, run_after, id) WHERE status = 'queued';
-- When the job was first leased: the time its effects are recorded at, the same on
-- every attempt, so a job run again after its worker died replaces what the dead
-- worker wrote (one rating per job), not adds to it.
ALTER TABLE jobs ADD COLUMN started_at TEXT COLLATE "C";
-- Leases that lapsed are found without reading the queued jobs.
CREATE INDEX jobs_leased ON jobs (lease_until) WHERE status = 'running';
