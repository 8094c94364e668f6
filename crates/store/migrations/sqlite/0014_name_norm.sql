-- Incident linking matches names as model::normalise_name writes them ("AT&T" →
-- "at and t", "Procter & Gamble Co." → "procter and gamble"); the store keeps that form
-- beside the name. Rows written before this migration are filled when the store opens.
ALTER TABLE companies ADD COLUMN name_norm TEXT;
CREATE INDEX companies_name_norm ON companies (name_norm);

-- VERIS writes incident ids in lower case, the importer in upper case: lookups ignore
-- ASCII case.
CREATE INDEX incidents_id_nocase ON incidents (incident_id COLLATE NOCASE);
