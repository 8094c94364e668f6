//! What the subcommands share once their flags are read: printing to stdout, opening the
//! store, the shutdown signal, and serving the API (with the web app) and /metrics.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Context as _, Result};
use tokio::net::TcpListener;

/// `println!` for what the commands print: when stdout is closed early
/// (`rampart scan … | head`) the process ends quietly, as the other tools of a pipeline
/// do, instead of panicking. (SIGPIPE stays ignored, as Rust sets it: the scanner's and
/// the server's socket writes must get EPIPE, not end the process.)
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout().lock(), $($arg)*) {
            $crate::common::stdout_failed(e);
        }
    }};
}

/// `text` cut to `max` characters, with `…` when it was longer (a table cell).
pub(crate) fn clip(text: &str, max: usize) -> String {
    let mut out: String = text.chars().take(max).collect();
    if text.chars().nth(max).is_some() {
        out.push('…');
    }
    out
}

/// The end of a command whose stdout failed: quietly for a closed pipe (the exit status
/// a shell gives a process SIGPIPE ended), with the error otherwise.
pub(crate) fn stdout_failed(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(141);
    }
    eprintln!("rampart: writing to stdout: {e}");
    std::process::exit(1);
}

/// The store at `url` (`--db`), migrated on open; the error names it without its password.
pub(crate) async fn open(url: &str) -> Result<Arc<dyn store::Store>> {
    store::open(url).await.with_context(|| format!("opening database {}", store::redact_url(url)))
}

/// Serves /metrics on `addr` until the process ends.
pub(crate) async fn spawn_metrics(
    addr: SocketAddr,
    metrics: Arc<api::metrics::Metrics>,
    store: Arc<dyn store::Store>,
) -> Result<()> {
    let listener = TcpListener::bind(addr).await.with_context(|| format!("metrics: listening on {addr}"))?;
    tracing::info!(address = %listener.local_addr()?, "serving /metrics");
    tokio::spawn(async move {
        if let Err(e) = api::metrics::serve_metrics(listener, metrics, store, shutdown_signal()).await {
            tracing::error!(error = %e, "serving /metrics failed");
        }
    });
    Ok(())
}

/// Serves the API and the web app on `listen` until Ctrl-C or SIGTERM.
pub(crate) async fn serve(
    store: Arc<dyn store::Store>,
    limiter: Arc<dyn api::RateLimiter>,
    listen: SocketAddr,
    config: api::Config,
) -> Result<()> {
    let listener = TcpListener::bind(listen).await.with_context(|| format!("listening on {listen}"))?;
    tracing::info!(address = %listener.local_addr()?, "serving");
    let state = api::AppState::new(store, limiter, config);
    api::serve_app(listener, state.clone(), with_web_app(&state), shutdown_signal()).await?;
    Ok(())
}

/// The API's router with the web app merged in (the app calls the API in-process).
pub(crate) fn with_web_app(state: &api::AppState) -> axum::Router {
    let api = api::router(state.clone());
    api.clone().merge(web::router(api))
}

/// Completes at Ctrl-C or SIGTERM. The listeners are registered when this is called,
/// not when the future is first polled: a signal that arrives before the caller awaits
/// it (the demo prints its keys first) is not lost.
pub(crate) fn shutdown_signal() -> impl std::future::Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    let (interrupt, term) = {
        use tokio::signal::unix::{SignalKind, signal};
        (signal(SignalKind::interrupt()).ok(), signal(SignalKind::terminate()).ok())
    };
    async move {
        #[cfg(unix)]
        {
            let wait = |s: Option<tokio::signal::unix::Signal>| async move {
                match s {
                    Some(mut s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! { _ = wait(interrupt) => {}, _ = wait(term) => {} }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
        tracing::info!("shutting down");
    }
}
