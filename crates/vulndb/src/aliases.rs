//! Product aliases: NVD names the same software differently across the years
//! (`apache:http_server` and `apache:apache_http_server`, `nginx:nginx` before F5's
//! `f5:nginx`, `redislabs:redis` and `redis:redis`), so a detection is matched under
//! every name of its product. The table is data: each name in it is tested to occur in
//! the real NVD records (`aliases::tests`, with ../shared/data).

use model::Cpe;

/// Groups of (vendor, product) names of one product.
pub const ALIASES: &[&[(&str, &str)]] = &[
    &[("apache", "http_server"), ("apache", "apache_http_server")],
    &[("f5", "nginx"), ("nginx", "nginx")],
    &[("redis", "redis"), ("redislabs", "redis")],
    &[("oracle", "mysql"), ("mysql", "mysql")],
    &[("atlassian", "confluence_server"), ("atlassian", "confluence_data_center"), ("atlassian", "confluence")],
    &[("vsftpd_project", "vsftpd"), ("beasts", "vsftpd")],
];

/// The other names of `cpe`'s product, each with `cpe`'s version and other attributes;
/// none when the table does not list it.
pub fn aliases_of(cpe: &Cpe) -> Vec<Cpe> {
    let (vendor, product) = (cpe.vendor(), cpe.product());
    let Some(group) = ALIASES.iter().find(|g| g.contains(&(vendor, product))) else { return Vec::new() };
    group
        .iter()
        .filter(|&&name| name != (vendor, product))
        .filter_map(|&(v, p)| {
            let mut attrs = cpe.attrs().clone();
            attrs[1] = v.to_owned();
            attrs[2] = p.to_owned();
            Cpe::parse(&format!("cpe:2.3:{}", attrs.join(":"))).ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_has_the_other_names_of_its_group_with_its_version() {
        let nginx = Cpe::parse("cpe:2.3:a:f5:nginx:1.18.0:*:*:*:*:*:*:*").unwrap();
        let other: Vec<String> = aliases_of(&nginx).iter().map(ToString::to_string).collect();
        assert_eq!(other, ["cpe:2.3:a:nginx:nginx:1.18.0:*:*:*:*:*:*:*"]);
        let confluence = Cpe::parse("cpe:2.3:a:atlassian:confluence:7.13.6").unwrap();
        assert_eq!(aliases_of(&confluence).len(), 2);
        assert!(aliases_of(&Cpe::parse("cpe:2.3:a:openbsd:openssh:9.9").unwrap()).is_empty());
        // No name is in two groups, and no group names one product twice.
        let mut all: Vec<&(&str, &str)> = ALIASES.iter().flat_map(|g| g.iter()).collect();
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n);
    }

    /// Every name of the table occurs in the real NVD records (the 1.1 yearly feeds or
    /// the 2.0 records of ../shared/data): an alias no record uses would match nothing.
    #[test]
    fn every_alias_is_a_name_nvd_uses() {
        let Some(data) = crate::cwe::support::shared_data("") else { return };
        let mut missing: Vec<String> = ALIASES
            .iter()
            .flat_map(|g| g.iter())
            .map(|(vendor, product)| format!("cpe:2.3:a:{vendor}:{product}:"))
            .collect();
        let mut files: Vec<std::path::PathBuf> = Vec::new();
        for dir in ["nvd-2.0", "nvd-1.1"] {
            let mut in_dir: Vec<_> = std::fs::read_dir(data.join(dir)).unwrap().map(|e| e.unwrap().path()).collect();
            in_dir.sort();
            in_dir.reverse();
            files.extend(in_dir);
        }
        for path in files {
            if missing.is_empty() {
                break;
            }
            let file = std::fs::File::open(&path).unwrap();
            let mut reader = crate::maybe_gzip(std::io::BufReader::new(file)).unwrap();
            let mut text = String::new();
            std::io::Read::read_to_string(&mut reader, &mut text).unwrap();
            missing.retain(|name| !text.contains(name.as_str()));
        }
        assert!(missing.is_empty(), "names no NVD record uses: {missing:?}");
    }
}
