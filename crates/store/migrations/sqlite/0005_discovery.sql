-- Discovery: the host names attributed to a company (why: source and evidence), and the
-- attribution of the network endpoints a scan observed. Endpoints imported with a
-- company's data have none.
CREATE TABLE hosts (
    id          INTEGER PRIMARY KEY,
    company_id  INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    addresses   TEXT NOT NULL DEFAULT '',
    source      TEXT NOT NULL,
    evidence    TEXT NOT NULL,
    first_seen  TEXT NOT NULL,
    last_seen   TEXT NOT NULL,
    UNIQUE (company_id, name)
);

ALTER TABLE network_endpoints ADD COLUMN source TEXT;
ALTER TABLE network_endpoints ADD COLUMN evidence TEXT;
