//! `dicebot`: a standing bot. It logs in to the service, prints one
//! readiness line, answers `/roll`, `/flip`, `/echo`, `/files` and
//! `/help` until it gets SIGINT (Ctrl-C) or SIGTERM, then closes its
//! session (its keystore written) and prints `dicebot stopped`. `/files`
//! calls the service's REST lane, at `--rest-url`. Given owners
//! (`--owner`), it also has `/drill`, which panics on purpose for them (and
//! is refused to everyone else), to rehearse the alert on failing handlers.
//!
//! ```text
//! dicebot [--url URL] [--rest-url URL] [--keystore FILE] [--token-file FILE]
//!         [--heartbeat-interval SECONDS] [--owner USER_ID]... [--metrics ADDR]
//! ```
//!
//! | setting | flag | environment | default |
//! |---|---|---|---|
//! | bot token | `--token-file FILE` | `BOTLANE_TOKEN` | none: one of them is required |
//! | realtime URL | `--url` | `BOTLANE_URL` | `ws://127.0.0.1:7700/ws` |
//! | REST URL | `--rest-url` | `BOTLANE_REST_URL` | `http://127.0.0.1:7701` |
//! | keystore | `--keystore` | `BOTLANE_KEYSTORE` | `dicebot.keystore` in the current directory |
//! | heartbeat interval, whole seconds, 1 to 29 | `--heartbeat-interval` | `BOTLANE_HEARTBEAT_INTERVAL` | 15 |
//! | the bot's owners (`/drill`) | `--owner USER_ID`, repeated | `BOTLANE_OWNERS`, comma-separated | none |
//! | metrics and probes address | `--metrics ADDR` | `BOTLANE_METRICS` | none: not served |
//!
//! A flag wins over the environment. The token has no flag of its own: a
//! value on the command line is visible to every user of the machine
//! (`ps`) and stays in shell history, so it comes from the environment or
//! from a file. The defaults are the addresses of
//! `examples/dicebot/devserver.json`. The heartbeat interval is for a
//! service that closes quiet sessions sooner than botlane's 15 s heartbeat
//! allows; it stays under the client's 30 s idle timeout.
//!
//! With `--metrics ADDR` (an IP address and port; port 0 lets the system
//! choose) the bot serves `GET /metrics` (Prometheus), `/healthz` and
//! `/readyz` there from before its login on (`src/probes.rs`); bind it to
//! an address only your metrics stack and orchestrator reach.
//!
//! stdout carries `dicebot metrics on http://<addr>` once that listener is
//! up, `dicebot ready: bot <id> in <n> channel(s)` once logged in and
//! `dicebot stopped` after a clean stop; logs go to
//! stderr (`RUST_LOG`, default `info`) and name commands and error kinds,
//! never what anybody wrote. Exit status 0 after a signal, 1 when it cannot
//! start: a bad setting or keystore, its token refused (at once), or a
//! service still unreachable or busy after botlane's login deadline of a
//! minute, during which the login tries again (a `login attempt failed`
//! warning each time; a signal stops it).

mod probes;

use std::error::Error;
use std::future::Future;
use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use botlane::{Client, ClientOptions, Event, EventRecvError, Events};
use clap::Parser;
use tracing_subscriber::EnvFilter;

/// The realtime URL when neither `--url` nor `BOTLANE_URL` is given.
const DEFAULT_URL: &str = "ws://127.0.0.1:7700/ws";
/// The REST URL when neither `--rest-url` nor `BOTLANE_REST_URL` is given.
const DEFAULT_REST_URL: &str = "http://127.0.0.1:7701";
/// The keystore when neither `--keystore` nor `BOTLANE_KEYSTORE` is given.
const DEFAULT_KEYSTORE: &str = "dicebot.keystore";
/// The longest heartbeat interval, in seconds: the client's idle timeout
/// (30 s) must stay above it.
const MAX_HEARTBEAT_SECS: u64 = 29;

/// A dice bot for botlane: /roll, /flip, /echo, /files and /help.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Realtime URL of the service [env: BOTLANE_URL] [default: ws://127.0.0.1:7700/ws]
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// REST URL of the service [env: BOTLANE_REST_URL] [default: http://127.0.0.1:7701]
    #[arg(long, value_name = "URL")]
    rest_url: Option<String>,
    /// The bot's keystore file, made if missing [env: BOTLANE_KEYSTORE] [default: dicebot.keystore]
    #[arg(long, value_name = "FILE")]
    keystore: Option<PathBuf>,
    /// Read the bot token from FILE (else from BOTLANE_TOKEN)
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Seconds between heartbeats, 1 to 29 [env: BOTLANE_HEARTBEAT_INTERVAL] [default: 15]
    #[arg(long, value_name = "SECONDS")]
    heartbeat_interval: Option<String>,
    /// A user id allowed to run /drill; repeat for more [env: BOTLANE_OWNERS, comma-separated]
    #[arg(long = "owner", value_name = "USER_ID")]
    owners: Vec<String>,
    /// Serve /metrics, /healthz and /readyz on this IP address and port [env: BOTLANE_METRICS]
    #[arg(long, value_name = "ADDR")]
    metrics: Option<String>,
}

/// What the bot runs with, flags and environment resolved.
struct Settings {
    token: String,
    url: String,
    rest_url: String,
    keystore: PathBuf,
    /// `None`: the client's default.
    heartbeat_interval: Option<Duration>,
    owners: Vec<String>,
    /// `None`: no metrics listener.
    metrics: Option<SocketAddr>,
}

/// Why the settings cannot be resolved.
#[derive(Debug, thiserror::Error)]
enum SettingsError {
    #[error(
        "no bot token: set BOTLANE_TOKEN or pass --token-file FILE \
         (the devserver's dev token is in examples/dicebot/devserver.json)"
    )]
    NoToken,
    #[error("cannot read the token file {}", path.display())]
    TokenFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the token file {} is empty", path.display())]
    EmptyToken { path: PathBuf },
    #[error(
        "the heartbeat interval {value:?} is not a whole number of seconds from 1 to {MAX_HEARTBEAT_SECS}"
    )]
    HeartbeatInterval { value: String },
    #[error("the metrics address {value:?} is not an IP address and port, such as 127.0.0.1:9100")]
    MetricsAddress { value: String },
}

impl Settings {
    /// Flags first, then the environment (`env` reads one variable), then
    /// the defaults.
    fn resolve(args: Args, env: impl Fn(&str) -> Option<String>) -> Result<Self, SettingsError> {
        let token = match &args.token_file {
            Some(path) => {
                let text =
                    std::fs::read_to_string(path).map_err(|source| SettingsError::TokenFile {
                        path: path.clone(),
                        source,
                    })?;
                let token = text.trim();
                if token.is_empty() {
                    return Err(SettingsError::EmptyToken { path: path.clone() });
                }
                token.to_owned()
            }
            None => env("BOTLANE_TOKEN")
                .filter(|t| !t.trim().is_empty())
                .ok_or(SettingsError::NoToken)?,
        };
        let or_env = |flag: Option<String>, var: &str, default: &str| {
            flag.or_else(|| env(var).filter(|v| !v.is_empty()))
                .unwrap_or_else(|| default.to_owned())
        };
        Ok(Self {
            token,
            url: or_env(args.url, "BOTLANE_URL", DEFAULT_URL),
            rest_url: or_env(args.rest_url, "BOTLANE_REST_URL", DEFAULT_REST_URL),
            keystore: args
                .keystore
                .or_else(|| {
                    env("BOTLANE_KEYSTORE")
                        .filter(|v| !v.is_empty())
                        .map(PathBuf::from)
                })
                .unwrap_or_else(|| PathBuf::from(DEFAULT_KEYSTORE)),
            heartbeat_interval: args
                .heartbeat_interval
                .or_else(|| env("BOTLANE_HEARTBEAT_INTERVAL").filter(|v| !v.is_empty()))
                .map(|value| match value.parse::<u64>() {
                    Ok(secs @ 1..=MAX_HEARTBEAT_SECS) => Ok(Duration::from_secs(secs)),
                    _ => Err(SettingsError::HeartbeatInterval { value }),
                })
                .transpose()?,
            owners: if args.owners.is_empty() {
                env("BOTLANE_OWNERS")
                    .map(|list| {
                        list.split(',')
                            .map(str::trim)
                            .filter(|id| !id.is_empty())
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default()
            } else {
                args.owners
            },
            metrics: args
                .metrics
                .or_else(|| env("BOTLANE_METRICS").filter(|v| !v.is_empty()))
                .map(|value| {
                    value
                        .parse::<SocketAddr>()
                        .map_err(|_| SettingsError::MetricsAddress { value })
                })
                .transpose()?,
        })
    }
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
    match run(args).await {
        Ok(code) => code,
        Err(e) => {
            tracing::error!("{}", chain(e.as_ref()));
            ExitCode::FAILURE
        }
    }
}

/// An error and its sources, joined by `: `.
fn chain(e: &(dyn Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// One line on stdout. A reader that went away does not stop the bot.
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}

async fn run(args: Args) -> Result<ExitCode, Box<dyn Error>> {
    let settings = Settings::resolve(args, |var| std::env::var(var).ok())?;
    // Installed before anything else: a signal during login must stop the
    // bot cleanly, not kill it.
    let stop = stop_signal()?;
    tokio::pin!(stop);

    // Before the client logs in, which resolves its metric handles.
    let exposition = match settings.metrics {
        Some(addr) => Some((addr, probes::install_recorder()?)),
        None => None,
    };
    let has_owners = !settings.owners.is_empty();
    let mut options = ClientOptions::new(settings.token, &settings.keystore, settings.url)
        .rest_url(settings.rest_url)
        .owners(settings.owners);
    if let Some(interval) = settings.heartbeat_interval {
        options = options.heartbeat_interval(interval);
    }
    let client = Client::new(options)?;
    client.commands().update(dicebot::commands)?;
    if has_owners {
        client.commands().update(dicebot::drill)?;
    }
    if let Some((addr, exposition)) = exposition {
        let bound = probes::serve(addr, exposition, client.downgrade()).await?;
        say(&format!("dicebot metrics on http://{bound}"));
    }
    let events = client.events();
    tokio::select! {
        login = client.login() => login?,
        signal = &mut stop => {
            tracing::info!(signal, "stopping before login completed");
            client.close().await?;
            return Ok(ExitCode::SUCCESS);
        }
    }
    let id = client.bot_id().unwrap_or_default();
    let channels = client.channels().len();
    let plural = if channels == 1 { "" } else { "s" };
    say(&format!(
        "dicebot ready: bot {id} in {channels} channel{plural}"
    ));

    let code = tokio::select! {
        signal = &mut stop => {
            tracing::info!(signal, "stopping");
            ExitCode::SUCCESS
        }
        () = watch(events) => ExitCode::FAILURE,
    };
    client.close().await?;
    say("dicebot stopped");
    Ok(code)
}

/// Logs what goes wrong, by command and kind only (an error's text may
/// quote what somebody wrote); returns when the client gives up (the
/// service refused its token) or stops.
async fn watch(mut events: Events) {
    loop {
        match events.recv().await {
            Ok(Event::CommandError(error)) => {
                tracing::warn!(command = %error.command, kind = ?error.reason, "command failed");
            }
            Ok(Event::Disconnected {
                will_reconnect: true,
                ..
            }) => tracing::warn!("disconnected; reconnecting"),
            Ok(Event::Disconnected {
                reason,
                will_reconnect: false,
            }) => {
                tracing::error!(%reason, "disconnected for good");
                return;
            }
            Ok(Event::Reconnected) => tracing::info!("reconnected"),
            Ok(_) => {}
            Err(EventRecvError::Lagged(missed)) => {
                tracing::warn!(missed, "fell behind the client's events");
            }
            Err(EventRecvError::Closed) => return,
        }
    }
}

/// Resolves with the signal's name on SIGINT or SIGTERM (Ctrl-C elsewhere).
/// The handlers are installed when this is called.
fn stop_signal() -> std::io::Result<impl Future<Output = &'static str>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut interrupt = signal(SignalKind::interrupt())?;
        let mut terminate = signal(SignalKind::terminate())?;
        Ok(async move {
            tokio::select! {
                _ = interrupt.recv() => "SIGINT",
                _ = terminate.recv() => "SIGTERM",
            }
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
            "Ctrl-C"
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Args {
        Args::parse_from(std::iter::once("dicebot").chain(list.iter().copied()))
    }

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn defaults_fill_what_neither_flags_nor_environment_give() {
        let s = Settings::resolve(args(&[]), env(&[("BOTLANE_TOKEN", "t")])).unwrap();
        assert_eq!(s.token, "t");
        assert_eq!(s.url, DEFAULT_URL);
        assert_eq!(s.rest_url, DEFAULT_REST_URL);
        assert_eq!(s.keystore, PathBuf::from(DEFAULT_KEYSTORE));
        assert_eq!(s.heartbeat_interval, None);
        assert!(s.owners.is_empty());
        assert_eq!(s.metrics, None);
    }

    #[test]
    fn owners_and_the_metrics_address_come_from_flags_or_the_environment() {
        let vars = &[
            ("BOTLANE_TOKEN", "t"),
            ("BOTLANE_OWNERS", "u-1, u-2,,"),
            ("BOTLANE_METRICS", "127.0.0.1:9100"),
        ];
        let s = Settings::resolve(args(&[]), env(vars)).unwrap();
        assert_eq!(s.owners, ["u-1", "u-2"]);
        assert_eq!(s.metrics, Some(SocketAddr::from(([127, 0, 0, 1], 9100))));
        let flags = args(&["--owner", "u-3", "--owner", "u-4", "--metrics", "[::1]:0"]);
        let s = Settings::resolve(flags, env(vars)).unwrap();
        assert_eq!(s.owners, ["u-3", "u-4"]);
        assert_eq!(s.metrics, Some("[::1]:0".parse().unwrap()));
        for bad in ["9100", "localhost:9100", "127.0.0.1"] {
            let err = Settings::resolve(args(&["--metrics", bad]), env(vars))
                .err()
                .unwrap();
            assert_eq!(
                err.to_string(),
                format!(
                    "the metrics address {bad:?} is not an IP address and port, such as 127.0.0.1:9100"
                )
            );
        }
    }

    #[test]
    fn the_heartbeat_interval_is_whole_seconds_under_the_idle_timeout() {
        let token = &[("BOTLANE_TOKEN", "t"), ("BOTLANE_HEARTBEAT_INTERVAL", "3")];
        let s = Settings::resolve(args(&[]), env(token)).unwrap();
        assert_eq!(s.heartbeat_interval, Some(Duration::from_secs(3)));
        let s = Settings::resolve(args(&["--heartbeat-interval", "29"]), env(token)).unwrap();
        assert_eq!(s.heartbeat_interval, Some(Duration::from_secs(29)));
        for bad in ["0", "30", "1.5", "-1", "2s", " 3"] {
            let flag = format!("--heartbeat-interval={bad}");
            let err = Settings::resolve(args(&[&flag]), env(token)).err().unwrap();
            assert_eq!(
                err.to_string(),
                format!(
                    "the heartbeat interval {bad:?} is not a whole number of seconds from 1 to 29"
                )
            );
        }
        // Whatever this accepts, the client accepts too.
        let options = ClientOptions::new("t", "k", DEFAULT_URL)
            .heartbeat_interval(Duration::from_secs(MAX_HEARTBEAT_SECS));
        assert!(Client::new(options).is_ok());
    }

    #[test]
    fn flags_win_over_the_environment() {
        let vars = &[
            ("BOTLANE_TOKEN", "t"),
            ("BOTLANE_URL", "ws://localhost:1/ws"),
            ("BOTLANE_REST_URL", "http://localhost:2"),
            ("BOTLANE_KEYSTORE", "env.keystore"),
        ];
        let s = Settings::resolve(args(&[]), env(vars)).unwrap();
        assert_eq!(
            (s.url.as_str(), s.rest_url.as_str()),
            ("ws://localhost:1/ws", "http://localhost:2")
        );
        assert_eq!(s.keystore, PathBuf::from("env.keystore"));
        let flags = args(&[
            "--url",
            "ws://[::1]:3/ws",
            "--rest-url",
            "http://[::1]:4",
            "--keystore",
            "flag.keystore",
        ]);
        let s = Settings::resolve(flags, env(vars)).unwrap();
        assert_eq!(
            (s.url.as_str(), s.rest_url.as_str()),
            ("ws://[::1]:3/ws", "http://[::1]:4")
        );
        assert_eq!(s.keystore, PathBuf::from("flag.keystore"));
    }

    #[test]
    fn the_token_comes_from_a_file_or_the_environment_never_a_flag() {
        let err = Settings::resolve(args(&[]), env(&[])).err().unwrap();
        assert!(
            err.to_string()
                .starts_with("no bot token: set BOTLANE_TOKEN"),
            "{err}"
        );
        let blank = Settings::resolve(args(&[]), env(&[("BOTLANE_TOKEN", " ")]));
        assert!(matches!(blank, Err(SettingsError::NoToken)));
        assert!(Args::try_parse_from(["dicebot", "--token", "t"]).is_err());

        let dir = std::env::temp_dir().join(format!("dicebot-token-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("token");
        std::fs::write(&file, "from-file\n").unwrap();
        let path = file.to_str().unwrap();
        let s = Settings::resolve(
            args(&["--token-file", path]),
            env(&[("BOTLANE_TOKEN", "from-env")]),
        )
        .unwrap();
        assert_eq!(s.token, "from-file");

        std::fs::write(&file, "\n").unwrap();
        let err = Settings::resolve(args(&["--token-file", path]), env(&[]))
            .err()
            .unwrap();
        assert_eq!(err.to_string(), format!("the token file {path} is empty"));
        std::fs::remove_file(&file).unwrap();
        let err = Settings::resolve(args(&["--token-file", path]), env(&[]))
            .err()
            .unwrap();
        assert_eq!(
            err.to_string(),
            format!("cannot read the token file {path}")
        );
        assert!(err.source().is_some());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
