-- What keys asked of add-subsidiary: a company created by the request ('created': linked
-- at once, and counted against the key's daily cap), or an existing company outside the
-- key's tree ('pending' until an operator approves or rejects it: a key must not reach
-- another company by naming it).
CREATE TABLE subsidiary_requests (
    id          INTEGER PRIMARY KEY,
    parent_id   INTEGER NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
    child_id    INTEGER NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
    key_id      INTEGER,
    state       TEXT NOT NULL CHECK (state IN ('created', 'pending', 'approved', 'rejected')),
    created_at  TEXT NOT NULL,
    decided_at  TEXT,
    note        TEXT
);
CREATE UNIQUE INDEX subsidiary_requests_pending ON subsidiary_requests (parent_id, child_id) WHERE state = 'pending';
CREATE INDEX subsidiary_requests_key ON subsidiary_requests (key_id, state, created_at);
