-- Disputes of findings and the company's own footprint (issue 25).
-- A finding's standing: `disputed` while a dispute of it is open; `no_weight` once an
-- operator accepted a compensating control (shown, weighs nothing); `false_positive`
-- once an operator accepted that its check was wrong (closed, and kept closed by later
-- scans that see it again).
ALTER TABLE findings ADD COLUMN disputed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE findings ADD COLUMN no_weight INTEGER NOT NULL DEFAULT 0;
ALTER TABLE findings ADD COLUMN false_positive INTEGER NOT NULL DEFAULT 0;

CREATE TABLE disputes (
    id          INTEGER PRIMARY KEY,
    company_id  INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    finding_id  INTEGER REFERENCES findings (id) ON DELETE SET NULL,
    asset       TEXT NOT NULL,
    risk_vector TEXT,
    code        TEXT,
    title       TEXT,
    reason      TEXT NOT NULL,
    explanation TEXT NOT NULL,
    state       TEXT NOT NULL DEFAULT 'open',
    opened_at   TEXT NOT NULL,
    opened_by   TEXT NOT NULL,
    decided_at  TEXT,
    decided_by  TEXT,
    note        TEXT
);
CREATE INDEX disputes_company ON disputes (company_id, state, id);
CREATE INDEX disputes_state ON disputes (state, id);
-- One open dispute per finding, and per asset a removal names.
CREATE UNIQUE INDEX disputes_open_finding ON disputes (finding_id) WHERE state = 'open' AND finding_id IS NOT NULL;
CREATE UNIQUE INDEX disputes_open_asset ON disputes (company_id, asset) WHERE state = 'open' AND finding_id IS NULL;

-- What the company changed in its footprint: assets it added (scanned as its own) and
-- assets removed by an accepted dispute (kept out of its scans). `asset` is a host or
-- domain name, an address or a CIDR range (model::FootprintAsset).
CREATE TABLE footprint (
    id          INTEGER PRIMARY KEY,
    company_id  INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    asset       TEXT NOT NULL,
    change      TEXT NOT NULL CHECK (change IN ('added', 'removed')),
    reason      TEXT NOT NULL,
    changed_by  TEXT NOT NULL,
    changed_at  TEXT NOT NULL,
    dispute_id  INTEGER REFERENCES disputes (id) ON DELETE SET NULL
);
CREATE INDEX footprint_company ON footprint (company_id, id);

CREATE TRIGGER dv_disputes_i AFTER INSERT ON disputes BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_disputes_d AFTER DELETE ON disputes BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_disputes_u AFTER UPDATE ON disputes BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_footprint_i AFTER INSERT ON footprint BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_footprint_d AFTER DELETE ON footprint BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_footprint_u AFTER UPDATE ON footprint BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
