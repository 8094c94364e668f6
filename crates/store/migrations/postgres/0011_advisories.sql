-- The vendors' and distributions' own statements of which versions a CVE affects
-- (sqlite migration 29).
CREATE TABLE advisories (
    cve_id      TEXT COLLATE "C" NOT NULL,
    key         TEXT COLLATE "C" NOT NULL,
    vendor      TEXT COLLATE "C",
    product     TEXT COLLATE "C",
    package     TEXT COLLATE "C",
    statement   TEXT COLLATE "C" NOT NULL,
    imported_at TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (cve_id, key)
);
CREATE INDEX advisories_vp ON advisories (vendor, product);

CREATE FUNCTION rampart_advisory_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO cve_changes (cve_id) SELECT cve_id FROM new_rows ORDER BY cve_id;
    RETURN NULL;
END $$;
CREATE FUNCTION rampart_advisory_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO cve_changes (cve_id) SELECT cve_id FROM old_rows ORDER BY cve_id;
    RETURN NULL;
END $$;
CREATE FUNCTION rampart_advisory_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO cve_changes (cve_id) SELECT n.cve_id FROM new_rows n JOIN old_rows o
        ON o.cve_id = n.cve_id AND o.key = n.key
        WHERE o.statement IS DISTINCT FROM n.statement ORDER BY n.cve_id;
    RETURN NULL;
END $$;
CREATE TRIGGER cc_advisories_i AFTER INSERT ON advisories REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION rampart_advisory_inserted();
CREATE TRIGGER cc_advisories_d AFTER DELETE ON advisories REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION rampart_advisory_deleted();
CREATE TRIGGER cc_advisories_u AFTER UPDATE ON advisories REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION rampart_advisory_updated();
CREATE CONSTRAINT TRIGGER dv_advisories AFTER INSERT OR UPDATE OR DELETE ON advisories DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION rampart_bump_version('cve');
