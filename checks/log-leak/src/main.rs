//! Runs a bot against the in-process devserver with every log record of
//! every crate captured at TRACE (a `tracing` subscriber, which also writes
//! every span with its fields when it closes, and a `log` logger, both into
//! one buffer), a command's invocation among them, then looks for the bot
//! token, every
//! one-time secret, every REST credential, the devserver's admin token and
//! a token its admin endpoint handed out in that output. Exits 1,
//! naming the logging target of each offending line (secret masked), if
//! one is found; prints `N passed, N failed` either way.

use std::io::Write;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use botlane::rest::Method;
use botlane::{BoxError, Client, ClientOptions, CommandContext, CommandDeclaration};
use botlane_devserver::{DevServer, DevServerConfig, TestUser};
use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::fmt::MakeWriter;

type Failure = Box<dyn std::error::Error>;

/// Everything logged, by either path.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Capture {
    fn append(&self, bytes: &[u8]) {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend_from_slice(bytes);
    }

    fn text(&self) -> String {
        let bytes = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.append(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Capture {
    type Writer = Capture;
    fn make_writer(&'a self) -> Capture {
        self.clone()
    }
}

/// A `log` logger at TRACE: one line per record, `[log] LEVEL target: message`.
struct LogCapture(Capture);

impl log::Log for LogCapture {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, record: &log::Record<'_>) {
        let line = format!(
            "[log] {} {}: {}\n",
            record.level(),
            record.target(),
            record.args()
        );
        self.0.append(line.as_bytes());
    }
    fn flush(&self) {}
}

/// The target of a captured line: `[log] LEVEL target: …` or the fmt
/// layer's `… LEVEL target: …`.
fn target_of(line: &str) -> String {
    let words: Vec<&str> = line.split_whitespace().collect();
    let level = words
        .iter()
        .position(|w| ["TRACE", "DEBUG", "INFO", "WARN", "ERROR"].contains(w));
    level
        .and_then(|i| words.get(i + 1))
        .map(|t| t.trim_end_matches(':').to_owned())
        .unwrap_or_else(|| "(unknown target)".to_owned())
}

/// One bot's session; returns its token.
async fn session(server: &DevServer, debug: bool) -> Result<String, Failure> {
    let bot = server.add_bot(if debug { "leak-debug" } else { "leak-quiet" });
    let room = server.create_server("lobby");
    let file = server.add_file(&room, "notes.txt", b"hi".to_vec())?;
    let dir = tempfile::tempdir()?;
    let options = ClientOptions::new(bot.token.clone(), dir.path().join("k"), server.ws_url())
        .rest_url(server.rest_url())
        .debug(debug);
    let client = Client::new(options)?;
    // A command whose handler calls the lane: its invocation's span is
    // written with its fields, the mint and the call inside it.
    client.commands().register(
        CommandDeclaration::new("files", "Lists the files"),
        |ctx: CommandContext| async move {
            let rest = ctx.rest()?;
            rest.request(Method::GET, "/api/files/list", None).await?;
            ctx.reply("listed").await?;
            Ok::<(), BoxError>(())
        },
    )?;
    client.login().await?;
    let rest = client.rest();

    // Flag on: an invocation that mints, then list and download.
    server.set_rest_credentials(true);
    let human = server.add_user(if debug { "human-debug" } else { "human-quiet" });
    let channel = server.create_channel(&room, "general")?;
    server.add_member(&channel, &bot.id)?;
    server.add_member(&channel, &human.id)?;
    let alice = TestUser::connect(&server.ws_url(), &human.token).await?;
    alice.open_channel(&channel).await?;
    alice.send_text(&channel, "/files").await?;
    let from_bot = |m: &botlane_devserver::ReceivedMessage| m.author_id == bot.id;
    let answer = alice
        .wait_for_message(from_bot, Duration::from_secs(10))
        .await?;
    if answer.content != "listed" {
        return Err(format!("the invocation answered {:?}", answer.content).into());
    }
    rest.request(Method::GET, "/api/files/list", None).await?;
    let init = botlane::RequestInit::new().query("roomIds", &room);
    rest.binary(Method::GET, &format!("/api/files/{file}/download"), Some(init))
        .await?;
    // A revoked credential: 401, re-mint, retry.
    server.purge_rest_credentials(&bot.id)?;
    rest.request(Method::GET, "/api/files/list", None).await?;
    // Flag off: the mint is refused.
    server.purge_rest_credentials(&bot.id)?;
    server.set_rest_credentials(false);
    if rest.request(Method::GET, "/api/files/list", None).await.is_ok() {
        return Err("a REST call succeeded with the service flag off".into());
    }
    server.set_rest_credentials(true);
    rest.request(Method::GET, "/api/files/list", None).await?;
    client.shutdown();
    Ok(bot.token)
}

/// One request to the admin endpoint with `bearer` as the token; the answer.
async fn admin_call(
    server: &DevServer,
    bearer: &str,
    route: &str,
    body: &str,
) -> Result<String, Failure> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = server.admin_addr().ok_or("the admin endpoint is off")?;
    let mut tcp = tokio::net::TcpStream::connect(addr).await?;
    let request = format!(
        "POST /admin/{route} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {bearer}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    tcp.write_all(request.as_bytes()).await?;
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), tcp.read_to_end(&mut answer)).await??;
    Ok(String::from_utf8_lossy(&answer).into_owned())
}

/// Runs the sessions; returns every secret by name.
async fn run() -> Result<Vec<(String, String)>, Failure> {
    let config = DevServerConfig::default()
        .bot_rest_credentials(true)
        .admin(true);
    let server = DevServer::start(config).await?;
    let mut named = Vec::new();
    for debug in [true, false] {
        let token = session(&server, debug).await?;
        named.push(("the bot token".to_owned(), token));
    }
    // Let the service's side of the closes be logged too.
    tokio::time::sleep(Duration::from_millis(200)).await;

    for r in server.http_requests() {
        if r.path == "/auth/verify-session" {
            let body: serde_json::Value = serde_json::from_slice(&r.body)?;
            if let Some(secret) = body["secret"].as_str() {
                named.push(("a one-time secret".to_owned(), secret.to_owned()));
            }
        }
        if let Some(v) = r.header("verification") {
            named.push(("a credential".to_owned(), v.to_owned()));
        }
    }
    // The admin endpoint: a call with the token (it answers with a login
    // token), one with a wrong token, a purge.
    let admin = server.admin_token().ok_or("no admin token")?;
    let answer = admin_call(&server, &admin, "add_user", r#"{"name":"leak"}"#).await?;
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
    let user: serde_json::Value = serde_json::from_str(body)?;
    let user_token = user["token"].as_str().ok_or("add_user gave no token")?;
    named.push(("a token from the admin endpoint".to_owned(), user_token.to_owned()));
    let wrong = format!("{admin}-wrong");
    let refused = admin_call(&server, &wrong, "add_user", r#"{"name":"x"}"#).await?;
    if !refused.starts_with("HTTP/1.1 401") {
        return Err("a wrong admin token was not refused".into());
    }
    admin_call(&server, &admin, "purge_rest_credentials", r#"{"bot_id":"x"}"#).await?;
    named.push(("the admin token".to_owned(), admin));
    named.sort();
    named.dedup();
    server.shutdown().await;
    Ok(named)
}

fn main() -> ExitCode {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_span_events(FmtSpan::CLOSE)
        .with_writer(capture.clone())
        .finish();
    if tracing::subscriber::set_global_default(subscriber).is_err()
        || log::set_boxed_logger(Box::new(LogCapture(capture.clone()))).is_err()
    {
        eprintln!("log-leak: could not install the loggers");
        return ExitCode::FAILURE;
    }
    log::set_max_level(log::LevelFilter::Trace);
    assert_eq!(
        log::STATIC_MAX_LEVEL,
        log::LevelFilter::Trace,
        "built without a static cap"
    );

    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("log-leak: no runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let named = match runtime.block_on(run()) {
        Ok(named) => named,
        Err(e) => {
            eprintln!("log-leak: the session failed: {e}");
            println!("0 passed, 1 failed");
            return ExitCode::FAILURE;
        }
    };
    drop(runtime);
    let logs = capture.text();
    let (secrets, credentials) = (
        named.iter().filter(|(w, _)| w == "a one-time secret").count(),
        named.iter().filter(|(w, _)| w == "a credential").count(),
    );
    let mut sane = vec![];
    if secrets < 3 || credentials < 2 {
        sane.push(format!("only {secrets} secrets and {credentials} credentials harvested"));
    }
    if !logs.contains("[log] ") || !logs.contains(" botlane") {
        sane.push("the capture misses the `log` records or botlane's own events".to_owned());
    }
    if !logs.contains("invocation{command=\"files\"") {
        sane.push("the capture misses the invocation spans' fields".to_owned());
    }
    let mut failed = 0;
    for (what, secret) in &named {
        let hits: Vec<&str> = logs.lines().filter(|l| l.contains(secret.as_str())).collect();
        if hits.is_empty() {
            continue;
        }
        failed += 1;
        let mut targets: Vec<String> = hits.iter().map(|l| target_of(l)).collect();
        targets.sort();
        targets.dedup();
        eprintln!(
            "log-leak: {what} appears in {} log line(s), logged by: {}",
            hits.len(),
            targets.join(", ")
        );
        for line in hits.iter().take(3) {
            let masked = line.replace(secret.as_str(), "<SECRET>");
            let shown: String = masked.chars().take(300).collect();
            eprintln!("    {shown}");
        }
    }
    for problem in &sane {
        eprintln!("log-leak: {problem}");
    }
    let total = named.len() + 1;
    let failed = failed + usize::from(!sane.is_empty());
    println!(
        "log-leak: {} secrets checked in {} bytes of TRACE output",
        named.len(),
        logs.len()
    );
    println!("{} passed, {} failed", total - failed, failed);
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
