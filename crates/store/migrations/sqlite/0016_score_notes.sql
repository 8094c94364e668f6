-- What limited the scan a rating comes from (a cap or the deadline reached, names refused,
-- domains that do not exist): a JSON array of texts, NULL when nothing did.
ALTER TABLE scores ADD COLUMN notes TEXT;
