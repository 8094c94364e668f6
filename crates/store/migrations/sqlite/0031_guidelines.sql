-- Underwriting guidelines (issue 42; docs/API.md "Underwriting guidelines"): each
-- organisation's documents of rules, versioned from 1; the latest is in force. The
-- document is the JSON the organisation set, parsed before it is kept.
CREATE TABLE guidelines (
    org_id     INTEGER NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    version    INTEGER NOT NULL,
    document   TEXT NOT NULL,
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (org_id, version)
);
