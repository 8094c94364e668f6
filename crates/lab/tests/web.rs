//! The lab's web hosts checked with reqwest: pages, headers on every response, repeated
//! headers, redirects, 404s, and Elasticsearch's root document.

use lab::{Lab, LabFile};

const FILE: &str = r#"{
  "hosts": [
    {"name": "www.shop.test", "address": "127.77.20.2", "services": [
      {"port": 80, "kind": "http", "http": {"redirect": "https://www.shop.test", "pages": [
        {"path": "/.well-known/security.txt", "body": "Contact: mailto:security@shop.test\n"}]}},
      {"port": 8080, "kind": "http", "http": {
        "headers": {"Server": "Apache/2.4.49 (Unix)", "X-Powered-By": "PHP/7.4.3",
                    "Set-Cookie": "session=abc; Path=/\ntheme=dark; Path=/"},
        "pages": [
          {"path": "/", "body": "<html><head><meta name=\"generator\" content=\"WordPress 5.8.1\"></head><body><script src=\"/wp-includes/js/jquery/jquery.min.js?ver=1.12.4\"></script></body></html>"},
          {"path": "/admin/", "status": 401, "headers": {"WWW-Authenticate": "Basic realm=\"admin\""}, "body": "login"}]}}]},
    {"name": "search.shop.test", "address": "127.77.20.3", "services": [
      {"port": 9200, "kind": "elasticsearch", "version": "6.8.0"}]}
  ],
  "port_map": {"8080": 18080, "9200": 19200}
}"#;

fn client() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

#[tokio::test]
async fn pages_headers_redirects_and_not_found() {
    let lab = Lab::up(&LabFile::parse(FILE).unwrap()).await.unwrap();
    let web = lab.endpoint("www.shop.test", 8080).unwrap();
    let c = client();

    let home = c.get(format!("http://{web}/")).send().await.unwrap();
    assert_eq!(home.status(), 200);
    assert_eq!(home.headers()["server"], "Apache/2.4.49 (Unix)");
    assert_eq!(home.headers()["x-powered-by"], "PHP/7.4.3");
    let cookies: Vec<_> = home.headers().get_all("set-cookie").iter().map(|v| v.to_str().unwrap().to_owned()).collect();
    assert_eq!(cookies, ["session=abc; Path=/", "theme=dark; Path=/"]);
    assert!(home.text().await.unwrap().contains("content=\"WordPress 5.8.1\""));

    let admin = c.get(format!("http://{web}/admin/")).send().await.unwrap();
    assert_eq!(admin.status(), 401);
    assert_eq!(admin.headers()["www-authenticate"], "Basic realm=\"admin\"");
    assert_eq!(admin.headers()["server"], "Apache/2.4.49 (Unix)", "host headers on every page");

    assert_eq!(c.get(format!("http://{web}/nothing")).send().await.unwrap().status(), 404);

    let plain = lab.endpoint("www.shop.test", 80).unwrap();
    let r = c.get(format!("http://{plain}/some/page?x=1")).send().await.unwrap();
    assert_eq!(r.status(), 301);
    assert_eq!(r.headers()["location"], "https://www.shop.test/some/page");
    let txt = c.get(format!("http://{plain}/.well-known/security.txt")).send().await.unwrap();
    assert_eq!(txt.status(), 200, "a listed page is served, not redirected");

    let es = lab.endpoint("search.shop.test", 9200).unwrap();
    let doc: serde_json::Value = c.get(format!("http://{es}/")).send().await.unwrap().json().await.unwrap();
    assert_eq!(doc["version"]["number"], "6.8.0");
    assert_eq!(doc["tagline"], "You Know, for Search");
    lab.down().await;
}

#[test]
fn a_bad_header_or_status_is_refused_when_the_file_is_read() {
    let bad = FILE.replace("\"status\": 401", "\"status\": 1000");
    assert!(LabFile::parse(&bad).is_err());
    let bad = FILE.replace("\"X-Powered-By\"", "\"X Powered By\"");
    assert!(LabFile::parse(&bad).is_err());
    let bad = FILE.replace("\"kind\": \"elasticsearch\"", "\"kind\": \"redis\", \"http\": {}");
    assert!(LabFile::parse(&bad).is_err());
}
