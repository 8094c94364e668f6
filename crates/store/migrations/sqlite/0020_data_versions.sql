-- The versions the API processes key their read caches by: one per kind of data, moved
-- on by every write of that data in the writing transaction. Triggers move them, so no
-- write path (the API, a worker, an import, an operator's SQL) can forget to.
-- 'company': companies and everything scanned or recorded about them; 'cve': the
-- vulnerability and reference data (a record's served form, matches and index rows are
-- written only with its `cves` row, so the trigger on `cves` covers them; fingerprint
-- rules and end-of-life data, which workers read again when it moves). Lookup counts
-- (companies.searched_by), keys, usage counters, jobs and feed state are not what
-- answers are cached from, and do not move them.

CREATE TABLE data_versions (scope TEXT PRIMARY KEY, version INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO data_versions (scope, version) VALUES ('company', 1), ('cve', 1);

CREATE TRIGGER dv_domains_i AFTER INSERT ON domains BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_domains_d AFTER DELETE ON domains BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_domains_u AFTER UPDATE ON domains BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_subsidiaries_i AFTER INSERT ON subsidiaries BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_subsidiaries_d AFTER DELETE ON subsidiaries BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_subsidiaries_u AFTER UPDATE ON subsidiaries BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_subsidiary_requests_i AFTER INSERT ON subsidiary_requests BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_subsidiary_requests_d AFTER DELETE ON subsidiary_requests BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_subsidiary_requests_u AFTER UPDATE ON subsidiary_requests BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_applications_i AFTER INSERT ON applications BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_applications_d AFTER DELETE ON applications BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_applications_u AFTER UPDATE ON applications BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_network_endpoints_i AFTER INSERT ON network_endpoints BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_network_endpoints_d AFTER DELETE ON network_endpoints BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_network_endpoints_u AFTER UPDATE ON network_endpoints BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_sbom_components_i AFTER INSERT ON sbom_components BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_sbom_components_d AFTER DELETE ON sbom_components BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_sbom_components_u AFTER UPDATE ON sbom_components BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_sbom_hosts_i AFTER INSERT ON sbom_hosts BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_sbom_hosts_d AFTER DELETE ON sbom_hosts BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_sbom_hosts_u AFTER UPDATE ON sbom_hosts BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_sbom_cves_i AFTER INSERT ON sbom_cves BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_sbom_cves_d AFTER DELETE ON sbom_cves BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_sbom_cves_u AFTER UPDATE ON sbom_cves BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_scores_i AFTER INSERT ON scores BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_scores_d AFTER DELETE ON scores BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_scores_u AFTER UPDATE ON scores BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_component_scores_i AFTER INSERT ON component_scores BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_component_scores_d AFTER DELETE ON component_scores BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_component_scores_u AFTER UPDATE ON component_scores BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_incidents_i AFTER INSERT ON incidents BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_incidents_d AFTER DELETE ON incidents BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_incidents_u AFTER UPDATE ON incidents BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_hosts_i AFTER INSERT ON hosts BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_hosts_d AFTER DELETE ON hosts BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_hosts_u AFTER UPDATE ON hosts BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_findings_i AFTER INSERT ON findings BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_findings_d AFTER DELETE ON findings BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_findings_u AFTER UPDATE ON findings BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_fingerprints_i AFTER INSERT ON fingerprints BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'cve'; END;
CREATE TRIGGER dv_fingerprints_d AFTER DELETE ON fingerprints BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'cve'; END;
CREATE TRIGGER dv_fingerprints_u AFTER UPDATE ON fingerprints BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'cve'; END;
CREATE TRIGGER dv_companies_i AFTER INSERT ON companies BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_companies_d AFTER DELETE ON companies BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_companies_u AFTER UPDATE OF social_id, company_name, name_lc, website, domain, industry, description, company_id, funding_id, employees_number, followers_number, naics_code, last_scanned_at, created_at, updated_at, name_norm, scan_error, scan_error_at, dkim_selectors ON companies BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_cves_i AFTER INSERT ON cves BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'cve'; END;
CREATE TRIGGER dv_cves_u AFTER UPDATE ON cves BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'cve'; END;
CREATE TRIGGER dv_cves_d AFTER DELETE ON cves BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'cve'; END;
CREATE TRIGGER dv_cpe_products_i AFTER INSERT ON cpe_products BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'cve'; END;
CREATE TRIGGER dv_cpe_products_u AFTER UPDATE ON cpe_products BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'cve'; END;
CREATE TRIGGER dv_cpe_products_d AFTER DELETE ON cpe_products BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'cve'; END;
CREATE TRIGGER dv_kev_i AFTER INSERT ON kev BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'cve'; END;
CREATE TRIGGER dv_kev_u AFTER UPDATE ON kev BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'cve'; END;
CREATE TRIGGER dv_kev_d AFTER DELETE ON kev BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'cve'; END;
CREATE TRIGGER dv_epss_i AFTER INSERT ON epss BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'cve'; END;
CREATE TRIGGER dv_epss_u AFTER UPDATE ON epss BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'cve'; END;
CREATE TRIGGER dv_epss_d AFTER DELETE ON epss BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'cve'; END;
CREATE TRIGGER dv_cwe_i AFTER INSERT ON cwe BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'cve'; END;
CREATE TRIGGER dv_cwe_u AFTER UPDATE ON cwe BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'cve'; END;
CREATE TRIGGER dv_cwe_d AFTER DELETE ON cwe BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'cve'; END;
CREATE TRIGGER dv_capec_i AFTER INSERT ON capec BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'cve'; END;
CREATE TRIGGER dv_capec_u AFTER UPDATE ON capec BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'cve'; END;
CREATE TRIGGER dv_capec_d AFTER DELETE ON capec BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'cve'; END;
CREATE TRIGGER dv_eol_products_i AFTER INSERT ON eol_products BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'cve'; END;
CREATE TRIGGER dv_eol_products_u AFTER UPDATE ON eol_products BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'cve'; END;
CREATE TRIGGER dv_eol_products_d AFTER DELETE ON eol_products BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'cve'; END;
