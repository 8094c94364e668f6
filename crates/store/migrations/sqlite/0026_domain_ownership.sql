-- Who a domain belongs to (issue 38 §1). A domain row is `verified` when it rests on
-- evidence: an operator's import, discovery, or the company's proof of control (a TXT
-- record at _rampart-challenge.<domain> or a file at /.well-known/rampart-challenge
-- holding `challenge`). A key's word alone makes a claim (`verified` 0): scanned, never
-- the company's in general-getsocialid-by-domain, never shown to underwriters as its.
ALTER TABLE domains ADD COLUMN verified INTEGER NOT NULL DEFAULT 1;
ALTER TABLE domains ADD COLUMN challenge TEXT;
ALTER TABLE domains ADD COLUMN verified_by TEXT;
-- Every company's profile domain has its row (the owner look-up reads rows only).
INSERT OR IGNORE INTO domains (company_id, name, attribution)
    SELECT id, domain, 'web domain of the company profile' FROM companies WHERE domain IS NOT NULL;
CREATE INDEX domains_verified_name ON domains (name) WHERE verified = 1;
-- The companies each key created, counted against its daily cap under one lock of the
-- key's row (issue 38 §3: concurrent requests cannot pass the cap together).
CREATE TABLE key_creations (
    key_id     INTEGER NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX key_creations_key ON key_creations (key_id, created_at);
-- Assets a key asked to add that another company holds on evidence: pending until an
-- operator approves (the asset joins the footprint, verified) or rejects them.
CREATE TABLE asset_requests (
    id           INTEGER PRIMARY KEY,
    company_id   INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    asset        TEXT NOT NULL,
    reason       TEXT NOT NULL,
    requested_by TEXT NOT NULL,
    requested_at TEXT NOT NULL,
    state        TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'approved', 'rejected')),
    decided_at   TEXT,
    note         TEXT
);
CREATE UNIQUE INDEX asset_requests_pending ON asset_requests (company_id, asset) WHERE state = 'pending';
