-- Each CVE attributed to a component keeps its basis (model::CveBasis): vendor,
-- nvd-range, platform-conditional or unbounded. Only the first two are scored; rows
-- written before the basis existed were scored, so they read as nvd-range.
ALTER TABLE sbom_cves ADD COLUMN basis TEXT NOT NULL DEFAULT 'nvd-range';
