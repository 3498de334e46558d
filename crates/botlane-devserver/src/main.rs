//! `botlane-devserver`: runs the reference service until Ctrl-C.
//!
//! ```text
//! botlane-devserver [--listen ADDR] [--config FILE] [--playground]
//! ```
//!
//! Logs go to stderr (`RUST_LOG` filters them; default `info`); they name
//! opcodes and sizes, never tokens or payloads.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use botlane_devserver::{DevServer, DevServerConfig};
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
    /// Serve the playground page (on a loopback listener only): chat with
    /// your bots in a browser as the human account `you`.
    #[arg(long)]
    playground: bool,
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

#[allow(
    clippy::print_stdout,
    reason = "the URLs and ids are the program's output"
)]
async fn serve(args: Args) -> Result<(), botlane_devserver::DevServerError> {
    let mut config = match &args.config {
        Some(path) => DevServerConfig::from_json_file(path)?,
        None => DevServerConfig::default(),
    };
    if let Some(listen) = args.listen {
        config.listen = listen;
    }
    if args.playground {
        config.playground = true;
    }
    let server = DevServer::start(config.clone()).await?;
    println!("realtime: {}", server.ws_url());
    if let Some(url) = server.playground_url() {
        println!("playground: {url}");
    }
    for (kind, accounts) in [("bot", &config.bots), ("user", &config.users)] {
        for account in accounts {
            if let Some(id) = server.account_id(&account.name) {
                println!("{kind} {}: {id}", account.name);
            }
        }
    }
    for configured in &config.servers {
        let Some(server_id) = server.server_id(&configured.name) else {
            continue;
        };
        println!("server {}: {server_id}", configured.name);
        for channel in &configured.channels {
            if let Some(id) = server.channel_id(&server_id, &channel.name) {
                println!("  channel {}: {id}", channel.name);
            }
        }
    }
    if let Err(e) = tokio::signal::ctrl_c().await {
        tracing::error!(error = %e, "cannot wait for Ctrl-C; stopping");
    }
    tracing::info!("shutting down");
    server.shutdown().await;
    Ok(())
}
