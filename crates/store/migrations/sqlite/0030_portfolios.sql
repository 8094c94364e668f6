-- Organisations, their portfolios and vendor records (issue 41; docs/API.md
-- "Portfolios"). A key belongs to at most one organisation; a portfolio to exactly one;
-- a company may be in any number of portfolios, each with the organisation's record of
-- it. Tags are a JSON array of strings.
CREATE TABLE orgs (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
);
ALTER TABLE api_keys ADD COLUMN org_id INTEGER REFERENCES orgs (id);

CREATE TABLE portfolios (
    id         INTEGER PRIMARY KEY,
    org_id     INTEGER NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (org_id, name)
);

CREATE TABLE portfolio_companies (
    portfolio_id INTEGER NOT NULL REFERENCES portfolios (id) ON DELETE CASCADE,
    company_id   INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    tier         INTEGER CHECK (tier BETWEEN 1 AND 4),
    tags         TEXT NOT NULL DEFAULT '[]',
    custom_id    TEXT,
    relationship TEXT NOT NULL DEFAULT 'vendor',
    stage        TEXT NOT NULL DEFAULT 'active',
    owner        TEXT NOT NULL DEFAULT '',
    note         TEXT NOT NULL DEFAULT '',
    added_at     TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    PRIMARY KEY (portfolio_id, company_id)
);
CREATE INDEX portfolio_companies_company ON portfolio_companies (company_id);

-- How deep the scan behind a rating looked: `quick` (DNS and mail, the web root, TLS on
-- 443, the common ports) or `full`.
ALTER TABLE scores ADD COLUMN depth TEXT NOT NULL DEFAULT 'full';
-- A company onboarded by its domain has a name derived from what its site says (or the
-- domain) until someone gives it one.
ALTER TABLE companies ADD COLUMN name_derived INTEGER NOT NULL DEFAULT 0;

-- A portfolio's list is kept by the API processes with the company reads: its changes
-- move the company data version.
CREATE TRIGGER dv_portfolios_i AFTER INSERT ON portfolios BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_portfolios_d AFTER DELETE ON portfolios BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_portfolios_u AFTER UPDATE ON portfolios BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_portfolio_companies_i AFTER INSERT ON portfolio_companies BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_portfolio_companies_d AFTER DELETE ON portfolio_companies BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
CREATE TRIGGER dv_portfolio_companies_u AFTER UPDATE ON portfolio_companies BEGIN UPDATE data_versions SET version = version + 1 WHERE scope = 'company'; END;
