//! `botlane-devserver`: runs the reference service until Ctrl-C (or SIGTERM).
//!
//! ```text
//! botlane-devserver [--listen ADDR] [--config FILE] [--playground]
//!                   [--realtime-tls [--realtime-root-cert FILE]]
//!                   [--rest-listen ADDR] [--rest-credentials] [--rest-tls [--rest-root-cert FILE]]
//!                   [--prelogin-connections N] [--login-timeout SECS] [--sessions N]
//!                   [--admin [--admin-listen ADDR]]
//! ```
//!
//! With `--admin` it also serves the HTTP admin endpoint on a loopback
//! listener and prints its URL and the admin token every request must
//! carry (`Authorization: Bearer <token>`).
//!
//! Every cap and timeout can also be set in the config file's `limits`
//! object (see `Limits`); the flags override it.
//!
//! The REST lane's server flag comes from the config file, then the
//! environment variable `BOT_REST_CREDENTIALS` (`1`/`true`/`yes`/`on` on,
//! `0`/`false`/`no`/`off`/empty off), then `--rest-credentials` (on).
//!
//! Logs go to stderr (`RUST_LOG` filters them; default `info`); they name
//! opcodes and sizes, never tokens, secrets or payloads.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use botlane_devserver::{DevServer, DevServerConfig, DevServerError};
use clap::Parser;
use tracing_subscriber::EnvFilter;

/// A reference chat service for developing and testing botlane bots.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Address of the realtime listener (overrides the config file's `listen`).
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
    /// JSON file with the predefined bots, users, servers and channels.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Address of the REST (HTTP) listener (overrides the config file's `rest_listen`).
    #[arg(long, value_name = "ADDR")]
    rest_listen: Option<SocketAddr>,
    /// Turn the REST lane's server flag BOT_REST_CREDENTIALS on (opcode 638 mints).
    #[arg(long)]
    rest_credentials: bool,
    /// Serve the REST listener over https with a certificate made at start.
    #[arg(long)]
    rest_tls: bool,
    /// With --rest-tls: write the root certificate (PEM) clients must trust to FILE.
    #[arg(long, value_name = "FILE", requires = "rest_tls")]
    rest_root_cert: Option<PathBuf>,
    /// Serve the realtime listener over wss (and the playground over https)
    /// with a certificate made at start.
    #[arg(long)]
    realtime_tls: bool,
    /// With --realtime-tls: write the root certificate (PEM) clients must trust to FILE.
    #[arg(long, value_name = "FILE", requires = "realtime_tls")]
    realtime_root_cert: Option<PathBuf>,
    /// Most WebSockets waiting to log in (default 64); more get 503.
    #[arg(long, value_name = "N")]
    prelogin_connections: Option<usize>,
    /// Seconds a WebSocket may stay without logging in (default 10).
    #[arg(long, value_name = "SECS")]
    login_timeout: Option<u64>,
    /// Most logged-in sessions (default 1024).
    #[arg(long, value_name = "N")]
    sessions: Option<usize>,
    /// Serve the playground page (on a loopback listener only): chat with
    /// your bots in a browser as the human account `you`.
    #[arg(long)]
    playground: bool,
    /// Serve the HTTP admin endpoint (on a loopback address only): the
    /// service's admin calls for test clients in any language, guarded by
    /// a token printed at start.
    #[arg(long)]
    admin: bool,
    /// With --admin: the admin endpoint's address (default 127.0.0.1, a free port).
    #[arg(long, value_name = "ADDR", requires = "admin")]
    admin_listen: Option<SocketAddr>,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .init();
    match serve(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let mut message = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(cause) = source {
                message.push_str(": ");
                message.push_str(&cause.to_string());
                source = cause.source();
            }
            tracing::error!("{message}");
            ExitCode::FAILURE
        }
    }
}

/// Prints one line of the program's output (URLs and ids). A reader that
/// stopped reading (a closed pipe) does not stop the service.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

async fn serve(args: Args) -> Result<(), DevServerError> {
    let mut config = match &args.config {
        Some(path) => DevServerConfig::from_json_file(path)?,
        None => DevServerConfig::default(),
    };
    if let Some(listen) = args.listen {
        config.listen = listen;
    }
    config = config.with_env()?;
    if let Some(rest_listen) = args.rest_listen {
        config.rest_listen = rest_listen;
    }
    if args.rest_credentials {
        config.bot_rest_credentials = true;
    }
    if args.rest_tls {
        config.rest_tls = true;
    }
    if args.playground {
        config.playground = true;
    }
    if args.realtime_tls {
        config.realtime_tls = true;
    }
    if let Some(n) = args.prelogin_connections {
        config.limits.prelogin_connections = n;
    }
    if let Some(secs) = args.login_timeout {
        config.limits.login_timeout = std::time::Duration::from_secs(secs);
    }
    if let Some(n) = args.sessions {
        config.limits.sessions = n;
    }
    if args.admin {
        config.admin = true;
    }
    if let Some(addr) = args.admin_listen {
        config.admin_listen = addr;
    }
    // Registered before anything is printed: whoever reads the URLs may send
    // SIGINT or SIGTERM at once, and an unregistered handler would let it
    // kill us.
    let interrupted = interrupt_signal();
    let server = DevServer::start(config.clone()).await?;
    say!("realtime: {}", server.ws_url());
    let flag = if config.bot_rest_credentials {
        "on"
    } else {
        "off"
    };
    say!("rest: {} (BOT_REST_CREDENTIALS {flag})", server.rest_url());
    if let (Some(path), Some(pem)) = (&args.rest_root_cert, server.rest_root_certificate_pem()) {
        write_pem(path, &pem)?;
        say!("rest root certificate: {}", path.display());
    }
    if let (Some(path), Some(pem)) = (
        &args.realtime_root_cert,
        server.realtime_root_certificate_pem(),
    ) {
        write_pem(path, &pem)?;
        say!("realtime root certificate: {}", path.display());
    }
    if let Some(url) = server.playground_url() {
        say!("playground: {url}");
    }
    if let (Some(url), Some(token)) = (server.admin_url(), server.admin_token()) {
        say!("admin: {url}");
        // The program's output, for whoever started it: never a log line.
        say!("admin token: {token}");
    }
    for (kind, accounts) in [("bot", &config.bots), ("user", &config.users)] {
        for account in accounts {
            if let Some(id) = server.account_id(&account.name) {
                say!("{kind} {}: {id}", account.name);
            }
        }
    }
    for configured in &config.servers {
        let Some(server_id) = server.server_id(&configured.name) else {
            continue;
        };
        say!("server {}: {server_id}", configured.name);
        for channel in &configured.channels {
            if let Some(id) = server.channel_id(&server_id, &channel.name) {
                say!("  channel {}: {id}", channel.name);
            }
        }
        for file in server.files(&server_id) {
            say!("  file {}: {}", file.name, file.id);
        }
    }
    interrupted.await;
    tracing::info!("shutting down");
    server.shutdown().await;
    Ok(())
}

fn write_pem(path: &std::path::Path, pem: &str) -> Result<(), DevServerError> {
    std::fs::write(path, pem).map_err(|source| DevServerError::Write {
        path: path.display().to_string(),
        source,
    })
}

/// Resolves on Ctrl-C (SIGINT) or, on Unix, SIGTERM: a container runtime
/// or a process supervisor stops a service with SIGTERM, and its bots
/// should see the same 1001 close as at Ctrl-C rather than a dropped
/// socket. On Unix the handlers are installed when this is called, not when
/// the future is first polled.
fn interrupt_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    let signals = {
        use tokio::signal::unix::{signal, SignalKind};
        signal(SignalKind::interrupt())
            .and_then(|interrupt| Ok((interrupt, signal(SignalKind::terminate())?)))
            .ok()
    };
    async move {
        #[cfg(unix)]
        if let Some((mut interrupt, mut terminate)) = signals {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
            return;
        }
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!(error = %e, "cannot wait for Ctrl-C; stopping");
        }
    }
}
