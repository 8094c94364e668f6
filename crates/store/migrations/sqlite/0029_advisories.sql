-- The vendors' and distributions' own statements of which versions a CVE affects
-- (vulndb::advisory): one row per CVE and statement key (publisher, product or package,
-- platform), the statement as JSON. vendor/product name the CPE product it speaks of
-- (for a distribution's package too, where the package is known), to find the
-- statements of a detection.
CREATE TABLE advisories (
    cve_id      TEXT NOT NULL,
    key         TEXT NOT NULL,
    vendor      TEXT,
    product     TEXT,
    package     TEXT,
    statement   TEXT NOT NULL,
    imported_at TEXT NOT NULL,
    PRIMARY KEY (cve_id, key)
);
CREATE INDEX advisories_vp ON advisories (vendor, product);

-- A statement changes what a company is charged with: the feed rematch follows it, and
-- kept reads of the CVE data are dropped.
CREATE TRIGGER cc_advisories_i AFTER INSERT ON advisories BEGIN INSERT INTO cve_changes (cve_id) VALUES (new.cve_id); END;
CREATE TRIGGER cc_advisories_u AFTER UPDATE OF statement ON advisories WHEN old.statement IS NOT new.statement
    BEGIN INSERT INTO cve_changes (cve_id) VALUES (new.cve_id); END;
CREATE TRIGGER cc_advisories_d AFTER DELETE ON advisories BEGIN INSERT INTO cve_changes (cve_id) VALUES (old.cve_id); END;
CREATE TRIGGER dv_advisories_i AFTER INSERT ON advisories BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'cve'; END;
CREATE TRIGGER dv_advisories_u AFTER UPDATE ON advisories BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'cve'; END;
CREATE TRIGGER dv_advisories_d AFTER DELETE ON advisories BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'cve'; END;
