-- Underwriting guidelines (sqlite migration 31).
CREATE TABLE guidelines (
    org_id     BIGINT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    version    BIGINT NOT NULL,
    document   TEXT COLLATE "C" NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL,
    created_by TEXT COLLATE "C" NOT NULL DEFAULT '',
    PRIMARY KEY (org_id, version)
);
