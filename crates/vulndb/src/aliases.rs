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

/// Debian and Ubuntu source packages and the upstream product (CPE vendor and product)
/// each ships, for the distributions' statements about their packages. A name ending in
/// `*` stands for the versioned packages of one product (`php8.1`, `postgresql-14`,
/// `mysql-8.0`).
pub const PACKAGES: &[(&str, (&str, &str))] = &[
    ("apache2", ("apache", "http_server")),
    ("nginx", ("f5", "nginx")),
    ("openssh", ("openbsd", "openssh")),
    ("openssl", ("openssl", "openssl")),
    ("php*", ("php", "php")),
    ("exim4", ("exim", "exim")),
    ("redis", ("redis", "redis")),
    ("postfix", ("postfix", "postfix")),
    ("mysql-*", ("oracle", "mysql")),
    ("postgresql-*", ("postgresql", "postgresql")),
    ("vsftpd", ("vsftpd_project", "vsftpd")),
    ("proftpd-dfsg", ("proftpd", "proftpd")),
    ("memcached", ("memcached", "memcached")),
    ("jquery", ("jquery", "jquery")),
    ("wordpress", ("wordpress", "wordpress")),
];

/// The upstream product a Debian or Ubuntu source package ships, if [`PACKAGES`] knows it.
pub fn package_product(package: &str) -> Option<(&'static str, &'static str)> {
    PACKAGES.iter().find_map(|&(name, product)| {
        let hit = match name.strip_suffix('*') {
            Some(stem) => package.strip_prefix(stem).is_some_and(|rest| {
                !rest.is_empty()
                    && rest.starts_with(|c: char| c.is_ascii_digit())
                    && rest.chars().all(|c| c.is_ascii_digit() || c == '.')
            }),
            None => package == name,
        };
        hit.then_some(product)
    })
}

/// The source package of the upstream product `vendor`:`product` (the first [`PACKAGES`]
/// row naming it, or one of its aliases), with the product's version for a versioned
/// package (`php` 8.1.2 → `php8.1`): what a distribution's statement about the detected
/// product is filed under.
pub fn package_of(vendor: &str, product: &str, version: &str) -> Option<String> {
    let names: Vec<(&str, &str)> = match ALIASES.iter().find(|g| g.contains(&(vendor, product))) {
        Some(group) => group.to_vec(),
        None => vec![(vendor, product)],
    };
    let &(name, _) = PACKAGES.iter().find(|(_, p)| names.contains(p))?;
    let Some(stem) = name.strip_suffix('*') else { return Some(name.to_owned()) };
    let mut parts = version.split('.');
    let (major, minor) = (parts.next()?, parts.next());
    let minor = minor.filter(|m| m.chars().all(|c| c.is_ascii_digit()) && !m.is_empty());
    match stem {
        // PHP and MySQL package by major.minor; PostgreSQL since 10 by major alone.
        "postgresql-" if major.parse::<u32>().ok()? >= 10 => Some(format!("{stem}{major}")),
        _ => Some(format!("{stem}{major}.{}", minor?)),
    }
}

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

    #[test]
    fn a_distribution_package_ships_its_upstream_product() {
        assert_eq!(package_product("apache2"), Some(("apache", "http_server")));
        assert_eq!(package_product("php8.1"), Some(("php", "php")));
        assert_eq!(package_product("postgresql-14"), Some(("postgresql", "postgresql")));
        assert_eq!(package_product("mysql-8.0"), Some(("oracle", "mysql")));
        for other in ["php", "phpmyadmin", "php-foo", "postgresql-common", "mysql-", "apache2-doc", ""] {
            assert_eq!(package_product(other), None, "{other}");
        }
        assert_eq!(package_of("apache", "apache_http_server", "2.4.41").as_deref(), Some("apache2"), "an alias");
        assert_eq!(package_of("nginx", "nginx", "1.18.0").as_deref(), Some("nginx"));
        assert_eq!(package_of("php", "php", "8.1.2").as_deref(), Some("php8.1"));
        assert_eq!(package_of("postgresql", "postgresql", "14.9").as_deref(), Some("postgresql-14"));
        assert_eq!(package_of("postgresql", "postgresql", "9.6.24").as_deref(), Some("postgresql-9.6"));
        assert_eq!(package_of("oracle", "mysql", "8.0.36").as_deref(), Some("mysql-8.0"));
        assert_eq!(package_of("php", "php", "8").as_deref(), None, "no minor version");
        assert_eq!(package_of("microsoft", "iis", "10.0"), None);
        // Each versioned package maps back to its product.
        for (v, p, version) in
            [("php", "php", "7.4.3"), ("postgresql", "postgresql", "12.1"), ("oracle", "mysql", "8.0.1")]
        {
            let package = package_of(v, p, version).unwrap();
            assert_eq!(package_product(&package), Some((v, p)), "{package}");
        }
    }

    /// Every name of the table occurs in the real NVD records (the 1.1 yearly feeds or
    /// the 2.0 records of ../shared/data): an alias no record uses would match nothing.
    #[test]
    fn every_alias_is_a_name_nvd_uses() {
        let Some(data) = crate::cwe::support::shared_data("") else { return };
        let mut missing: Vec<String> = ALIASES
            .iter()
            .flat_map(|g| g.iter())
            .chain(PACKAGES.iter().map(|(_, product)| product))
            .map(|(vendor, product)| format!("cpe:2.3:a:{vendor}:{product}:"))
            .collect();
        missing.sort();
        missing.dedup();
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
