-- Findings follow the feeds without a rescan.
--
-- Every change of the vulnerability data that can change a finding — a CVE added or its
-- record changed, a KEV entry added, removed or changed — leaves its CVE id here, in
-- order; the worker that holds the `feeds` lease matches the affected companies' stored
-- software again and forgets the rows it has handled.
CREATE TABLE cve_changes (
    seq    INTEGER PRIMARY KEY AUTOINCREMENT,
    cve_id TEXT NOT NULL
);
CREATE TRIGGER cc_cves_i AFTER INSERT ON cves BEGIN INSERT INTO cve_changes (cve_id) VALUES (new.id); END;
CREATE TRIGGER cc_cves_u AFTER UPDATE OF record, configurations ON cves
    WHEN old.record IS NOT new.record OR old.configurations IS NOT new.configurations
    BEGIN INSERT INTO cve_changes (cve_id) VALUES (new.id); END;
CREATE TRIGGER cc_kev_i AFTER INSERT ON kev BEGIN INSERT INTO cve_changes (cve_id) VALUES (new.cve_id); END;
CREATE TRIGGER cc_kev_d AFTER DELETE ON kev BEGIN INSERT INTO cve_changes (cve_id) VALUES (old.cve_id); END;
CREATE TRIGGER cc_kev_u AFTER UPDATE ON kev WHEN old.entry IS NOT new.entry
    BEGIN INSERT INTO cve_changes (cve_id) VALUES (new.cve_id); END;

-- The software a company's last full scan detected (the scanner's detections as JSON,
-- every CPE name of each), to match again when the feeds change, and the products they
-- name, to find the companies a changed CVE concerns.
CREATE TABLE detected_software (
    company_id  INTEGER PRIMARY KEY REFERENCES companies (id) ON DELETE CASCADE,
    software    TEXT NOT NULL,
    detected_at TEXT NOT NULL
);
CREATE TABLE detected_products (
    company_id INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    vendor     TEXT NOT NULL,
    product    TEXT NOT NULL,
    PRIMARY KEY (company_id, vendor, product)
);
CREATE INDEX detected_products_vp ON detected_products (vendor, product);

-- Why a rating was made: 'scan', 'rescan', 'feed update' (NULL: imported, or made
-- before this column).
ALTER TABLE scores ADD COLUMN reason TEXT;
