-- Rampart schema, SQLite. Timestamps are RFC 3339 UTC text; scores and weights are
-- whole hundredths (exact decimals); JSON members are JSON text.

CREATE TABLE companies (
    id               INTEGER PRIMARY KEY,
    social_id        TEXT NOT NULL UNIQUE,
    company_name     TEXT NOT NULL,
    name_lc          TEXT NOT NULL,
    website          TEXT NOT NULL DEFAULT '',
    domain           TEXT,
    industry         TEXT NOT NULL DEFAULT '',
    description      TEXT NOT NULL DEFAULT '',
    company_id       TEXT NOT NULL UNIQUE,
    funding_id       TEXT NOT NULL DEFAULT '',
    employees_number TEXT NOT NULL DEFAULT '',
    followers_number INTEGER NOT NULL DEFAULT 0,
    naics_code       INTEGER,
    searched_by      INTEGER NOT NULL DEFAULT 0,
    last_scanned_at  TEXT,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
);
CREATE INDEX companies_name_lc ON companies (name_lc);
CREATE INDEX companies_last_scanned ON companies (last_scanned_at);

-- Domains and subdomains attributed to a company, with the reason.
CREATE TABLE domains (
    id          INTEGER PRIMARY KEY,
    company_id  INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    attribution TEXT NOT NULL DEFAULT '',
    UNIQUE (company_id, name)
);
CREATE INDEX domains_name ON domains (name);

CREATE TABLE subsidiaries (
    parent_id  INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    child_id   INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    added_at   TEXT NOT NULL,
    PRIMARY KEY (parent_id, child_id)
);
CREATE INDEX subsidiaries_child ON subsidiaries (child_id);

CREATE TABLE applications (
    id          INTEGER PRIMARY KEY,
    company_id  INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    version     TEXT,
    categories  TEXT NOT NULL DEFAULT '[]',
    host        TEXT NOT NULL,
    cpe         TEXT,
    evidence    TEXT NOT NULL DEFAULT '',
    first_seen  TEXT NOT NULL,
    last_seen   TEXT NOT NULL
);
CREATE INDEX applications_company ON applications (company_id, name);

CREATE TABLE network_endpoints (
    id          INTEGER PRIMARY KEY,
    company_id  INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    ip          TEXT NOT NULL,
    port        INTEGER NOT NULL,
    protocol    TEXT NOT NULL DEFAULT 'tcp',
    host        TEXT,
    service     TEXT,
    product     TEXT,
    version     TEXT,
    banner      TEXT NOT NULL DEFAULT '',
    first_seen  TEXT NOT NULL,
    last_seen   TEXT NOT NULL
);
CREATE INDEX network_endpoints_company ON network_endpoints (company_id, ip, port);

CREATE TABLE sbom_components (
    id             INTEGER PRIMARY KEY,
    company_id     INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    name           TEXT NOT NULL,
    version        TEXT,
    purl           TEXT,
    cpe            TEXT,
    evidence       TEXT NOT NULL DEFAULT '',
    end_of_life    INTEGER,
    latest_version TEXT,
    first_seen     TEXT NOT NULL,
    last_seen      TEXT NOT NULL
);
CREATE INDEX sbom_components_company ON sbom_components (company_id, name);

CREATE TABLE sbom_hosts (
    component_id INTEGER NOT NULL REFERENCES sbom_components (id) ON DELETE CASCADE,
    host         TEXT NOT NULL,
    PRIMARY KEY (component_id, host)
);
CREATE INDEX sbom_hosts_host ON sbom_hosts (host);

CREATE TABLE sbom_cves (
    component_id INTEGER NOT NULL REFERENCES sbom_components (id) ON DELETE CASCADE,
    cve_id       TEXT NOT NULL,
    PRIMARY KEY (component_id, cve_id)
);

CREATE TABLE findings (
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
    UNIQUE (company_id, risk_vector, asset, code)
);
CREATE INDEX findings_asset ON findings (company_id, asset, risk_vector);
CREATE INDEX findings_vector ON findings (company_id, risk_vector, severity_rank);

-- One row per rating of a company; the newest is the current score.
CREATE TABLE scores (
    id          INTEGER PRIMARY KEY,
    company_id  INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    scanned_at  TEXT NOT NULL,
    score       INTEGER NOT NULL CHECK (score BETWEEN 0 AND 10000),
    grade       TEXT NOT NULL,
    UNIQUE (company_id, scanned_at)
);

CREATE TABLE component_scores (
    score_id       INTEGER NOT NULL REFERENCES scores (id) ON DELETE CASCADE,
    risk_vector    TEXT NOT NULL,
    score          INTEGER NOT NULL CHECK (score BETWEEN 0 AND 10000),
    grade          TEXT NOT NULL,
    weight         INTEGER NOT NULL CHECK (weight BETWEEN 0 AND 10000),
    assets_checked INTEGER NOT NULL DEFAULT 0,
    findings_count INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (score_id, risk_vector)
);

CREATE TABLE cves (
    id            TEXT PRIMARY KEY,
    published     TEXT NOT NULL,
    last_modified TEXT NOT NULL,
    record        TEXT NOT NULL
);
CREATE INDEX cves_last_modified ON cves (last_modified DESC, id DESC);

-- The CPE names a CVE marks vulnerable, split for lookups by vendor and product.
CREATE TABLE cve_products (
    cve_id  TEXT NOT NULL REFERENCES cves (id) ON DELETE CASCADE,
    vendor  TEXT NOT NULL,
    product TEXT NOT NULL,
    version TEXT NOT NULL,
    cpe     TEXT NOT NULL,
    PRIMARY KEY (cve_id, cpe)
);
CREATE INDEX cve_products_vp ON cve_products (vendor, product, version);

CREATE TABLE incidents (
    incident_id TEXT PRIMARY KEY,
    company_id  INTEGER REFERENCES companies (id) ON DELETE SET NULL,
    domain      TEXT,
    date_detected TEXT,
    record      TEXT NOT NULL
);
CREATE INDEX incidents_company ON incidents (company_id);
CREATE INDEX incidents_domain ON incidents (domain);

CREATE TABLE predictions (
    company_id  INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    kind        TEXT NOT NULL,
    period      INTEGER NOT NULL,
    computed_at TEXT NOT NULL,
    data        TEXT NOT NULL,
    PRIMARY KEY (company_id, kind, period)
);

CREATE TABLE api_keys (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL,
    prefix      TEXT NOT NULL,
    hash        TEXT NOT NULL UNIQUE,
    scopes      TEXT NOT NULL,
    company     TEXT,
    per_minute  INTEGER NOT NULL,
    monthly     INTEGER NOT NULL,
    active      INTEGER NOT NULL DEFAULT 1,
    created_at  TEXT NOT NULL
);

CREATE TABLE usage_counters (
    key_id   INTEGER NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    month    TEXT NOT NULL,
    requests INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (key_id, month)
);

-- The durable job queue. A job with a dedup_key is queued at most once while it is
-- waiting or running; workers lease jobs and a lease that expires is taken over.
CREATE TABLE jobs (
    id          INTEGER PRIMARY KEY,
    kind        TEXT NOT NULL,
    payload     TEXT NOT NULL,
    dedup_key   TEXT,
    status      TEXT NOT NULL DEFAULT 'queued',
    attempts    INTEGER NOT NULL DEFAULT 0,
    run_after   TEXT NOT NULL,
    lease_until TEXT,
    worker      TEXT,
    last_error  TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE UNIQUE INDEX jobs_dedup ON jobs (dedup_key) WHERE dedup_key IS NOT NULL AND status IN ('queued', 'running');
CREATE INDEX jobs_ready ON jobs (status, run_after);
