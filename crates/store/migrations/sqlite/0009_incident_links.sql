-- How an imported incident was linked to its company: `name:<normalised name>`,
-- `domain:<registrable domain>`, or null when it is linked to none.
ALTER TABLE incidents ADD COLUMN linked_by TEXT;
