-- When a finding last became open: its first sighting, or the scan that saw it again
-- after it had closed (first_seen keeps the first). The change report and alerts read
-- the findings opened between two ratings from it.
ALTER TABLE findings ADD COLUMN opened_at TEXT NOT NULL DEFAULT '';
UPDATE findings SET opened_at = first_seen;
CREATE INDEX findings_opened ON findings (company_id, opened_at);
