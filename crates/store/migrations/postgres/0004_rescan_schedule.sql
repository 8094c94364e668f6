-- Scheduled rescans (sqlite migration 21). One row per company the scheduler has
-- planned: its own cadence (NULL: the scheduler's --rescan-every), when its next rescan
-- is due and the cadence that was planned with, and when the scheduler last queued one.
-- No data-version triggers: nothing the API answers is read from here.
CREATE TABLE rescan_schedule (
    company_id   BIGINT PRIMARY KEY REFERENCES companies (id) ON DELETE CASCADE,
    every_secs   BIGINT CHECK (every_secs > 0),
    next_at      TEXT COLLATE "C",
    planned_secs BIGINT,
    queued_at    TEXT COLLATE "C"
);
CREATE INDEX rescan_schedule_next ON rescan_schedule (next_at);

-- Leases of roles that one process holds at a time (the scheduler): taken when free or
-- lapsed, renewed by the holder.
CREATE TABLE role_leases (
    name   TEXT COLLATE "C" PRIMARY KEY,
    holder TEXT COLLATE "C" NOT NULL,
    until  TEXT COLLATE "C" NOT NULL
);
