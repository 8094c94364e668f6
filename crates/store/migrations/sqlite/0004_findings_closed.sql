-- A finding that a later scan no longer sees is closed, not deleted: its history
-- (first_seen, last_seen, closed_at) stays, and it reopens if it comes back.
ALTER TABLE findings ADD COLUMN closed_at TEXT;
CREATE INDEX findings_open ON findings (company_id, closed_at);
