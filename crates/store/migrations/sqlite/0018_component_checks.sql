-- The checks a scan made for each component of a rating (model::ComponentChecks as
-- JSON: how many passed, found something or could not be made, and a list of them);
-- NULL for imported ratings and those rated before checks were kept.
ALTER TABLE component_scores ADD COLUMN checks TEXT;
