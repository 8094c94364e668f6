-- The DKIM selectors a company names (its own data: the import file, add-subsidiary,
-- `rampart companies set`), as a JSON array: tried first by its scans, and a key's
-- absence at them is a finding, where absence at the curated selectors alone is not.
ALTER TABLE companies ADD COLUMN dkim_selectors TEXT;
