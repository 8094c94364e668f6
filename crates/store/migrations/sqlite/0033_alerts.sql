-- Alerts (docs/API.md "Alerts"): each portfolio's alert rules (the JSON document its
-- owners set, parsed before it is kept), and the alerts they raised, each about one
-- company, acknowledged once by someone of the organisation.
CREATE TABLE alert_rules (
    portfolio_id INTEGER PRIMARY KEY REFERENCES portfolios (id) ON DELETE CASCADE,
    document     TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    updated_by   TEXT NOT NULL DEFAULT ''
);
CREATE TABLE alerts (
    id              INTEGER PRIMARY KEY,
    org_id          INTEGER NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    portfolio_id    INTEGER NOT NULL REFERENCES portfolios (id) ON DELETE CASCADE,
    company_id      INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    rule_id         TEXT NOT NULL,
    kind            TEXT NOT NULL,
    subject         TEXT NOT NULL DEFAULT '',
    summary         TEXT NOT NULL,
    explanation     TEXT NOT NULL DEFAULT '',
    created_at      TEXT NOT NULL,
    acknowledged_at TEXT,
    acknowledged_by TEXT,
    UNIQUE (portfolio_id, company_id, rule_id, subject, created_at)
);
CREATE INDEX alerts_org ON alerts (org_id, acknowledged_at, id);
CREATE INDEX alerts_portfolio ON alerts (portfolio_id, id);
