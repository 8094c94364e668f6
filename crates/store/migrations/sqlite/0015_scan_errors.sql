-- Why a company could not be rated by its last scan (its domain does not exist), and
-- when: the API says so instead of "a scan will start soon". Cleared by a scan that rates.
ALTER TABLE companies ADD COLUMN scan_error TEXT;
ALTER TABLE companies ADD COLUMN scan_error_at TEXT;
