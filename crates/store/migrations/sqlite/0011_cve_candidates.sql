-- The candidates of a versioned CPE lookup are CVE ids; ordering them newest first needs
-- each one's last-modified time and whether its configurations must be evaluated. Both
-- come after the large record and configurations columns of `cves`, so reading them
-- from the row walked its overflow pages: 1.1 of the 1.9 ms the real
-- linux_kernel:3.2 lookup spent in SQLite. This index answers them by itself.
CREATE INDEX cves_candidate ON cves (id, last_modified, needs_eval);
