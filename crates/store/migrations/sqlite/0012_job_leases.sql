-- A lease carries a token: completing, failing, renewing or releasing a job checks it, so
-- a worker whose lease lapsed (and whose job another worker took) cannot overwrite the
-- other's work. A job that is given up is 'dead' (it was 'failed'); an operator can
-- retry it or cancel a waiting one ('cancelled').
ALTER TABLE jobs ADD COLUMN lease_token TEXT;
UPDATE jobs SET status = 'dead' WHERE status = 'failed';
CREATE INDEX jobs_status ON jobs (status, id);
-- Queue times get microseconds (leases of seconds are compared as text): whole-second
-- times written before are given the same form, so they still sort right.
UPDATE jobs SET run_after = substr(run_after, 1, 19) || '.000000Z' WHERE length(run_after) = 20;
UPDATE jobs SET lease_until = substr(lease_until, 1, 19) || '.000000Z' WHERE length(lease_until) = 20;
