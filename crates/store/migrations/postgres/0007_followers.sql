-- A company's follower count when a source gave one, NULL when none did (as SQLite's
-- 0024_followers.sql): the old followers_number column is no longer read, and the zeros
-- it held for missing counts are taken as unknown.
ALTER TABLE companies ADD COLUMN followers BIGINT;
UPDATE companies SET followers = NULLIF(followers_number, 0);
DROP TRIGGER dv_companies ON companies;
CREATE CONSTRAINT TRIGGER dv_companies AFTER INSERT OR DELETE OR UPDATE OF social_id, company_name, name_lc, website, domain, industry, description, company_id, funding_id, employees_number, followers_number, followers, naics_code, last_scanned_at, created_at, updated_at, name_norm, scan_error, scan_error_at, dkim_selectors ON companies DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION rampart_bump_version('company', 'id');
