//! What a company's site says it is called: the organisation its certificate names,
//! else its front page's title. A company onboarded by its domain alone is named so
//! (DESIGN.md §9). Every byte of it is the site's: cleaned, bounded, and only a name.

/// How long finding a domain's website may take, per host tried.
pub const WEBSITE_TIME: std::time::Duration = std::time::Duration::from_secs(10);

/// Where the website of a company known by its domain alone is: `www.<domain>`, else the
/// domain itself, whichever a visit finds a front page on first (`https://` when it
/// answers there, else `http://`); `None` when neither answers. Each visit goes through
/// the guard and within [`WEBSITE_TIME`].
pub async fn website(ctx: &crate::probes::Context, domain: &str) -> Option<String> {
    for host in [format!("www.{domain}"), domain.to_owned()] {
        let Ok(visit) = tokio::time::timeout(WEBSITE_TIME, crate::probes::web::visit(ctx, &host)).await else {
            continue;
        };
        if visit.front.is_some() {
            return Some(format!("{}://{host}", if visit.https() { "https" } else { "http" }));
        }
    }
    None
}

/// The most characters of a name taken from a site.
pub const MAX_NAME: usize = 120;

/// The `<title>` of a page (whitespace collapsed, at most 80 characters).
pub fn page_title(body: &str) -> Option<String> {
    let lower = body.to_ascii_lowercase();
    let start = lower.find("<title>")? + 7;
    let end = start + lower[start..].find("</title>")?;
    let title: String = body.get(start..end)?.split_whitespace().collect::<Vec<_>>().join(" ");
    (!title.is_empty()).then(|| title.chars().take(80).collect())
}

/// `text` as a name: control characters dropped, whitespace collapsed, at most
/// [`MAX_NAME`] characters; `None` when nothing is left.
pub fn clean(text: &str) -> Option<String> {
    let kept: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let name: String = kept.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(MAX_NAME).collect();
    (!name.is_empty()).then_some(name)
}

/// Titles that name a server, a placeholder or a page, not a company.
const NOT_A_NAME: &[&str] = &[
    "welcome to nginx",
    "default page",
    "index of",
    "it works",
    "iis windows",
    "test page",
    "coming soon",
    "domain for sale",
    "parked",
    "under construction",
    "404",
    "not found",
    "forbidden",
    "error",
    "log in",
    "login",
    "sign in",
];

/// Segments of a title that name the page rather than the site.
const PAGE_WORDS: &[&str] = &["home", "homepage", "home page", "welcome", "start", "index", "main"];

/// The company name a front page's title gives: its first segment (titles read
/// "Name | tagline", "Name - tagline", "Name: tagline") that is not "Home" or the like;
/// `None` for a server's default page, a placeholder, an error or a login page.
pub fn name_from_title(title: &str) -> Option<String> {
    let title = clean(title)?;
    let lower = title.to_lowercase();
    if NOT_A_NAME.iter().any(|w| lower.contains(w)) {
        return None;
    }
    title
        .split(" | ")
        .flat_map(|s| s.split(" - "))
        .flat_map(|s| s.split(" – "))
        .flat_map(|s| s.split(" — "))
        .flat_map(|s| s.split(" · "))
        .flat_map(|s| s.split(": "))
        .map(str::trim)
        .find(|s| s.chars().any(char::is_alphanumeric) && !PAGE_WORDS.contains(&s.to_lowercase().as_str()))
        .and_then(clean)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_names_its_site() {
        for (title, name) in [
            ("Harbourline Freight | Ocean and rail freight", Some("Harbourline Freight")),
            ("Home - Marlow Dental Care", Some("Marlow Dental Care")),
            ("Welcome | Stonebridge Printing", Some("Stonebridge Printing")),
            ("Acme: tools for everyone", Some("Acme")),
            ("  Juniper\n  Mutual ", Some("Juniper Mutual")),
            ("Welcome to nginx!", None),
            ("Index of /backup", None),
            ("Apache2 Ubuntu Default Page: It works", None),
            ("Log In - Quarry Wiki", None),
            ("404 Not Found", None),
            ("| - |", None),
            ("", None),
        ] {
            assert_eq!(name_from_title(title).as_deref(), name, "{title:?}");
        }
    }

    #[test]
    fn a_name_is_bounded_and_has_no_control_characters() {
        let long = "A".repeat(500);
        assert_eq!(clean(&long).unwrap().chars().count(), MAX_NAME);
        assert_eq!(clean("Evil\u{0}\u{1b}[31m Corp\r\n").as_deref(), Some("Evil [31m Corp"));
        assert_eq!(clean("\u{7}\u{8}"), None);
    }

    #[test]
    fn a_page_title_is_read_whatever_its_case() {
        assert_eq!(page_title("<HTML><TITLE> Big   Co </TITLE>").as_deref(), Some("Big Co"));
        assert_eq!(page_title("<title>unterminated"), None);
        assert_eq!(page_title("<title>ÄÖÜ Straße</title>").as_deref(), Some("ÄÖÜ Straße"));
    }

    proptest::proptest! {
        #[test]
        fn any_title_gives_a_clean_bounded_name_or_none(title in "(?s).{0,300}") {
            if let Some(name) = name_from_title(&title) {
                proptest::prop_assert!(name.chars().count() <= MAX_NAME);
                proptest::prop_assert!(!name.chars().any(char::is_control));
                proptest::prop_assert!(!name.is_empty());
            }
        }
    }
}
