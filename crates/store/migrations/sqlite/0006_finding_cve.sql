-- The CVE a finding is about (certificate_cve, vulnerabilities): a record of the
-- vulnerability database, NULL for findings that name none.
ALTER TABLE findings ADD COLUMN cve TEXT;
