-- Software found by the scanner: findings about one component or one CVE of a host, the
-- engine's confidence in a detection, imported fingerprint rules and lifecycle data.

-- A host can carry one finding per component (sbom.end_of_life of nginx and of PHP) and
-- one per CVE (vulnerabilities.cve): the finding's identity gains a subject, the CVE id
-- or the component ("name version"), empty for every other finding. SQLite cannot
-- change a table constraint in place, so the table is rebuilt.
CREATE TABLE findings_new (
    id          INTEGER PRIMARY KEY,
    company_id  INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    risk_vector TEXT NOT NULL,
    asset       TEXT NOT NULL,
    severity    TEXT NOT NULL,
    severity_rank INTEGER NOT NULL,
    code        TEXT NOT NULL,
    title       TEXT NOT NULL,
    evidence    TEXT NOT NULL DEFAULT '',
    remediation TEXT NOT NULL DEFAULT '',
    refs        TEXT NOT NULL DEFAULT '[]',
    first_seen  TEXT NOT NULL,
    last_seen   TEXT NOT NULL,
    closed_at   TEXT,
    cve         TEXT,
    component   TEXT,
    subject     TEXT NOT NULL DEFAULT '',
    UNIQUE (company_id, risk_vector, asset, code, subject)
);
INSERT INTO findings_new (id, company_id, risk_vector, asset, severity, severity_rank, code, title, evidence,
                          remediation, refs, first_seen, last_seen, closed_at, cve, component, subject)
    SELECT id, company_id, risk_vector, asset, severity, severity_rank, code, title, evidence, remediation, refs,
           first_seen, last_seen, closed_at, cve, NULL, coalesce(cve, '')
    FROM findings;
DROP TABLE findings;
ALTER TABLE findings_new RENAME TO findings;
CREATE INDEX findings_asset ON findings (company_id, asset, risk_vector);
CREATE INDEX findings_vector ON findings (company_id, risk_vector, severity_rank);
CREATE INDEX findings_open ON findings (company_id, closed_at);

ALTER TABLE applications ADD COLUMN confidence INTEGER;
ALTER TABLE sbom_components ADD COLUMN confidence INTEGER;
CREATE INDEX applications_host ON applications (company_id, host);

-- Technologies imported in the Wappalyzer format (`rampart import fingerprints`), with
-- category names resolved; the scanner adds them to its built-in rules.
CREATE TABLE fingerprints (
    name        TEXT PRIMARY KEY,
    source      TEXT NOT NULL,
    rule        TEXT NOT NULL,
    imported_at TEXT NOT NULL
);

-- endoflife.date products (`rampart import eol`): release cycles with their end of life
-- and latest release, keyed by the product's endoflife.date name.
CREATE TABLE eol_products (
    name        TEXT PRIMARY KEY,
    product     TEXT NOT NULL,
    imported_at TEXT NOT NULL
);
