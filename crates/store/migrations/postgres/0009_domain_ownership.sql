-- Who a domain belongs to (issue 38 §1; sqlite migration 26 says why).
ALTER TABLE domains ADD COLUMN verified BOOLEAN NOT NULL DEFAULT TRUE;
ALTER TABLE domains ADD COLUMN challenge TEXT COLLATE "C";
ALTER TABLE domains ADD COLUMN verified_by TEXT COLLATE "C";
INSERT INTO domains (company_id, name, attribution)
    SELECT id, domain, 'web domain of the company profile' FROM companies WHERE domain IS NOT NULL
    ON CONFLICT DO NOTHING;
CREATE INDEX domains_verified_name ON domains (name) WHERE verified;
CREATE TABLE key_creations (
    key_id     BIGINT NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX key_creations_key ON key_creations (key_id, created_at);
