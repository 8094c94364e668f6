-- The vulnerability database: configurations kept for matching, an index of every
-- cpeMatch entry with version keys (byte order = version order), the product list,
-- and the side feeds (KEV, EPSS, CWE, CAPEC) joined at read time.

ALTER TABLE cves ADD COLUMN configurations TEXT NOT NULL DEFAULT '[]';
-- 0 when the index rows decide a match alone (OR trees, plain versions); 1 when the
-- configurations must be evaluated (AND, negation, NA or pattern versions).
ALTER TABLE cves ADD COLUMN needs_eval INTEGER NOT NULL DEFAULT 1;
-- The record as list responses serve it (rendered by vulndb), and its CWE.
ALTER TABLE cves ADD COLUMN served TEXT NOT NULL DEFAULT '';
ALTER TABLE cves ADD COLUMN cwe TEXT NOT NULL DEFAULT 'Unknown';

DROP TABLE cve_products;

-- Clustered by (vendor, product, vulnerable, version_key): an exact version is one
-- seek, and the rows without one ('' — ranges, ANY, NA, patterns) are contiguous.
-- Absent keys are '' (primary-key columns of a WITHOUT ROWID table cannot be NULL).
CREATE TABLE cve_cpe_matches (
    vendor      TEXT NOT NULL,
    product     TEXT NOT NULL,
    vulnerable  INTEGER NOT NULL,
    version_key TEXT NOT NULL,
    cve_id      TEXT NOT NULL REFERENCES cves (id) ON DELETE CASCADE,
    criteria    TEXT NOT NULL,
    part        TEXT NOT NULL,
    version     TEXT NOT NULL,
    start_incl  TEXT,
    start_excl  TEXT,
    end_incl    TEXT,
    end_excl    TEXT,
    PRIMARY KEY (vendor, product, vulnerable, version_key, cve_id, criteria, start_incl, start_excl, end_incl, end_excl)
) WITHOUT ROWID;
CREATE INDEX cve_cpe_matches_cve ON cve_cpe_matches (cve_id);

-- One row per (product, CVE) with a vulnerable entry, in last-modified order: a query
-- without a version walks it newest first and stops at its limit.
CREATE TABLE cve_product_index (
    vendor        TEXT NOT NULL,
    product       TEXT NOT NULL,
    last_modified TEXT NOT NULL,
    cve_id        TEXT NOT NULL REFERENCES cves (id) ON DELETE CASCADE,
    parts         TEXT NOT NULL,
    applies       INTEGER NOT NULL,
    PRIMARY KEY (vendor, product, last_modified, cve_id)
) WITHOUT ROWID;
CREATE INDEX cve_product_index_cve ON cve_product_index (cve_id);

CREATE TABLE cpe_products (
    vendor  TEXT NOT NULL,
    product TEXT NOT NULL,
    PRIMARY KEY (vendor, product)
) WITHOUT ROWID;

CREATE TABLE kev (
    cve_id     TEXT PRIMARY KEY,
    date_added TEXT NOT NULL,
    entry      TEXT NOT NULL
);

CREATE TABLE epss (
    cve_id     TEXT PRIMARY KEY,
    epss       REAL NOT NULL,
    percentile REAL NOT NULL,
    score_date TEXT NOT NULL
);

CREATE TABLE cwe (
    id        INTEGER PRIMARY KEY,
    name      TEXT NOT NULL,
    capec_ids TEXT NOT NULL
);

CREATE TABLE capec (
    id                 INTEGER PRIMARY KEY,
    record             TEXT NOT NULL,
    related_weaknesses TEXT NOT NULL
);

-- Progress of `rampart sync` per feed (last-modified window, ETag, ...).
CREATE TABLE feed_state (
    feed       TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
