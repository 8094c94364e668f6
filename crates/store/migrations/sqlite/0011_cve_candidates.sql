-- The candidates of a versioned CPE lookup are CVE ids; ordering them newest first needs
-- each one's last-modified time and whether its configurations must be evaluated. Both
-- come after the large record and configurations columns of `cves`, so reading them
-- from the row walked its overflow pages. This index answers them by itself: for the
-- real linux_kernel:3.2 (1 092 candidates, 500 kept) the query took 3.4-4.1 ms in
-- SQLite without it and 1.8 ms with it (docs/PERFORMANCE.md).
CREATE INDEX cves_candidate ON cves (id, last_modified, needs_eval);
