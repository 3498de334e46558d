//! The keystore file on disk: creation, persistence, atomic replacement,
//! permissions, and refusal (without damage) of files it cannot read.
#![allow(clippy::unwrap_used)]

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use botlane::crypto::{wrap_channel_key, ChannelKey};
use botlane::keystore::{Keystore, KeystoreError};
use proptest::prelude::*;
use serde_json::Value;

fn store_path(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("keystore.json")
}

/// Writes `bytes` as a new owner-only file, the way a correct keystore is.
fn write_private(path: &Path, bytes: &[u8]) {
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    std::io::Write::write_all(&mut options.open(path).unwrap(), bytes).unwrap();
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

/// Every file in `dir` apart from the keystore itself.
fn leftovers(dir: &tempfile::TempDir) -> Vec<String> {
    fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != "keystore.json")
        .collect()
}

#[test]
fn first_run_creates_an_identity_and_reopening_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    let created = Keystore::open_or_create(&path).unwrap();
    assert!(path.is_file());
    let doc = read_json(&path);
    assert_eq!(doc["version"], 1);
    assert_eq!(doc["channels"], serde_json::json!({}));
    assert_eq!(
        doc["identity"]["public"],
        created.identity().public_key().to_base64()
    );
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));

    let reopened = Keystore::open_or_create(&path).unwrap();
    assert_eq!(
        reopened.identity().public_key(),
        created.identity().public_key()
    );
    // The reopened identity has the same secret: it can unwrap keys sent to the old one.
    let key = ChannelKey::generate().unwrap();
    let wrapped = wrap_channel_key(&key, &created.identity().public_key(), "c1").unwrap();
    let got = reopened
        .identity()
        .unwrap_channel_key(&wrapped, "c1")
        .unwrap();
    let wire = key.seal(b"ping", b"c1").unwrap();
    assert_eq!(got.open(&wire, b"c1").unwrap(), b"ping");
}

#[test]
fn relative_paths_work() {
    let dir = tempfile::tempdir().unwrap();
    let old = std::env::current_dir().unwrap();
    // Only this test changes the working directory, and restores it at once.
    std::env::set_current_dir(dir.path()).unwrap();
    let result = Keystore::open_or_create("keystore.json").and_then(|s| s.save());
    std::env::set_current_dir(old).unwrap();
    result.unwrap();
    assert!(store_path(&dir).is_file());
}

#[test]
fn channel_keys_persist_only_after_save() {
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    let mut store = Keystore::open_or_create(&path).unwrap();
    let key = ChannelKey::generate().unwrap();
    let wire = key.seal(b"hello", b"room-1").unwrap();
    store.insert_channel_key("room-1", key);

    assert!(Keystore::open_or_create(&path)
        .unwrap()
        .channel_key("room-1")
        .is_none());

    store.save().unwrap();
    let reopened = Keystore::open_or_create(&path).unwrap();
    assert_eq!(reopened.channel_ids().collect::<Vec<_>>(), ["room-1"]);
    assert_eq!(
        reopened
            .channel_key("room-1")
            .unwrap()
            .open(&wire, b"room-1")
            .unwrap(),
        b"hello"
    );

    store.remove_channel_key("room-1").unwrap();
    store.save().unwrap();
    assert!(Keystore::open_or_create(&path)
        .unwrap()
        .channel_key("room-1")
        .is_none());
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
}

#[cfg(unix)]
#[test]
fn files_are_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    let mut store = Keystore::open_or_create(&path).unwrap();
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    store.insert_channel_key("c", ChannelKey::generate().unwrap());
    store.save().unwrap();
    assert_eq!(mode(&path), 0o600);
}

#[cfg(unix)]
#[test]
fn save_replaces_the_file_instead_of_rewriting_it() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    let mut store = Keystore::open_or_create(&path).unwrap();
    let before = fs::read(&path).unwrap();
    let inode_before = fs::metadata(&path).unwrap().ino();
    // A reader that opened the old file keeps seeing it whole.
    let mut reader = fs::File::open(&path).unwrap();

    store.insert_channel_key("c", ChannelKey::generate().unwrap());
    store.save().unwrap();

    assert_ne!(fs::metadata(&path).unwrap().ino(), inode_before);
    let mut seen = Vec::new();
    reader.read_to_end(&mut seen).unwrap();
    assert_eq!(seen, before);
    assert_ne!(fs::read(&path).unwrap(), before);
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
}

#[test]
fn concurrent_first_runs_agree_on_one_identity() {
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    let keys: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| s.spawn(|| Keystore::open_or_create(&path).unwrap()))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap().identity().public_key())
            .collect()
    });
    assert!(keys.iter().all(|k| *k == keys[0]), "{keys:?}");
    assert_eq!(read_json(&path)["identity"]["public"], keys[0].to_base64());
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
}

/// Opens a keystore whose file holds `bytes` and checks the file is left
/// exactly as it was.
fn open_bad(bytes: &[u8]) -> KeystoreError {
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    write_private(&path, bytes);
    let err = Keystore::open_or_create(&path).unwrap_err();
    assert_eq!(fs::read(&path).unwrap(), bytes, "file changed after {err}");
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
    let message = err.to_string();
    assert!(
        message.contains(&path.display().to_string()),
        "message does not name the file: {message}"
    );
    assert!(message.starts_with(char::is_lowercase), "{message}");
    err
}

fn valid_bytes() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    let mut store = Keystore::open_or_create(&path).unwrap();
    store.insert_channel_key("c1", ChannelKey::generate().unwrap());
    store.save().unwrap();
    fs::read(path).unwrap()
}

#[test]
fn corrupt_file_is_reported_and_left_alone() {
    let err = open_bad(b"\x00\x01 this is not json");
    assert!(matches!(err, KeystoreError::NotJson { .. }), "{err:?}");
    assert!(err.to_string().contains("not valid json"));
}

#[test]
fn truncated_file_is_reported_and_left_alone() {
    let valid = valid_bytes();
    for cut in [0, 1, valid.len() / 3, valid.len() - 3] {
        let err = open_bad(&valid[..cut]);
        assert!(matches!(err, KeystoreError::Truncated { .. }), "{err:?}");
        assert!(err.to_string().contains("truncated"));
    }
}

#[test]
fn wrong_version_is_reported_and_left_alone() {
    let mut doc: Value = serde_json::from_slice(&valid_bytes()).unwrap();
    doc["version"] = 2.into();
    let err = open_bad(doc.to_string().as_bytes());
    assert!(
        matches!(err, KeystoreError::UnsupportedVersion { found: 2, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("version 2"));
}

#[test]
fn damaged_key_is_reported_and_left_alone() {
    let mut doc: Value = serde_json::from_slice(&valid_bytes()).unwrap();
    let secret = doc["identity"]["secret"].as_str().unwrap().to_owned();
    doc["channels"]["c1"] = "AAAA".into();
    let err = open_bad(doc.to_string().as_bytes());
    let message = err.to_string();
    assert!(message.contains("channels[\"c1\"]"), "{message}");
    assert!(!message.contains(&secret));
}

#[cfg(unix)]
#[test]
fn loose_permissions_are_refused_and_left_alone() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    let bytes = valid_bytes();
    write_private(&path, &bytes);
    fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
    let err = Keystore::open_or_create(&path).unwrap_err();
    assert!(
        matches!(err, KeystoreError::Permissions { mode: 0o644, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("0644"), "{err}");
    assert_eq!(fs::read(&path).unwrap(), bytes);
    assert_eq!(
        fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o644
    );
}

#[test]
fn a_directory_is_not_a_keystore() {
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    fs::create_dir(&path).unwrap();
    let err = Keystore::open_or_create(&path).unwrap_err();
    assert!(matches!(err, KeystoreError::NotAFile { .. }), "{err:?}");
    assert!(path.is_dir());
}

#[cfg(unix)]
#[test]
fn a_symlink_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.json");
    write_private(&real, &valid_bytes());
    let link = store_path(&dir);
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let err = Keystore::open_or_create(&link).unwrap_err();
    assert!(matches!(err, KeystoreError::NotAFile { .. }), "{err:?}");
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn save_into_a_vanished_directory_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    fs::create_dir(&sub).unwrap();
    let path = sub.join("keystore.json");
    let store = Keystore::open_or_create(&path).unwrap();
    fs::remove_dir_all(&sub).unwrap();
    let err = store.save().unwrap_err();
    assert!(matches!(err, KeystoreError::Io { .. }), "{err:?}");
    assert!(err
        .to_string()
        .starts_with("cannot create a temporary file for keystore"));
}

#[test]
fn debug_output_is_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    let mut store = Keystore::open_or_create(&path).unwrap();
    store.insert_channel_key("c1", ChannelKey::generate().unwrap());
    store.save().unwrap();
    let doc = read_json(&path);
    let shown = format!("{store:?} {store:#?}");
    assert!(shown.contains("[REDACTED]"), "{shown}");
    assert!(shown.contains("c1"));
    for secret in [&doc["identity"]["secret"], &doc["channels"]["c1"]] {
        assert!(!shown.contains(secret.as_str().unwrap()), "{shown}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn arbitrary_files_are_refused_without_damage(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        open_bad(&bytes);
    }

    #[test]
    fn arbitrary_text_files_are_refused_without_damage(text in "\\PC{0,200}") {
        open_bad(text.as_bytes());
    }
}
