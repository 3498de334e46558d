//! The files the `/api/files` routes serve.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use uuid::Uuid;

use super::credentials::{random_value, RestState};

/// Random bytes in a file's IV.
const IV_BYTES: usize = 12;

/// A file the `/api/files` routes serve.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoredFile {
    /// Its id (a UUID v4 unless configured).
    pub id: String,
    /// The server (room) holding it.
    pub server_id: String,
    /// Its name.
    pub name: String,
    /// Its content, served as is by the download route.
    pub bytes: Vec<u8>,
    /// Its IV, base64 (standard alphabet, padded), sent in `X-File-IV`.
    pub iv: String,
}

impl RestState {
    /// Stores a file with a fresh IV; `None` if the random source fails.
    pub(crate) fn add_file(
        &mut self,
        server_id: &str,
        name: &str,
        bytes: Vec<u8>,
        id: Option<&str>,
    ) -> Option<String> {
        let iv = STANDARD.encode(random_value(IV_BYTES)?);
        let id = id.map_or_else(|| Uuid::new_v4().hyphenated().to_string(), str::to_owned);
        self.files.push(StoredFile {
            id: id.clone(),
            server_id: server_id.to_owned(),
            name: name.to_owned(),
            bytes,
            iv,
        });
        Some(id)
    }

    pub(crate) fn file(&self, file_id: &str) -> Option<&StoredFile> {
        self.files.iter().find(|f| f.id == file_id)
    }
}
