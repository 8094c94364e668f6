-- The statements both backends share look an incident up by lower(incident_id), as
-- PostgreSQL does: the index follows the expression.
CREATE INDEX incidents_id_lower ON incidents (lower(incident_id));
DROP INDEX incidents_id_nocase;
