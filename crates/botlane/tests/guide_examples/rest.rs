//! Guide, "Call the REST lane": `/files` lists what the service's HTTP API
//! returns.

use botlane::rest::Method;
use botlane::{
    BoxError, CommandContext, CommandDeclaration, CommandRegistry, DeclarationError, RestError,
    RestLane,
};
use serde::Deserialize;

/// The body of `GET /api/files/list` (the fields we use).
#[derive(Deserialize)]
struct FileList {
    files: Vec<FileEntry>,
}

#[derive(Deserialize)]
struct FileEntry {
    name: String,
    size: u64,
}

/// One line per file the bot can read, such as `notes.txt (17 bytes)`.
pub async fn list_files(rest: &RestLane) -> Result<String, RestError> {
    let list: FileList = rest.json(Method::GET, "/api/files/list", None).await?;
    let lines: Vec<String> = list
        .files
        .iter()
        .map(|f| format!("{} ({} bytes)", f.name, f.size))
        .collect();
    Ok(if lines.is_empty() {
        "no files".to_owned()
    } else {
        lines.join("\n")
    })
}

/// Registers `/files`, which answers with [`list_files`].
pub fn commands(registry: &mut CommandRegistry) -> Result<(), DeclarationError> {
    let files = CommandDeclaration::new("files", "List the files I can read");
    registry.register(files, |ctx: CommandContext| async move {
        let answer = match list_files(&ctx.rest()?).await {
            Ok(list) => list,
            // The service's REST lane is off (its default): say so.
            Err(RestError::Action(refused)) if refused.code == -7 => {
                "the REST lane is off on this service".to_owned()
            }
            Err(e) => return Err(BoxError::from(e)),
        };
        ctx.reply(&answer).await?;
        Ok(())
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use botlane::{Client, ClientOptions, RestError};
    use botlane_devserver::{DevServer, TestUser};

    use super::*;

    #[tokio::test]
    async fn files_lists_what_the_rest_lane_returns() {
        let server = DevServer::start(Default::default()).await.unwrap();
        let lobby = server.create_server("lobby");
        server
            .add_file(&lobby, "notes.txt", b"remember the milk".to_vec())
            .unwrap();
        let channel = server.create_channel(&lobby, "general").unwrap();
        let bot = server.add_bot("dicebot");
        let human = server.add_user("alice");
        server.add_member(&channel, &bot.id).unwrap();
        server.add_member(&channel, &human.id).unwrap();

        let dir = tempfile::tempdir().unwrap();
        let keystore = dir.path().join("dicebot.keystore");
        // The devserver's REST listener is plain http on loopback, which the
        // lane accepts for localhost, 127.0.0.1 and ::1 only.
        let options = ClientOptions::new(bot.token.clone(), keystore, server.ws_url())
            .rest_url(server.rest_url());
        let client = Client::new(options).unwrap();
        client.commands().update(commands).unwrap();
        client.login().await.unwrap();
        let alice = TestUser::connect(&server.ws_url(), &human.token)
            .await
            .unwrap();
        alice.open_channel(&channel).await.unwrap();
        let answer = || alice.wait_for_message(|m| m.author_id == bot.id, Duration::from_secs(10));

        // With the flag off, as on the real service by default:
        let Err(RestError::Action(refused)) = list_files(&client.rest()).await else {
            panic!("the flag is off, so the mint is refused");
        };
        assert_eq!((refused.opcode, refused.code), (638, -7));
        alice.send_text(&channel, "/files").await.unwrap();
        assert_eq!(
            answer().await.unwrap().content,
            "the REST lane is off on this service"
        );

        // The binary's --rest-credentials; in a test, at run time:
        server.set_rest_credentials(true);
        alice.send_text(&channel, "/files").await.unwrap();
        assert_eq!(answer().await.unwrap().content, "notes.txt (17 bytes)");
        assert_eq!(server.mint_count(), 1);
    }
}
