-- The CPE match index keeps what lookups read: the vulnerable entries only, without
-- the criteria text and the raw version, which nothing reads back. The index by CVE
-- (for replacing a record's rows) repeats the whole key, so this halves both trees.
-- No foreign key: the rows are written with their record, in its transaction, and the
-- check cost a seek in `cves` for each of the million rows of an NVD import.
CREATE TABLE cve_cpe_matches_slim (
    vendor      TEXT NOT NULL,
    product     TEXT NOT NULL,
    version_key TEXT NOT NULL,
    cve_id      TEXT NOT NULL,
    part        TEXT NOT NULL,
    start_incl  TEXT NOT NULL,
    start_excl  TEXT NOT NULL,
    end_incl    TEXT NOT NULL,
    end_excl    TEXT NOT NULL,
    PRIMARY KEY (vendor, product, version_key, cve_id, part, start_incl, start_excl, end_incl, end_excl)
) WITHOUT ROWID;
INSERT OR IGNORE INTO cve_cpe_matches_slim
    SELECT vendor, product, version_key, cve_id, part, coalesce(start_incl, ''), coalesce(start_excl, ''),
           coalesce(end_incl, ''), coalesce(end_excl, '')
    FROM cve_cpe_matches WHERE vulnerable = 1;
DROP TABLE cve_cpe_matches;
ALTER TABLE cve_cpe_matches_slim RENAME TO cve_cpe_matches;
CREATE INDEX cve_cpe_matches_cve ON cve_cpe_matches (cve_id);
