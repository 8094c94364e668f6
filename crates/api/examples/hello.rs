//! The benchmark's baseline: a bare axum hello-world on the same runtime settings as
//! `rampart serve`. Usage: `hello ADDR`.

use axum::Router;
use axum::routing::get;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:18091".to_owned());
    let app = Router::new().route("/", get(|| async { "Hello, World!" }));
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    axum::serve(listener, app).await
}
