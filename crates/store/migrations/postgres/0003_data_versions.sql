-- The versions the API processes key their read caches by: one per kind of data, moved
-- on by every write of that data in the writing transaction. Triggers move them, so no
-- write path (the API, a worker, an import, an operator's SQL) can forget to.
-- 'company': companies and everything scanned or recorded about them; 'cve': the
-- vulnerability and reference data (a record's served form, matches and index rows are
-- written only with its `cves` row, so the trigger on `cves` covers them; fingerprint
-- rules and end-of-life data, which workers read again when it moves). Lookup counts
-- (companies.searched_by), keys, usage counters, jobs and feed state are not what
-- answers are cached from, and do not move them.

--
-- Here a version moves at commit, once per transaction (a deferred trigger that notes
-- in a transaction-local setting that it ran): the row lock on the version is held for
-- the commit only. Taken earlier, it would make concurrent writers wait for each other
-- for the whole transaction, and deadlock writers the application coordinates (the
-- import's two connections commit in turn). The company version is the sum of 16 rows,
-- 'company:0' to 'company:15'; a transaction moves the one its first written row's
-- company (or component, or rating) falls in, so concurrent writers of different
-- companies do not queue on one row while their commits are flushed.

CREATE TABLE data_versions (scope TEXT COLLATE "C" PRIMARY KEY, version BIGINT NOT NULL);
INSERT INTO data_versions (scope, version) SELECT 'company:' || n, 0 FROM generate_series(0, 15) n;
INSERT INTO data_versions (scope, version) VALUES ('cve', 1);

-- TG_ARGV[0]: the kind of data; TG_ARGV[1]: the column whose value picks the row of a
-- sharded kind (absent: row 0).
CREATE FUNCTION rampart_bump_version() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    key BIGINT;
    target TEXT := TG_ARGV[0];
BEGIN
    IF current_setting('rampart.moved_' || TG_ARGV[0], true) IS NOT DISTINCT FROM 'yes' THEN
        RETURN NULL;
    END IF;
    PERFORM set_config('rampart.moved_' || TG_ARGV[0], 'yes', true);
    IF TG_ARGV[0] = 'company' THEN
        IF TG_NARGS > 1 THEN
            IF TG_OP = 'DELETE' THEN
                key := (to_jsonb(OLD) ->> TG_ARGV[1])::BIGINT;
            ELSE
                key := (to_jsonb(NEW) ->> TG_ARGV[1])::BIGINT;
            END IF;
        END IF;
        target := 'company:' || (COALESCE(key, 0) % 16);
    END IF;
    UPDATE data_versions SET version = version + 1 WHERE scope = target;
    RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER dv_domains AFTER INSERT OR UPDATE OR DELETE ON domains DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION rampart_bump_version('company', 'company_id');
CREATE CONSTRAINT TRIGGER dv_subsidiaries AFTER INSERT OR UPDATE OR DELETE ON subsidiaries DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION rampart_bump_version('company', 'parent_id');
CREATE CONSTRAINT TRIGGER dv_subsidiary_requests AFTER INSERT OR UPDATE OR DELETE ON subsidiary_requests DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION rampart_bump_version('company', 'parent_id');
CREATE CONSTRAINT TRIGGER dv_applications AFTER INSERT OR UPDATE OR DELETE ON applications DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION rampart_bump_version('company', 'company_id');
CREATE CONSTRAINT TRIGGER dv_network_endpoints AFTER INSERT OR UPDATE OR DELETE ON network_endpoints DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION rampart_bump_version('company', 'company_id');
CREATE CONSTRAINT TRIGGER dv_sbom_components AFTER INSERT OR UPDATE OR DELETE ON sbom_components DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION rampart_bump_version('company', 'company_id');
CREATE CONSTRAINT TRIGGER dv_sbom_hosts AFTER INSERT OR UPDATE OR DELETE ON sbom_hosts DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION rampart_bump_version('company', 'component_id');
CREATE CONSTRAINT TRIGGER dv_sbom_cves AFTER INSERT OR UPDATE OR DELETE ON sbom_cves DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION rampart_bump_version('company', 'component_id');
CREATE CONSTRAINT TRIGGER dv_scores AFTER INSERT OR UPDATE OR DELETE ON scores DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION rampart_bump_version('company', 'company_id');
CREATE CONSTRAINT TRIGGER dv_component_scores AFTER INSERT OR UPDATE OR DELETE ON component_scores DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION rampart_bump_version('company', 'score_id');
CREATE CONSTRAINT TRIGGER dv_incidents AFTER INSERT OR UPDATE OR DELETE ON incidents DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION rampart_bump_version('company', 'company_id');
CREATE CONSTRAINT TRIGGER dv_hosts AFTER INSERT OR UPDATE OR DELETE ON hosts DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION rampart_bump_version('company', 'company_id');
CREATE CONSTRAINT TRIGGER dv_findings AFTER INSERT OR UPDATE OR DELETE ON findings DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION rampart_bump_version('company', 'company_id');
CREATE CONSTRAINT TRIGGER dv_fingerprints AFTER INSERT OR UPDATE OR DELETE ON fingerprints DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION rampart_bump_version('cve');
CREATE CONSTRAINT TRIGGER dv_companies AFTER INSERT OR DELETE OR UPDATE OF social_id, company_name, name_lc, website, domain, industry, description, company_id, funding_id, employees_number, followers_number, naics_code, last_scanned_at, created_at, updated_at, name_norm, scan_error, scan_error_at, dkim_selectors ON companies DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION rampart_bump_version('company', 'id');
CREATE CONSTRAINT TRIGGER dv_cves AFTER INSERT OR UPDATE OR DELETE ON cves DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION rampart_bump_version('cve');
CREATE CONSTRAINT TRIGGER dv_cpe_products AFTER INSERT OR UPDATE OR DELETE ON cpe_products DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION rampart_bump_version('cve');
CREATE CONSTRAINT TRIGGER dv_kev AFTER INSERT OR UPDATE OR DELETE ON kev DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION rampart_bump_version('cve');
CREATE CONSTRAINT TRIGGER dv_epss AFTER INSERT OR UPDATE OR DELETE ON epss DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION rampart_bump_version('cve');
CREATE CONSTRAINT TRIGGER dv_cwe AFTER INSERT OR UPDATE OR DELETE ON cwe DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION rampart_bump_version('cve');
CREATE CONSTRAINT TRIGGER dv_capec AFTER INSERT OR UPDATE OR DELETE ON capec DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION rampart_bump_version('cve');
CREATE CONSTRAINT TRIGGER dv_eol_products AFTER INSERT OR UPDATE OR DELETE ON eol_products DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION rampart_bump_version('cve');
