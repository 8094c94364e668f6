-- The served form of each record in its own narrow table. In `cves` it sat behind the
-- stored record, on overflow pages: reading 500 served forms walked ~3 pages a row.
CREATE TABLE cve_served (
    id     TEXT PRIMARY KEY REFERENCES cves (id) ON DELETE CASCADE,
    cwe    TEXT NOT NULL,
    served TEXT NOT NULL
);
INSERT INTO cve_served (id, cwe, served) SELECT id, cwe, served FROM cves;
ALTER TABLE cves DROP COLUMN served;
