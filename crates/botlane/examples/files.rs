//! The REST lane: a bot lists and downloads files through `client.rest()`
//! against an embedded devserver with the server flag
//! `BOT_REST_CREDENTIALS` on, then shows the error a bot gets while the
//! flag is off, which is the service's default.
//!
//! Run it with `cargo run --example files`.

// The transcript on stdout is this example's whole point.
#![allow(clippy::print_stdout)]

use std::error::Error;

use botlane::rest::Method;
use botlane::{Client, ClientOptions, RequestInit, RestError};
use botlane_devserver::{DevServer, DevServerConfig};
use serde::Deserialize;

/// The body of `GET /api/files/list`.
#[derive(Deserialize)]
struct FileList {
    files: Vec<FileEntry>,
}

#[derive(Deserialize)]
struct FileEntry {
    id: String,
    name: String,
    size: u64,
    room_id: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    println!("botlane REST lane: files\n");
    let server = DevServer::start(DevServerConfig::default().bot_rest_credentials(true)).await?;
    let bot = server.add_bot("filebot");
    let lobby = server.create_server("lobby");
    server.add_file(&lobby, "notes.txt", b"remember the milk".to_vec())?;
    server.add_file(&lobby, "plan.md", b"# plan\n1. ship\n".to_vec())?;
    println!("  devserver  {} (realtime)", server.ws_url());
    println!(
        "             {} (REST, flag BOT_REST_CREDENTIALS on)\n",
        server.rest_url()
    );

    let dir = tempfile::tempdir()?;
    let options = |keystore: &str| {
        ClientOptions::new(
            bot.token.clone(),
            dir.path().join(keystore),
            server.ws_url(),
        )
        .rest_url(server.rest_url())
    };
    let client = Client::new(options("filebot.keystore"))?;
    client.login().await?;
    let rest = client.rest();

    // The first call mints the credential (opcode 638, then the exchange);
    // the later ones reuse it.
    let list: FileList = rest.json(Method::GET, "/api/files/list", None).await?;
    println!("GET /api/files/list → {} files", list.files.len());
    for entry in &list.files {
        let path = format!("/api/files/{}/download", entry.id);
        let init = RequestInit::new().query("roomIds", &entry.room_id);
        let file = rest.binary(Method::GET, &path, Some(init)).await?;
        println!(
            "  {:<10} {:>3} bytes  X-File-IV {}  {:?}",
            entry.name,
            entry.size,
            file.header("X-File-IV").unwrap_or("-"),
            String::from_utf8_lossy(&file.bytes)
        );
    }
    // `binary` reads a body whole, up to `rest_binary_limit` (100 MiB by
    // default); `request` hands back the response unread, to stream it.
    if let Some(first) = list.files.first() {
        let path = format!("/api/files/{}/download", first.id);
        let init = RequestInit::new().query("roomIds", &first.room_id);
        let mut response = rest.request(Method::GET, &path, Some(init)).await?;
        let mut streamed = 0;
        while let Some(chunk) = response.chunk().await? {
            streamed += chunk.len();
        }
        println!("  streamed {} again: {streamed} bytes", first.name);
    }
    println!(
        "  (the service minted {} credential for {} requests)\n",
        server.mint_count(),
        server.http_requests().len() - 1
    );

    // Routes off the bot-rest allowlist are refused by the service.
    if let Err(e) = rest.request(Method::GET, "/api/emoji/rooms", None).await {
        println!("GET /api/emoji/rooms → {e}\n");
    }

    // With the flag off (the default), the first call of a bot fails like
    // this; nothing is wrong with the bot.
    server.set_rest_credentials(false);
    client.shutdown();
    let fresh = Client::new(options("filebot-2.keystore"))?;
    fresh.login().await?;
    match fresh
        .rest()
        .request(Method::GET, "/api/files/list", None)
        .await
    {
        Err(RestError::Action(e)) => {
            println!("with the flag off:");
            println!("  error   {e}");
            println!("  opcode  {}, code {}", e.opcode, e.code);
        }
        other => println!("unexpected: {other:?}"),
    }
    fresh.shutdown();
    server.shutdown().await;
    Ok(())
}
