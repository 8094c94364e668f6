-- Events of companies (a rating that moved, a finding opened or closed, a new asset, a
-- scan that failed or stopped short), the webhooks they are delivered to and the log of
-- each delivery attempt. One event per company, kind, subject and time: a job run again
-- records nothing twice. No data-version triggers: the events operations read here
-- directly, without the read caches.
CREATE TABLE events (
    id           INTEGER PRIMARY KEY,
    company_id   INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    kind         TEXT NOT NULL,
    subject      TEXT NOT NULL,
    occurred_at  TEXT NOT NULL,
    summary      TEXT NOT NULL,
    data         TEXT NOT NULL,
    links        TEXT NOT NULL,
    UNIQUE (company_id, kind, subject, occurred_at)
);
CREATE INDEX events_company_time ON events (company_id, occurred_at DESC, id DESC);

CREATE TABLE webhooks (
    id          INTEGER PRIMARY KEY,
    company_id  INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    url         TEXT NOT NULL,
    secret      TEXT NOT NULL,
    kinds       TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
CREATE INDEX webhooks_company ON webhooks (company_id);

CREATE TABLE webhook_deliveries (
    id          INTEGER PRIMARY KEY,
    webhook_id  INTEGER NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_id    INTEGER NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    attempt     INTEGER NOT NULL,
    at          TEXT NOT NULL,
    status      INTEGER,
    outcome     TEXT NOT NULL,
    error       TEXT,
    millis      INTEGER NOT NULL
);
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, id DESC);
