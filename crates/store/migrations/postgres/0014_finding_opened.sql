-- When a finding last became open (sqlite migration 32).
ALTER TABLE findings ADD COLUMN opened_at TEXT COLLATE "C" NOT NULL DEFAULT '';
UPDATE findings SET opened_at = first_seen;
CREATE INDEX findings_opened ON findings (company_id, opened_at);
