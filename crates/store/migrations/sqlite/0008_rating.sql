-- Ratings computed by Rampart name the methodology version that produced them, and a
-- component with nothing to assess says why (its score then carries no weight).
ALTER TABLE scores ADD COLUMN methodology TEXT;
ALTER TABLE component_scores ADD COLUMN not_assessable TEXT;
