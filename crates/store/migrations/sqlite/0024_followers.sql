-- A company's follower count when a source gave one, NULL when none did. The old
-- followers_number column (NOT NULL DEFAULT 0) could not say "unknown"; it is no longer
-- read. Before this migration a missing count was stored as 0: those zeros are taken as
-- unknown.
ALTER TABLE companies ADD COLUMN followers INTEGER;
UPDATE companies SET followers = NULLIF(followers_number, 0);
DROP TRIGGER dv_companies_u;
CREATE TRIGGER dv_companies_u AFTER UPDATE OF social_id, company_name, name_lc, website, domain, industry, description, company_id, funding_id, employees_number, followers_number, followers, naics_code, last_scanned_at, created_at, updated_at, name_norm, scan_error, scan_error_at, dkim_selectors ON companies BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
